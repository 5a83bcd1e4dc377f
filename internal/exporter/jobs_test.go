package exporter

import (
	"maps"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/testutil/uitest"
	"github.com/txnscope/txnscope/model"
)

func flinkTxn(id string, st model.State, pid int64, age time.Duration, at time.Time) model.Txn {
	t := model.Txn{ID: id, State: st, ProducerID: pid, TimeoutMs: 600000, Described: true}
	if st.Open() {
		t.StartUnixMs = at.Add(-age).UnixMilli()
	}
	return t
}

// sinkSnapshot is a Flink sink whose subtask 0 committed checkpoint 6 while
// checkpoint 5's transaction is still open: a crashed attempt's leftover.
func sinkSnapshot(at time.Time) *model.Snapshot {
	s := &model.Snapshot{TakenAt: at, Brokers: 1, Txns: []model.Txn{
		flinkTxn("sink-0-5", model.Ongoing, 1, 2*time.Minute, at),
		flinkTxn("sink-0-6", model.CompleteCommit, 2, 0, at),
		flinkTxn("sink-1-6", model.Ongoing, 3, time.Minute, at),
	}}
	s.Sort()
	return s
}

// TestJobSeries: lingering transactions, the largest timeout ratio and the
// time since the last commit, per job: known only from a commit a refresh
// saw happen, not from one the first snapshot shows (a job stopped an hour
// ago is not "45s").
func TestJobSeries(t *testing.T) {
	e, a, c := newTest()
	refresh(t, e, a, sinkSnapshot(uitest.T0))
	c.t = uitest.T0.Add(45 * time.Second)
	refresh(t, e, a, sinkSnapshot(uitest.T0)) // the same state, 45 s later
	got := series(t, e)
	// The jobs view's problem for it, one series per kind.
	if g, w := named(got, "txnscope_job_problem"), map[string]float64{`txnscope_job_problem{family="flink",kind="lingering",txn_job="sink"}`: 1}; !maps.Equal(g, w) {
		t.Errorf("job_problem: got %v, want %v", g, w)
	}
	want := map[string]float64{
		`txnscope_job_lingering_transactions{family="flink",txn_job="sink"}`: 1,
		`txnscope_job_open_timeout_ratio_max{family="flink",txn_job="sink"}`: (2*60 + 45) / 600.0,
	}
	for _, name := range []string{"txnscope_job_lingering_transactions", "txnscope_job_open_timeout_ratio_max", "txnscope_job_seconds_since_last_commit"} {
		g, w := named(got, name), named(want, name)
		if !maps.Equal(g, w) {
			t.Errorf("%s: got %v, want %v", name, g, w)
		}
	}
	// Subtask 1 commits between two refreshes: seen at the second.
	c.t = uitest.T0.Add(50 * time.Second)
	next := sinkSnapshot(c.t)
	for i := range next.Txns {
		if next.Txns[i].ID == "sink-1-6" {
			next.Txns[i].State = model.CompleteCommit
		}
	}
	refresh(t, e, a, next)
	c.t = uitest.T0.Add(80 * time.Second)
	refresh(t, e, a, next)
	const since = `txnscope_job_seconds_since_last_commit{family="flink",txn_job="sink"}`
	if g := named(series(t, e), "txnscope_job_seconds_since_last_commit"); !maps.Equal(g, map[string]float64{since: 30}) {
		t.Errorf("after a commit seen 30s ago: %v", g)
	}
}

// TestCollectorJobFlags: a job's prefix collision is one series while
// flagged, none otherwise; no commit known means no since-commit series.
func TestCollectorJobFlags(t *testing.T) {
	e, _, _ := newTest()
	e.c.st = status{up: true, refreshed: true, last: uitest.T0}
	e.c.v = Values{States: map[model.State]int{}, Jobs: []JobValues{
		{Job: "a", Family: "flink", Shared: true},
		{Job: "a", Family: "streams", Shared: true},
		{Job: "b", Family: "flink"},
	}}
	got := series(t, e)
	if g, w := named(got, "txnscope_prefix_shared"), map[string]float64{`txnscope_prefix_shared{txn_job="a"}`: 1}; !maps.Equal(g, w) {
		t.Errorf("prefix_shared: got %v, want %v", g, w)
	}
	if g := named(got, "txnscope_job_seconds_since_last_commit"); len(g) != 0 {
		t.Errorf("since_last_commit without a commit: %v", g)
	}
}

// TestCountersOnlyGrow: fences, timeouts and aborts are counted from the
// events as they arrive (the coordinators' log here), and stay when the ids
// go; a timeout is no fence.
func TestCountersOnlyGrow(t *testing.T) {
	e, a, c := newTest()
	refresh(t, e, a, sinkSnapshot(uitest.T0))
	logged := func(at time.Time, evs ...model.Event) *model.Snapshot {
		s := sinkSnapshot(at)
		s.Source = model.Source{Log: true}
		s.Events = evs
		return s
	}
	ev := func(id string, k model.EventKind, revises bool) model.Event {
		return model.Event{At: c.t, ID: id, Kind: k, Revises: revises}
	}
	steps := []struct {
		evs                      []model.Event
		fences, timeouts, aborts float64
	}{
		{[]model.Event{ev("sink-0-5", model.Fenced, false), ev("sink-1-6", model.Aborted, false), ev("sink-0-6", model.Committed, false)}, 1, 0, 2},
		{[]model.Event{ev("sink-1-7", model.TimedOut, false), ev("sink-1-6", model.Fenced, true)}, 2, 1, 3},
		{nil, 2, 1, 3}, // nothing new, and the counts stay
	}
	for i, st := range steps {
		c.t = c.t.Add(15 * time.Second)
		refresh(t, e, a, logged(c.t, st.evs...))
		got := series(t, e)
		if f := got[`txnscope_job_fences_total{family="flink",txn_job="sink"}`]; f != st.fences {
			t.Errorf("step %d: fences %v, want %v", i, f, st.fences)
		}
		if n := got[`txnscope_job_timeouts_total{family="flink",txn_job="sink"}`]; n != st.timeouts {
			t.Errorf("step %d: timeouts %v, want %v", i, n, st.timeouts)
		}
		if n := got[`txnscope_job_aborts_total{family="flink",txn_job="sink"}`]; n != st.aborts {
			t.Errorf("step %d: aborts %v, want %v", i, n, st.aborts)
		}
	}
}

// TestEpochSeries: a POOLING slot committing every 10 s near the end of its
// epochs: its highest epoch, the seconds until its producer id rotates at
// that rate, and the epoch_exhaustion problem.
func TestEpochSeries(t *testing.T) {
	e, a, c := newTest()
	at := func(sec int, epoch int16) *model.Snapshot {
		c.t = uitest.T0.Add(time.Duration(sec) * time.Second)
		tx := flinkTxn("pool-0-0", model.CompleteCommit, 9, 0, c.t)
		tx.ProducerEpoch = epoch
		s := &model.Snapshot{TakenAt: c.t, Brokers: 1, Txns: []model.Txn{tx}, EpochBumpsOnEnd: true}
		return s
	}
	refresh(t, e, a, at(0, 32000))
	refresh(t, e, a, at(10, 32001))
	refresh(t, e, a, at(20, 32002))
	got := series(t, e)
	for name, want := range map[string]map[string]float64{
		"txnscope_job_producer_epoch_max":     {`txnscope_job_producer_epoch_max{family="flink",txn_job="pool"}`: 32002},
		"txnscope_job_epoch_rotation_seconds": {`txnscope_job_epoch_rotation_seconds{family="flink",txn_job="pool"}`: 765 * 10},
		"txnscope_job_problem":                {`txnscope_job_problem{family="flink",kind="epoch_exhaustion",txn_job="pool"}`: 1},
	} {
		if g := named(got, name); !maps.Equal(g, want) {
			t.Errorf("%s: got %v, want %v", name, g, want)
		}
	}
}
