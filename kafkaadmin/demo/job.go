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
	// shared lists subtasks another job with the same prefix also runs. They
	// start their transactions anywhere in the first half of the interval, so
	// either job may be the one that opens the id last and fences the other.
	shared []int
	// crash, when set, makes the whole job crash now and then, leaving its
	// open transactions behind.
	crash crashPlan
	// slow subtasks are in trouble: they commit each checkpoint's
	// transaction commitLag checkpoints late (a slow committer), so their
	// newest committed checkpoint trails the other subtasks', and fail every
	// abortEvery-th checkpoint (its transaction is aborted). Only they
	// fail: a checkpoint failed on every subtask would leave them all a
	// checkpoint apart for a moment, and one subtask behind is the story.
	slow                  []int
	commitLag, abortEvery int64
	// fenced counts this job's fenced errors; nil counts them as plain errors
	// (nothing should fence the job).
	fenced *atomic.Int64
}

// crashPlan schedules a job's crashes on the checkpoint clock, so that all
// its subtasks crash on the same checkpoint: first, then every every
// checkpoints. The job comes back restart checkpoints after each crash, at a
// later checkpoint than the one it crashed on, without aborting what the
// crash left open: those transactions linger until their timeout.
type crashPlan struct {
	first, every, restart int64
}

// due reports whether the job crashes on a checkpoint after last, up to n,
// and which.
func (p crashPlan) due(last, n int64) (int64, bool) {
	if p.every <= 0 || n < p.first {
		return 0, false
	}
	k := p.first + (n-p.first)/p.every*p.every
	return k, k > last
}

func (j job) id(subtask int, checkpoint int64) string {
	return fmt.Sprintf("%s-%d-%d", j.prefix, subtask, checkpoint)
}

// trouble is how late subtask commits, and how often it fails a checkpoint.
func (j job) trouble(subtask int) (lag, abortEvery int64) {
	if slices.Contains(j.slow, subtask) {
		return j.commitLag, j.abortEvery
	}
	return 0, 0
}

func (d *Demo) startJob(ctx context.Context, j job) {
	for _, s := range j.subtasks {
		d.goRun(ctx, func(ctx context.Context) { d.runSubtask(ctx, j, s) })
	}
}

// runSubtask loops over checkpoints, each in a transaction of its own that
// begins when the checkpoint completes and ends a little after the next one
// does (or later): they overlap, as in Flink. A failed checkpoint is what a
// restore looks like from Kafka: the producer is dropped and the subtask
// goes on with a new producer at the next checkpoint.
func (d *Demo) runSubtask(ctx context.Context, j job, subtask int) {
	interval := d.clock.interval
	startDelay := interval / 10
	if slices.Contains(j.shared, subtask) {
		startDelay = interval / 2
	}
	lag, abortEvery := j.trouble(subtask)
	var last int64
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
		crashed, crash := j.crash.due(last, n)
		last = n
		id := j.id(subtask, n)
		a := attempt{lag: lag, commit: abortEvery <= 0 || n%abortEvery != 0, crash: crash}
		d.goRun(ctx, func(ctx context.Context) { d.settle(ctx, j, id, a, d.runCheckpoint(ctx, j, id, n, a)) })
		if crash {
			back := crashed + j.crash.restart
			d.log.Printf("%s: subtask %d crashes on checkpoint %d, leaving %s open (timeout %s); restarting at checkpoint %d",
				j.name, subtask, n, id, j.timeout, back)
			last = max(last, back-1)
		}
	}
}

// settle counts and logs how a checkpoint's transaction went, when it did
// not simply end.
func (d *Demo) settle(ctx context.Context, j job, id string, a attempt, err error) {
	switch {
	case ctx.Err() != nil:
	case err == nil && a.crash:
		d.stats.crashed.Add(1)
	case err == nil:
	case fenced(err) && j.fenced != nil:
		j.fenced.Add(1)
		d.log.Printf("%s: %s fenced: %v; restoring at the next checkpoint", j.name, id, err)
	default:
		d.stats.errors.Add(1)
		d.log.Printf("%s: %s failed: %v; restoring at the next checkpoint", j.name, id, err)
	}
}

// attempt is how a subtask ends one checkpoint's transaction.
type attempt struct {
	lag    int64 // it commits (or aborts) lag checkpoints late
	commit bool  // false: the checkpoint failed, its transaction is aborted
	crash  bool  // it walks away halfway through, leaving the transaction open
}

// runCheckpoint writes one checkpoint's transaction until the next checkpoint
// completes and ends it a.lag checkpoints after that; with a.crash it walks
// away halfway through instead.
func (d *Demo) runCheckpoint(ctx context.Context, j job, id string, n int64, a attempt) error {
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
	// Flink commits once it hears that the next checkpoint completed, after
	// the next transaction began: each transaction stays open half an
	// interval longer than the interval, so that polls as often as the
	// checkpoints, and taking a while, still see every one of them open (a
	// commit never seen open is not known to be one).
	commitAt := d.clock.completes(n + 1 + a.lag).Add(interval/2 + jitter(interval/20))
	if a.crash {
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
	if a.crash {
		return nil
	}
	if !sleepUntil(ctx, commitAt) {
		return ctx.Err()
	}
	if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(a.commit)); err != nil {
		return err
	}
	if a.commit {
		d.stats.commits.Add(1)
	} else {
		d.stats.aborts.Add(1)
	}
	return nil
}
