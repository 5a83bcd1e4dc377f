package demo

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// streamsApp is a Kafka Streams application under exactly_once_v2 as its
// transactions look: one transactional id per stream thread,
// <application.id>-<process UUID>-<thread>, a producer kept for the
// thread's life, transaction.timeout.ms 10 s (Streams' own under EOS), one
// transaction per commit interval while input comes.
const (
	streamsAppID   = "clickstream-counts"
	streamsTopic   = "click-counts"
	streamsTimeout = 10 * time.Second
)

// streamsProcesses are the app's two instances; their ids are fixed, as an
// instance's are while it keeps its state directory.
var streamsProcesses = [...]string{"6f1c2a9e-4b7d-4e21-9c3a-8d5e7f0b1a24", "b83e0d47-91a2-4c6f-a5e8-2f7c9d1e3b60"}

// streamsCommit is the app's commit interval. The UI polls the demo as
// often as it checkpoints, and the demo's cluster keeps no log a poll could
// read the commits from: a poll tells a commit only when it falls between
// the commit and the next transaction. So each transaction is open for
// half of 3 checkpoint intervals, and the thread idles the other half:
// each is seen open, then committed.
func streamsCommit(o Options) time.Duration { return 3 * o.CheckpointInterval }

func (d *Demo) startStreams(ctx context.Context) {
	for _, p := range streamsProcesses {
		for thread := 1; thread <= 2; thread++ {
			id := fmt.Sprintf("%s-%s-%d", streamsAppID, p, thread)
			d.goRun(ctx, func(ctx context.Context) { d.runStreamThread(ctx, id) })
		}
	}
}

// runStreamThread processes a burst of input each commit interval in one
// transaction and commits it; the input then pauses until the next
// interval, so the transaction is open for half of it.
func (d *Demo) runStreamThread(ctx context.Context, id string) {
	cl, err := d.newProducer(id, streamsTimeout)
	if err != nil {
		d.stats.errors.Add(1)
		d.log.Printf("%s: %v", id, err)
		return
	}
	defer cl.Close()
	every := streamsCommit(d.opts)
	next := time.Now().Add(jitter(every))
	for n := 0; ; n++ {
		if !sleepUntil(ctx, next) {
			return
		}
		next = next.Add(every)
		if err := d.streamsCommitOnce(ctx, cl, id, n, every/2); err != nil && ctx.Err() == nil {
			d.stats.errors.Add(1)
			d.log.Printf("%s: transaction %d: %v", id, n, err)
			// A thread whose transaction failed aborts it and goes on, as
			// Streams does after a TaskCorruptedException.
			_ = cl.EndTransaction(ctx, kgo.TryAbort) // the next begin says if it is still broken
		}
	}
}

func (d *Demo) streamsCommitOnce(ctx context.Context, cl *kgo.Client, id string, n int, open time.Duration) error {
	if err := cl.BeginTransaction(); err != nil {
		return err
	}
	end := time.Now().Add(open)
	for seq := 0; ; seq++ {
		value := fmt.Sprintf(`{"thread":%q,"commit":%d,"seq":%d}`, id, n, seq)
		if err := produce(ctx, cl, streamsTopic, fmt.Sprintf("page-%d", seq%7), value); err != nil {
			return err
		}
		if time.Now().Add(open/3).After(end) || !sleep(ctx, open/3) {
			break
		}
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return err
	}
	d.stats.commits.Add(1)
	return nil
}
