package model

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestFenceSeenAsAbortFirst: the sequences Kafka 4.4 showed txnscope (polling every ~100 ms) when
// a Flink-like job restarted on the ids of a zombie that still had transactions open. The fence's
// abort looks like a plain abort until the next poll shows the InitProducerId.
func TestFenceSeenAsAbortFirst(t *testing.T) {
	const id = "job-0-1"
	start := t0.Add(-2 * time.Second)
	late := t0.Add(90 * time.Second) // past the 60 s timeout of tx()
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * 200 * time.Millisecond) }
	idle := time.Time{}
	tests := []struct {
		name      string
		tv2       bool
		txns      []Txn       // one per poll, the first one the baseline
		times     []time.Time // poll times when not at(i)
		want      []EventKind // History's per-id events after relabelling
		aborts    int
		commits   int
		last      EventKind
		takeovers int
	}{
		{name: "abort, Empty two up, new transaction, commit", tv2: true,
			txns: []Txn{tx(id, Ongoing, 7, 0, start), tx(id, CompleteAbort, 7, 1, idle), tx(id, Empty, 7, 2, idle),
				tx(id, Ongoing, 7, 2, at(3)), tx(id, CompleteCommit, 7, 3, idle)},
			want: []EventKind{Fenced, Began, Committed}, aborts: 1, commits: 1, last: Committed, takeovers: 1},
		{name: "abort, then the new producer's transaction already open", tv2: true,
			txns: []Txn{tx(id, Ongoing, 7, 0, start), tx(id, CompleteAbort, 7, 1, idle), tx(id, Ongoing, 7, 2, at(2))},
			want: []EventKind{Fenced, Began}, aborts: 1, last: Fenced, takeovers: 1},
		{name: "abort, then the new producer's transaction already committed", tv2: true,
			txns: []Txn{tx(id, Ongoing, 7, 0, start), tx(id, CompleteAbort, 7, 1, idle), tx(id, CompleteCommit, 7, 3, idle)},
			want: []EventKind{Fenced, Committed}, aborts: 1, commits: 1, last: Committed, takeovers: 1},
		{name: "abort caught in PrepareAbort, then Empty an epoch up", tv2: true,
			txns: []Txn{tx(id, Ongoing, 7, 0, start), tx(id, PrepareAbort, 7, 1, start), tx(id, Empty, 7, 2, idle)},
			want: []EventKind{Fenced}, aborts: 1, last: Fenced, takeovers: 1},
		{name: "the producer's own abort, then its next transaction", tv2: true,
			txns: []Txn{tx(id, Ongoing, 7, 0, start), tx(id, CompleteAbort, 7, 1, idle), tx(id, Ongoing, 7, 1, at(2)),
				tx(id, CompleteCommit, 7, 2, idle)},
			want: []EventKind{Aborted, Began, Committed}, aborts: 1, commits: 1, last: Committed},
		{name: "the producer's own abort, then it commits between polls", tv2: true,
			txns: []Txn{tx(id, Ongoing, 7, 0, start), tx(id, CompleteAbort, 7, 1, idle), tx(id, CompleteCommit, 7, 2, idle)},
			want: []EventKind{Aborted, Committed}, aborts: 1, commits: 1, last: Committed},
		{name: "a timeout stays a timeout when the job restarts later", tv2: true,
			txns:  []Txn{tx(id, Ongoing, 7, 0, start), tx(id, CompleteAbort, 7, 1, idle), tx(id, Empty, 7, 2, idle)},
			times: []time.Time{t0, late, late.Add(time.Second)},
			want:  []EventKind{TimedOut}, aborts: 1, last: TimedOut},
		{name: "a fence seen as one is not relabelled again", tv2: true,
			txns: []Txn{tx(id, Ongoing, 7, 0, start), tx(id, PrepareEpochFence, 7, 0, start), tx(id, CompleteAbort, 7, 1, idle),
				tx(id, Empty, 7, 2, idle)},
			want: []EventKind{Fenced}, aborts: 1, last: Fenced, takeovers: 1},
		{name: "an abort before txnscope started, then a restart", tv2: true,
			txns: []Txn{tx(id, CompleteAbort, 7, 1, idle), tx(id, Empty, 7, 2, idle)},
			want: nil, aborts: 1, last: Fenced, takeovers: 1},
		{name: "a commit, then a restart: nothing was fenced", tv2: true,
			txns: []Txn{tx(id, Ongoing, 7, 0, start), tx(id, CompleteCommit, 7, 1, idle), tx(id, Empty, 7, 2, idle)},
			want: []EventKind{Committed}, commits: 1, last: Committed},
		{name: "transaction version 1: abort with a bump, then Empty",
			txns: []Txn{tx(id, Ongoing, 7, 5, start), tx(id, CompleteAbort, 7, 6, idle), tx(id, Empty, 7, 7, idle)},
			want: []EventKind{Fenced}, aborts: 1, last: Fenced, takeovers: 1},
		{name: "transaction version 1: the producer's own abort, then its next transaction",
			txns: []Txn{tx(id, Ongoing, 7, 5, start), tx(id, CompleteAbort, 7, 5, idle), tx(id, Ongoing, 7, 5, at(2))},
			want: []EventKind{Aborted, Began}, aborts: 1, last: Aborted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := NewHistory(100)
			var prev *Snapshot
			var raw []Event
			for i, x := range tt.txns {
				when := at(i)
				if tt.times != nil {
					when = tt.times[i]
				}
				s := snap(when, x)
				s.EpochBumpsOnEnd = tt.tv2
				if prev == nil {
					h.Baseline(s)
				} else {
					evs := Diff(prev, s)
					raw = append(raw, evs...)
					h.Add(evs)
				}
				prev = s
			}
			st := h.Stats(id)
			var got []EventKind
			for _, e := range st.Recent {
				got = append(got, e.Kind)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("events %v, want %v (raw %v)", got, tt.want, kinds(raw))
			}
			if st.Aborts != tt.aborts || st.Commits != tt.commits || st.Last != tt.last {
				t.Errorf("stats: %d aborts, %d commits, last %q; want %d, %d, %q", st.Aborts, st.Commits, st.Last,
					tt.aborts, tt.commits, tt.last)
			}
			if len(st.PrefixTakeovers) != tt.takeovers {
				t.Errorf("%d takeovers recorded for the prefix, want %d", len(st.PrefixTakeovers), tt.takeovers)
			}
			// The event log says the same as the id's own list.
			var logged []EventKind
			latest := h.Latest(h.Len())
			for i := len(latest) - 1; i >= 0; i-- {
				logged = append(logged, latest[i].Kind)
			}
			if !slices.Equal(logged, tt.want) {
				t.Errorf("event log %v, want %v", logged, tt.want)
			}
			for _, e := range st.Recent {
				if e.Kind == Fenced && e.At.Before(at(1)) {
					t.Errorf("fence stamped %s, before the poll that saw the abort", e.At)
				}
			}
		})
	}
}

// TestReviseKeepsHandedOutStats: Stats hands out the per-id event slice; relabelling must not
// change what a caller already holds.
func TestReviseKeepsHandedOutStats(t *testing.T) {
	const id = "job-0-1"
	h := NewHistory(10)
	s0 := tv2(snap(t0, tx(id, Ongoing, 7, 0, t0.Add(-time.Second))))
	s1 := tv2(snap(t0.Add(time.Second), tx(id, CompleteAbort, 7, 1, time.Time{})))
	s2 := tv2(snap(t0.Add(2*time.Second), tx(id, Empty, 7, 2, time.Time{})))
	h.Baseline(s0)
	h.Add(Diff(s0, s1))
	held := h.Stats(id)
	h.Add(Diff(s1, s2))
	if held.Recent[0].Kind != Aborted || held.Last != Aborted {
		t.Errorf("stats handed out before the relabel changed: %+v", held)
	}
	if now := h.Stats(id); now.Recent[0].Kind != Fenced || !now.Recent[0].At.Equal(s1.TakenAt) ||
		now.Recent[0].Detail != fmt.Sprintf("another producer initialized the id right after the abort (epoch %d→%d)", 1, 2) {
		t.Errorf("after the relabel: %+v", now.Recent)
	}
	if h.Len() != 1 {
		t.Errorf("the event log holds %d events, want the one relabelled abort", h.Len())
	}
}
