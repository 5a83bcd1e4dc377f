// Command benchtxns creates N transactional ids on a real Kafka 4.x broker, fast,
// for scripts/bench-cli and scripts/bench-scale: per id one InitProducerId and
// one transactional Produce (v12, where the broker adds the partition to the
// transaction itself, KIP-890 part 2) of one record, spread over the topic's
// partitions. With -open-every K, id number i stays open (Ongoing) when i is a
// multiple of K and every other id is committed (EndTxn), which is what a week
// of Flink checkpoints leaves behind: -open-every 100 gives 1 % Ongoing and
// 99 % CompleteCommit. The default, -open-every 1, leaves every transaction
// open until its timeout. Id numbers are global, so a second run with -from
// adds to the first and keeps the same mix.
//
//	go run ./scripts/benchtxns -bootstrap 127.0.0.1:9092 -n 10000 -prefix bench -topic bench
//	go run ./scripts/benchtxns -bootstrap 127.0.0.1:9092 -n 90000 -from 10000 -open-every 100
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kversion"
)

type config struct {
	bootstrap  string
	n, from    int
	prefix     string
	topic      string
	partitions int32
	timeoutMs  int32
	parallel   int
	openEvery  int
	deadline   time.Duration
	// jobs and subtasks, when set, name ids as Flink sinks do:
	// <prefix><job>-<subtask>-<checkpoint>, i spread over jobs × subtasks.
	jobs, subtasks int
}

func main() {
	var c config
	var partitions, timeoutMs int
	flag.StringVar(&c.bootstrap, "bootstrap", "127.0.0.1:9092", "broker to start from")
	flag.IntVar(&c.n, "n", 1000, "how many transactional ids to create")
	flag.IntVar(&c.from, "from", 0, "first id number (to add ids to an earlier run)")
	flag.StringVar(&c.prefix, "prefix", "bench", "ids are <prefix>-<number>")
	flag.StringVar(&c.topic, "topic", "bench", "topic written to (created when missing)")
	flag.IntVar(&partitions, "partitions", 12, "partitions of the topic when it is created")
	flag.IntVar(&timeoutMs, "txn-timeout-ms", 900000, "transaction.timeout.ms of every id (at most the broker's transaction.max.timeout.ms)")
	flag.IntVar(&c.parallel, "parallel", 64, "ids in flight at once")
	flag.IntVar(&c.openEvery, "open-every", 1, "id number i stays open when i is a multiple of this; the others are committed (1: all open)")
	flag.DurationVar(&c.deadline, "timeout", time.Hour, "give up after this long")
	flag.IntVar(&c.jobs, "flink-jobs", 0, "name ids as this many Flink sinks do, <prefix><job>-<subtask>-<checkpoint> (0: <prefix>-<number>)")
	flag.IntVar(&c.subtasks, "flink-parallelism", 4, "subtasks per Flink job, with -flink-jobs")
	flag.Parse()
	c.partitions, c.timeoutMs = int32(partitions), int32(timeoutMs)
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "benchtxns: unexpected argument %q\n", flag.Arg(0))
		os.Exit(2)
	}
	if err := c.check(); err != nil {
		fmt.Fprintln(os.Stderr, "benchtxns:", err)
		os.Exit(2)
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "benchtxns:", err)
		os.Exit(1)
	}
}

func (c config) check() error {
	switch {
	case c.n < 0 || c.from < 0:
		return errors.New("-n and -from must not be negative")
	case c.parallel < 1:
		return errors.New("-parallel must be at least 1")
	case c.openEvery < 1:
		return errors.New("-open-every must be at least 1")
	case c.partitions < 1 || c.timeoutMs < 1:
		return errors.New("-partitions and -txn-timeout-ms must be positive")
	case c.jobs < 0 || c.jobs > 0 && c.subtasks < 1:
		return errors.New("-flink-jobs must not be negative, and -flink-parallelism must be at least 1")
	}
	return nil
}

func run(c config) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, c.deadline)
	defer cancel()
	// Produce v13 names topics by id; v12 still by name and already adds the
	// partition to the transaction implicitly.
	versions := kversion.Stable()
	versions.SetMaxKeyVersion(0, 12)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.bootstrap), kgo.MaxVersions(versions))
	if err != nil {
		return err
	}
	defer cl.Close()
	leaders, err := topicLeaders(ctx, kadm.NewClient(cl), c.topic, c.partitions)
	if err != nil {
		return err
	}

	start := time.Now()
	var opened, committed atomic.Int64
	stopProgress := progress(start, c.n, &opened, &committed)
	work := make(chan int)
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for range c.parallel {
		wg.Go(func() {
			for i := range work {
				id := c.id(i)
				p := int32(i % len(leaders))
				commit := i%c.openEvery != 0
				if err := oneID(ctx, cl, id, c.topic, p, leaders[p], c.timeoutMs, commit); err != nil {
					once.Do(func() { first = fmt.Errorf("%s: %w", id, err) })
					cancel()
					return
				}
				if commit {
					committed.Add(1)
				} else {
					opened.Add(1)
				}
			}
		})
	}
	feed(ctx, work, c.from, c.n)
	wg.Wait()
	stopProgress()
	if first != nil {
		return first
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("stopped after %d of %d ids: %w", opened.Load()+committed.Load(), c.n, err)
	}
	took := time.Since(start)
	fmt.Printf("created %d ids (%s-%d..%d on %s, %d partitions): %d open, %d committed, in %s (%.0f ids/s)\n",
		c.n, c.prefix, c.from, c.from+c.n-1, c.topic, len(leaders), opened.Load(), committed.Load(),
		took.Round(time.Millisecond), float64(c.n)/took.Seconds())
	return nil
}

// feed hands out the id numbers from..from+n-1 until ctx ends, then closes work.
func feed(ctx context.Context, work chan<- int, from, n int) {
	defer close(work)
	for i := from; i < from+n; i++ {
		select {
		case work <- i:
		case <-ctx.Done():
			return
		}
	}
}

// progress prints a line to stderr every 10 s, so that a 500k load does not
// look hung; the returned func stops it.
func progress(start time.Time, n int, opened, committed *atomic.Int64) func() {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(10 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				k := opened.Load() + committed.Load()
				fmt.Fprintf(os.Stderr, "benchtxns: %d/%d ids after %s (%.0f ids/s)\n",
					k, n, time.Since(start).Round(time.Second), float64(k)/time.Since(start).Seconds())
			}
		}
	}()
	return func() { close(done) }
}

// topicLeaders creates topic when missing and waits until every partition has a leader.
func topicLeaders(ctx context.Context, adm *kadm.Client, topic string, partitions int32) ([]int32, error) {
	if _, err := adm.CreateTopic(ctx, partitions, 1, nil, topic); err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return nil, fmt.Errorf("create topic %s: %w", topic, err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		md, err := adm.Metadata(ctx, topic)
		if err != nil {
			return nil, err
		}
		ps := md.Topics[topic].Partitions
		leaders := make([]int32, len(ps))
		ok := len(ps) > 0
		for _, p := range ps {
			if p.Leader < 0 || int(p.Partition) >= len(ps) {
				ok = false
				break
			}
			leaders[p.Partition] = p.Leader
		}
		if ok {
			return leaders, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("topic %s has no leaders", topic)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// id is the transactional id of number i.
func (c config) id(i int) string {
	if c.jobs <= 0 {
		return fmt.Sprintf("%s-%d", c.prefix, i)
	}
	per := c.jobs * c.subtasks
	return fmt.Sprintf("%s%d-%d-%d", c.prefix, i%c.jobs, i/c.jobs%c.subtasks, i/per)
}
