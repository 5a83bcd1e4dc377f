package demo

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// job is a Flink-like KafkaSink EXACTLY_ONCE job with the INCREMENTING id
// strategy: after checkpoint N a subtask writes in a transaction under
// <prefix>-<subtask>-<N> and commits it when checkpoint N+1 completes.
type job struct {
	name     string // for the log; two jobs may share a prefix
	prefix   string
	topic    string
	subtasks []int
	timeout  time.Duration
	// abortEvery > 0 fails every abortEvery-th checkpoint: its transaction is aborted.
	abortEvery int64
	// shared lists subtasks another job with the same prefix also runs. They
	// start their transactions anywhere in the first half of the interval, so
	// either job may be the one that opens the id last and fences the other.
	shared []int
	// crashAfter > 0 makes the job crash after that many checkpoints, leaving
	// its open transactions behind, and restart restartAfter later.
	crashAfter   int
	restartAfter time.Duration
	// fenced counts this job's fenced errors; nil counts them as plain errors
	// (nothing should fence the job).
	fenced *atomic.Int64
}

func (j job) id(subtask int, checkpoint int64) string {
	return fmt.Sprintf("%s-%d-%d", j.prefix, subtask, checkpoint)
}

func (d *Demo) startJob(ctx context.Context, j job) {
	for _, s := range j.subtasks {
		d.goRun(ctx, func(ctx context.Context) { d.runSubtask(ctx, j, s) })
	}
}

// runSubtask loops over checkpoints. A failed checkpoint is what a restore
// looks like from Kafka: the producer is dropped and the subtask starts again
// with a new producer at the next checkpoint.
func (d *Demo) runSubtask(ctx context.Context, j job, subtask int) {
	interval := d.clock.interval
	startDelay := interval / 10
	if slices.Contains(j.shared, subtask) {
		startDelay = interval / 2
	}
	var last int64
	done := 0
	for ctx.Err() == nil {
		n := d.clock.checkpoint(time.Now())
		if n <= last {
			if !sleepUntil(ctx, d.clock.completes(last+1)) {
				return
			}
			continue
		}
		// Flink learns that a checkpoint completed a little later on each subtask.
		if !sleep(ctx, jitter(startDelay)) {
			return
		}
		last = n
		crash := j.crashAfter > 0 && done >= j.crashAfter
		id := j.id(subtask, n)
		err := d.runCheckpoint(ctx, j, id, n, crash)
		switch {
		case ctx.Err() != nil:
			return
		case crash && err == nil:
			done = 0
			d.stats.crashed.Add(1)
			d.log.Printf("%s: %s crashed with its transaction open (timeout %s); restarting in %s",
				j.name, id, j.timeout, j.restartAfter)
			if !sleep(ctx, j.restartAfter) {
				return
			}
		case err == nil:
			done++
		case fenced(err) && j.fenced != nil:
			j.fenced.Add(1)
			d.log.Printf("%s: %s fenced: %v; restoring at the next checkpoint", j.name, id, err)
		default:
			d.stats.errors.Add(1)
			d.log.Printf("%s: %s failed: %v; restoring at the next checkpoint", j.name, id, err)
		}
	}
}

// runCheckpoint writes one checkpoint's transaction and ends it when the next
// checkpoint completes; with crash it walks away halfway through instead.
func (d *Demo) runCheckpoint(ctx context.Context, j job, id string, n int64, crash bool) error {
	cl, err := d.newProducer(id, j.timeout)
	if err != nil {
		return err
	}
	// Close does not end the transaction: after a crash the coordinator
	// has to time it out.
	defer cl.Close()
	if err := cl.BeginTransaction(); err != nil {
		return err
	}

	interval := d.clock.interval
	end := d.clock.completes(n + 1).Add(jitter(interval / 20))
	if crash {
		end = time.Now().Add(interval / 2)
	}
	for seq := 0; ; seq++ {
		key := fmt.Sprintf("%s-%d", id, seq)
		value := fmt.Sprintf(`{"job":%q,"checkpoint":%d,"seq":%d}`, j.name, n, seq)
		if err := produce(ctx, cl, j.topic, key, value); err != nil {
			return err
		}
		next := time.Now().Add(interval / 4)
		if next.After(end) {
			break
		}
		if !sleepUntil(ctx, next) {
			return ctx.Err()
		}
	}
	if !sleepUntil(ctx, end) {
		return ctx.Err()
	}
	if crash {
		return nil
	}
	commit := j.abortEvery <= 0 || n%j.abortEvery != 0
	if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		return err
	}
	if commit {
		d.stats.commits.Add(1)
	} else {
		d.stats.aborts.Add(1)
	}
	return nil
}
