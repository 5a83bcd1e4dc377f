package model

import (
	"context"
	"strings"
	"testing"
	"time"
)

// The TUI and the one-shot commands plan commits and resolutions through
// Reading alone: what it plans, and what it refuses, is what both offer.
func TestReadingPlans(t *testing.T) {
	now := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	open := func(id string, pid int64) Txn {
		t := Txn{ID: id, State: Ongoing, ProducerID: pid, TimeoutMs: 600000, Described: true, Partitions: []TopicPartition{{"orders", 0}}}
		t.SetStart(now.Add(-20 * time.Second))
		return t
	}
	snap := &Snapshot{Txns: []Txn{open("orders-0-3", 30), open("orders-0-4", 40), open("payments-tx", 50)},
		Partitions: []Partition{{TopicPartition: TopicPartition{"orders", 0}, Producers: []Producer{{ProducerID: 50, LastWriteMs: now.Add(-time.Minute).UnixMilli()}}}}}
	dir := map[string]RetainedDir{"orders": {Dir: "/chk", Jobs: []RetainedJob{{Dir: "/chk", Checkpoints: []RetainedCheckpoint{
		{N: 3, Committables: []Committable{{ID: "orders-0-3", ProducerID: 30}}}}}}}}
	r := Reading{Snap: snap, Flink: &FlinkView{Retained: dir}, Now: now}
	reads := 0
	read := func(context.Context) *FlinkView { reads++; return &FlinkView{Retained: dir} }

	a, err := r.PlanCommit("orders-0-3", false, read)
	if err != nil || a.Verdict.Kind != Checkpointed || a.Reverify == nil {
		t.Fatalf("commit of the checkpointed one: %+v, %v", a, err)
	}
	ev, err := a.Reverify(context.Background(), snap.Txns[0])
	if err != nil || reads != 1 || ev.Verdict.Kind != Checkpointed {
		t.Errorf("its re-check read Flink %d times: %+v, %v; want once, checkpointed", reads, ev, err)
	}
	for _, c := range []struct{ id, refuse string }{
		{"orders-0-4", "is not checkpointed"},
		{"orders-0-9", "orders-0-9 is not known to any coordinator"},
		{"payments-tx", "is not a Flink sink's transactional id"},
	} {
		if _, err := r.PlanCommit(c.id, false, read); err == nil || !strings.Contains(err.Error(), c.refuse) {
			t.Errorf("commit %s: %v, want a refusal saying %q", c.id, err, c.refuse)
		}
	}
	// On the operator's word: nothing to read again, and when its producer
	// last wrote is known.
	a, err = r.PlanCommit("payments-tx", true, read)
	if err != nil || a.Reverify != nil || !a.LastWrite.Equal(now.Add(-time.Minute)) {
		t.Errorf("unverified commit: %+v, %v", a, err)
	}

	steps, err := r.PlanResolve(JobID{Family: FlinkSink, Name: "orders"}, read)
	if err != nil || len(steps) != 2 {
		t.Fatalf("resolve orders: %+v, %v", steps, err)
	}
	for _, s := range steps {
		if s.Action == nil || s.Action.Reverify == nil {
			t.Errorf("%s: %+v, want an action that reads its evidence again", s.Txn.ID, s)
		}
	}
	if steps[0].Action.Kind != Commit || steps[1].Action.Kind != ForceTerminate {
		t.Errorf("resolve: %s %s, want commit orders-0-3, force-terminate orders-0-4", steps[0].Action.Kind, steps[1].Action.Kind)
	}
	if _, err := r.PlanResolve(JobID{Family: FlinkSink, Name: "billing"}, read); err == nil || !strings.Contains(err.Error(), `prefix "billing"`) {
		t.Errorf("resolve of a job nobody has: %v", err)
	}
	if _, err := r.PlanResolve(JobOf("payments-tx").Job, read); err == nil || !strings.Contains(err.Error(), "not a Flink job") {
		t.Errorf("resolve of an id of no Flink job: %v", err)
	}
}

// A re-check with nothing to read Flink from is refused, never waved through.
func TestReverifierWithNothingToRead(t *testing.T) {
	for _, read := range []ReadFlink{nil, func(context.Context) *FlinkView { return nil }} {
		if _, err := Reverifier(read, Job{})(context.Background(), Txn{}); err == nil {
			t.Error("a re-check with no Flink to read answered")
		}
	}
}
