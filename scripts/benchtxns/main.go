// Command benchtxns opens N transactions on a real Kafka 4.x broker, fast, for
// scripts/bench-cli: per transactional id one InitProducerId and one
// transactional Produce (v12, where the broker adds the partition to the
// transaction itself, KIP-890 part 2), one record each, spread over the
// topic's partitions. The transactions stay open until their timeout (the
// broker's maximum by default), so that list, describe and find-hanging have
// N open transactions to look at.
//
//	go run ./scripts/benchtxns -bootstrap 127.0.0.1:9092 -n 10000 -prefix bench -topic bench
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"hash/crc32"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

func main() {
	var (
		bootstrap  = flag.String("bootstrap", "127.0.0.1:9092", "broker to start from")
		n          = flag.Int("n", 1000, "how many transactional ids to open a transaction for")
		from       = flag.Int("from", 0, "first id number (to add ids to an earlier run)")
		prefix     = flag.String("prefix", "bench", "ids are <prefix>-<number>")
		topic      = flag.String("topic", "bench", "topic written to (created when missing)")
		partitions = flag.Int("partitions", 12, "partitions of the topic when it is created")
		timeoutMs  = flag.Int("txn-timeout-ms", 900000, "transaction.timeout.ms of every id")
		parallel   = flag.Int("parallel", 64, "requests in flight")
	)
	flag.Parse()
	if err := run(*bootstrap, *n, *from, *prefix, *topic, int32(*partitions), int32(*timeoutMs), *parallel); err != nil {
		fmt.Fprintln(os.Stderr, "benchtxns:", err)
		os.Exit(1)
	}
}

func run(bootstrap string, n, from int, prefix, topic string, partitions, timeoutMs int32, parallel int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// Produce v13 names topics by id; v12 still by name and already adds the
	// partition to the transaction implicitly.
	versions := kversion.Stable()
	versions.SetMaxKeyVersion(0, 12)
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.MaxVersions(versions))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, partitions, 1, nil, topic); err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	var leaders map[int32]int32
	for deadline := time.Now().Add(30 * time.Second); ; {
		md, err := adm.Metadata(ctx, topic)
		if err != nil {
			return err
		}
		leaders = map[int32]int32{}
		for _, p := range md.Topics[topic].Partitions {
			if p.Leader >= 0 {
				leaders[p.Partition] = p.Leader
			}
		}
		if len(leaders) > 0 && len(leaders) == len(md.Topics[topic].Partitions) {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("topic %s has no leaders", topic)
		}
		time.Sleep(200 * time.Millisecond)
	}
	parts := int32(len(leaders))

	start := time.Now()
	var done atomic.Int64
	work := make(chan int)
	errs := make(chan error, parallel)
	var wg sync.WaitGroup
	for range parallel {
		wg.Go(func() {
			for i := range work {
				id := fmt.Sprintf("%s-%d", prefix, i)
				p := int32(i) % parts
				if err := openOne(ctx, cl, id, topic, p, leaders[p], timeoutMs); err != nil {
					errs <- fmt.Errorf("%s: %w", id, err)
					cancel()
					return
				}
				done.Add(1)
			}
		})
	}
	go func() {
		defer close(work)
		for i := from; i < from+n; i++ {
			select {
			case work <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	fmt.Printf("opened %d transactions (%s-%d..%d on %s, %d partitions) in %s\n",
		done.Load(), prefix, from, from+n-1, topic, parts, time.Since(start).Round(time.Millisecond))
	return nil
}

// openOne registers id and leaves one open transaction with one record on p.
func openOne(ctx context.Context, cl *kgo.Client, id, topic string, p, leader, timeoutMs int32) error {
	init := kmsg.NewPtrInitProducerIDRequest()
	init.TransactionalID = kmsg.StringPtr(id)
	init.TransactionTimeoutMillis = timeoutMs
	init.ProducerID, init.ProducerEpoch = -1, -1
	var pid int64
	var epoch int16
	for {
		resp, err := init.RequestWith(ctx, cl)
		if err != nil {
			return fmt.Errorf("InitProducerId: %w", err)
		}
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			if kerr.IsRetriable(err) || errors.Is(err, kerr.ConcurrentTransactions) {
				time.Sleep(50 * time.Millisecond)
				continue
			}
			return fmt.Errorf("InitProducerId: %w", err)
		}
		pid, epoch = resp.ProducerID, resp.ProducerEpoch
		break
	}

	rec := kmsg.Record{Value: []byte(id)}
	rec.Length = int32(len(rec.AppendTo(nil)) - 1) // the body after the 1-byte varint of Length 0
	now := time.Now().UnixMilli()
	batch := kmsg.RecordBatch{
		PartitionLeaderEpoch: -1,
		Magic:                2,
		Attributes:           0x10, // transactional
		FirstTimestamp:       now,
		MaxTimestamp:         now,
		ProducerID:           pid,
		ProducerEpoch:        epoch,
		NumRecords:           1,
		Records:              rec.AppendTo(nil),
	}
	raw := batch.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))

	produce := kmsg.NewPtrProduceRequest()
	produce.TransactionID = kmsg.StringPtr(id)
	produce.Acks = -1
	produce.TimeoutMillis = 15000
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = topic
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Partition = p
	pp.Records = raw
	pt.Partitions = append(pt.Partitions, pp)
	produce.Topics = append(produce.Topics, pt)
	for {
		resp, err := produce.RequestWith(ctx, cl.Broker(int(leader)))
		if err != nil {
			return fmt.Errorf("produce: %w", err)
		}
		if v := produce.GetVersion(); v < 12 {
			return fmt.Errorf("the produce request went out as v%d: the broker must be Kafka 4.0+ (transaction version 2)", v)
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			return fmt.Errorf("unexpected produce response %+v", resp)
		}
		err = kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode)
		if err != nil && (errors.Is(err, kerr.ConcurrentTransactions) || kerr.IsRetriable(err)) {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if err != nil {
			return fmt.Errorf("produce: %w", err)
		}
		return nil
	}
}
