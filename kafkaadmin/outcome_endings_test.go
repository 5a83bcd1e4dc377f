package kafkaadmin

import (
	"testing"
	"time"

	"github.com/txnscope/txnscope/model"
)

// TestFindEndings: which transactions' outcomes are read from the log: those that vanished into
// Empty, and (real Kafka, between two polls) those replaced straight away by another open one.
func TestFindEndings(t *testing.T) {
	at := model.TopicPartition{Topic: "t", Partition: 0}
	start, start2 := time.UnixMilli(1_000_000), time.UnixMilli(1_005_000)
	open := model.Txn{ID: "a", State: model.Ongoing, ProducerID: 7, ProducerEpoch: 3, StartUnixMs: start.UnixMilli(),
		Partitions: []model.TopicPartition{at}, Described: true}
	prev := func(p model.Txn) *model.Snapshot {
		s := &model.Snapshot{EpochBumpsOnEnd: true, Txns: []model.Txn{p}, Partitions: []model.Partition{{TopicPartition: at, HighWatermark: 20,
			LastStableOffset: 12, Producers: []model.Producer{{ProducerID: 7, ProducerEpoch: p.ProducerEpoch, CurrentTxnStartOffset: 12}}}}}
		s.Sort()
		return s
	}
	with := func(state model.State, epoch int16, st time.Time) model.Txn {
		n := open
		n.State, n.ProducerEpoch = state, epoch
		n.SetStart(st)
		return n
	}
	preparing := open
	preparing.State = model.PrepareAbort
	newPid := func(state model.State, st time.Time) model.Txn {
		n := with(state, 0, st)
		n.ProducerID = 8
		return n
	}
	for _, tc := range []struct {
		name string
		prev model.Txn
		now  model.Txn
		want bool
	}{
		{"vanished into Empty", open, with(model.Empty, 5, time.Time{}), true},
		{"replaced by a new transaction", open, with(model.Ongoing, 5, start2), true},
		{"replaced, the new one already committing", open, with(model.PrepareCommit, 6, start2), true},
		{"still the same transaction", open, with(model.Ongoing, 3, start), false},
		{"the same one committing", open, with(model.PrepareCommit, 4, start), false},
		{"completed: the coordinator says how", open, with(model.CompleteAbort, 4, time.Time{}), false},
		{"completed two epochs up: a later one too", open, with(model.CompleteCommit, 6, time.Time{}), true},
		{"decided in PrepareAbort, then replaced", preparing, with(model.Ongoing, 5, start2), false},
		// The marker carries the producer id the transaction had.
		{"a new producer id, Empty", open, newPid(model.Empty, time.Time{}), true},
		{"a new producer id, open", open, newPid(model.Ongoing, start2), true},
		{"a new producer id, complete: the coordinator says how", open, newPid(model.CompleteCommit, time.Time{}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := findEndings(prev(tc.prev), []model.Txn{tc.now})
			if (len(got) == 1) != tc.want {
				t.Fatalf("endings %+v, want read: %v", got, tc.want)
			}
			if tc.want && (got[0].start != 12 || got[0].at != at || got[0].epoch != tc.prev.ProducerEpoch || got[0].pid != 7) {
				t.Errorf("ending %+v, want producer 7 epoch %d from offset 12 of %v", got[0], tc.prev.ProducerEpoch, at)
			}
		})
	}
}

// TestApplyOutcomesToOpen: an outcome read for a transaction replaced by another open one is
// about that previous transaction, not the open one.
func TestApplyOutcomesToOpen(t *testing.T) {
	snap := &model.Snapshot{Txns: []model.Txn{
		{ID: "a", State: model.Ongoing, ProducerEpoch: 5},
		{ID: "b", State: model.Empty, ProducerEpoch: 5},
	}}
	ends := []ending{{id: "a", epoch: 3}, {id: "b", epoch: 3}}
	applyOutcomes(snap, ends, map[string]model.State{"a": model.CompleteAbort, "b": model.CompleteAbort})
	if a := snap.Txns[0]; a.PrevOutcome() != model.CompleteAbort || a.Outcome() != model.NoState {
		t.Errorf("open a: outcome %q, previous %q; want the abort as its previous", a.Outcome(), a.PrevOutcome())
	}
	if b := snap.Txns[1]; b.Outcome() != model.CompleteAbort || b.PrevOutcome() != model.NoState {
		t.Errorf("idle b: outcome %q, previous %q; want its own outcome", b.Outcome(), b.PrevOutcome())
	}
}

// TestEndingReadsTheNearestPartition: of a transaction's partitions, the marker is looked for
// where the fewest records follow its first offset.
func TestEndingReadsTheNearestPartition(t *testing.T) {
	busy, quiet := model.TopicPartition{Topic: "t", Partition: 0}, model.TopicPartition{Topic: "t", Partition: 1}
	p := model.Txn{ID: "a", State: model.Ongoing, ProducerID: 7, ProducerEpoch: 3, StartUnixMs: 1_000_000,
		Partitions: []model.TopicPartition{busy, quiet}, Described: true}
	prev := &model.Snapshot{Txns: []model.Txn{p}, Partitions: []model.Partition{
		{TopicPartition: busy, HighWatermark: 90_000, Producers: []model.Producer{{ProducerID: 7, CurrentTxnStartOffset: 40}}},
		{TopicPartition: quiet, HighWatermark: 530, Producers: []model.Producer{{ProducerID: 7, CurrentTxnStartOffset: 500}}},
	}}
	prev.Sort()
	n := p
	n.State, n.StartUnixMs = model.Empty, 0
	got := findEndings(prev, []model.Txn{n})
	if len(got) != 1 || got[0].at != quiet || got[0].start != 500 {
		t.Fatalf("endings %+v, want one read on %v from offset 500", got, quiet)
	}
}
