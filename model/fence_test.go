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

// TestStraightIntoNextTransaction: at the UI's 2 s refresh a restart is mostly seen as one open
// transaction replaced by another; the log's word on the first one (Txn.PrevOutcome, read by
// kafkaadmin) tells a fence from a busy producer's commits.
func TestStraightIntoNextTransaction(t *testing.T) {
	start, start2 := t0.Add(-10*time.Second), t0.Add(time.Second)
	p1, p2 := t0, t0.Add(2*time.Second)
	prev := func(s State, epoch int16) Txn { n := tx("a", Ongoing, 1, epoch, start2); n.SetPrevOutcome(s); return n }
	tests := []struct {
		name string
		tv2  bool
		next Txn
		want []string
	}{
		{"aborted, then a transaction two epochs up: fenced", true, prev(CompleteAbort, 2), []string{"a:fenced", "a:began"}},
		{"aborted, then a restart's transaction further up: fenced", true, prev(CompleteAbort, 4), []string{"a:fenced", "a:began"}},
		{"aborted, then the producer's next transaction: aborted", true, prev(CompleteAbort, 1), []string{"a:aborted", "a:began"}},
		{"a busy producer's commits: committed", true, prev(CompleteCommit, 7), []string{"a:committed", "a:began"}},
		{"log not read: ended", true, prev(NoState, 2), []string{"a:ended", "a:began"}},
		{"same transaction: nothing", true, func() Txn { n := prev(CompleteCommit, 0); n.SetStart(start); return n }(), nil},
		// Past it to a whole later transaction (the restart's first checkpoint done before the
		// next poll): p's end, the InitProducerId, and the later one's end.
		{"aborted, then the restart's transaction committed: fenced and committed", true,
			withPrev(tx("a", CompleteCommit, 1, 3, time.Time{}), CompleteAbort), []string{"a:fenced", "a:committed"}},
		{"aborted, then the producer's next one aborted too: two aborts", true,
			withPrev(tx("a", CompleteAbort, 1, 2, time.Time{}), CompleteAbort), []string{"a:aborted", "a:aborted"}},
		{"committed, then the next one committed: two commits", true,
			withPrev(tx("a", CompleteCommit, 1, 5, time.Time{}), CompleteCommit), []string{"a:committed", "a:committed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := snap(p1, tx("a", Ongoing, 1, 0, start)), snap(p2, tt.next)
			a.EpochBumpsOnEnd, b.EpochBumpsOnEnd = tt.tv2, tt.tv2
			if g := kinds(Diff(a, b)); fmt.Sprint(g) != fmt.Sprint(tt.want) {
				t.Errorf("events %v, want %v", g, tt.want)
			}
		})
	}
}

func withPrev(t Txn, o State) Txn { t.SetPrevOutcome(o); return t }

func TestMovedOn(t *testing.T) {
	start, start2 := t0.Add(-10*time.Second), t0.Add(time.Second)
	for _, tc := range []struct {
		name string
		p, n Txn
		want bool
	}{
		{"same", tx("a", Ongoing, 1, 3, start), tx("a", Ongoing, 1, 3, start), false},
		{"now preparing, epoch bumped", tx("a", Ongoing, 1, 3, start), tx("a", PrepareCommit, 1, 4, start), false},
		{"start not described yet", tx("a", Ongoing, 1, 3, time.Time{}), tx("a", Ongoing, 1, 3, start), false},
		{"new start", tx("a", Ongoing, 1, 3, start), tx("a", Ongoing, 1, 3, start2), true},
		{"new epoch", tx("a", Ongoing, 1, 3, time.Time{}), tx("a", Ongoing, 1, 5, time.Time{}), true},
		{"new producer id", tx("a", Ongoing, 1, 3, start), tx("a", Ongoing, 2, 0, start), true},
		{"ended", tx("a", Ongoing, 1, 3, start), tx("a", CompleteCommit, 1, 4, time.Time{}), false},
	} {
		if got := MovedOn(tc.p, tc.n); got != tc.want {
			t.Errorf("%s: MovedOn = %v, want %v", tc.name, got, tc.want)
		}
	}
}
