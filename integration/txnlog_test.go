package integration

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/model"
)

// The coordinators' own log on real Kafka, read by kafkaadmin.ReadTxnLog:
// every transition of a committed, an aborted and a timed-out transaction,
// with the coordinator's timestamps (what issue 12's follower builds on).
// The sequences are the ones kafka-dump-log.sh --transaction-log-decoder
// shows for the same transactions.
func TestTxnLogRecordsEveryTransition(t *testing.T) {
	t.Parallel()
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tp := topicOn(ctx, t, newAdmin(t, bootstrap))
	commit, abort, timeout := name(t, "commit"), name(t, "abort"), name(t, "timeout")

	c := producer(t, bootstrap, commit, time.Minute)
	openTxn(ctx, t, c, tp, 1, "c")
	endTxn(ctx, t, c, true)
	a := producer(t, bootstrap, abort, time.Minute)
	openTxn(ctx, t, a, tp, 1, "a")
	endTxn(ctx, t, a, false)
	const limit = 2 * time.Second
	to := producer(t, bootstrap, timeout, limit)
	openTxn(ctx, t, to, tp, 1, "t")

	seen := map[string][]model.TxnLogRecord{}
	read := func() {
		seen = map[string][]model.TxnLogRecord{}
		err := newScope(t, bootstrap).c.ReadTxnLog(ctx, func(r model.TxnLogRecord) {
			if r.ID == commit || r.ID == abort || r.ID == timeout {
				seen[r.ID] = append(seen[r.ID], r)
			}
		})
		if err != nil {
			t.Fatalf("ReadTxnLog: %v", err)
		}
	}
	// The coordinator aborts the third at its timeout (kafka-up checks every second).
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		read()
		if r := seen[timeout]; len(r) > 0 && r[len(r)-1].State == model.CompleteAbort || time.Now().After(deadline) {
			break
		}
	}
	states := func(id string) string {
		var out []string
		for _, r := range seen[id] {
			out = append(out, r.State.String())
		}
		return strings.Join(out, " ")
	}
	for id, want := range map[string]string{
		commit:  "Empty Ongoing PrepareCommit CompleteCommit",
		abort:   "Empty Ongoing PrepareAbort CompleteAbort",
		timeout: "Empty Ongoing PrepareAbort CompleteAbort",
	} {
		if got := states(id); got != want {
			t.Errorf("%s: %s, want %s", id, got, want)
		}
	}
	for _, id := range []string{commit, abort, timeout} {
		rs := seen[id]
		if len(rs) != 4 {
			continue
		}
		ongoing, prepare, done := rs[1], rs[2], rs[3]
		if !slices.Equal(ongoing.Partitions, []model.TopicPartition{tp}) || len(done.Partitions) != 0 {
			t.Errorf("%s: partitions %v while open, %v when done", id, ongoing.Partitions, done.Partitions)
		}
		if ongoing.StartMs <= 0 || prepare.StartMs != ongoing.StartMs || done.LastUpdateMs < prepare.LastUpdateMs || prepare.ProducerEpoch != done.ProducerEpoch {
			t.Errorf("%s: start %d/%d, updates %d→%d, epochs %d→%d", id, ongoing.StartMs, prepare.StartMs,
				prepare.LastUpdateMs, done.LastUpdateMs, prepare.ProducerEpoch, done.ProducerEpoch)
		}
		for i := 1; i < len(rs); i++ {
			if rs[i].Partition != rs[0].Partition || rs[i].Offset <= rs[i-1].Offset {
				t.Errorf("%s: records out of order: %+v", id, rs)
			}
		}
	}
	// A timeout is told from a producer's abort by the coordinator's own clock.
	if rs := seen[timeout]; len(rs) == 4 && rs[2].LastUpdateMs-rs[2].StartMs < limit.Milliseconds() {
		t.Errorf("timed out after %d ms, want at least %d", rs[2].LastUpdateMs-rs[2].StartMs, limit.Milliseconds())
	}
	if rs := seen[abort]; len(rs) == 4 && rs[2].LastUpdateMs-rs[2].StartMs >= time.Minute.Milliseconds() {
		t.Errorf("the producer's abort looks like a timeout: %+v", rs[2])
	}
}
