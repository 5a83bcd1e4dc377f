package model

import (
	"testing"
	"time"
)

// TestBaselineSharedStatsStayApart: ids that share their baseline stats
// still count on their own once events, a revision or a second baseline
// touch one of them.
func TestBaselineSharedStatsStayApart(t *testing.T) {
	s := &Snapshot{TakenAt: t0, Txns: []Txn{
		{ID: "a", State: CompleteCommit}, {ID: "b", State: CompleteCommit},
		{ID: "c", State: CompleteAbort}, {ID: "d", State: CompleteAbort}, {ID: "e", State: CompleteAbort},
	}}
	s.Sort()
	h := NewHistory(16)
	h.Baseline(s)
	later := t0.Add(time.Minute)
	h.Add([]Event{{At: later, ID: "a", Kind: Committed}, {At: later, ID: "c", Kind: Fenced, Revises: true}})
	h.Baseline(&Snapshot{TakenAt: later, Txns: []Txn{{ID: "d", State: CompleteCommit}}})

	want := map[string]IDStats{
		"a": {Commits: 2, Last: Committed, LastAt: later},
		"b": {Commits: 1, Last: Committed, LastAt: t0},
		"c": {Aborts: 1, Last: Fenced, LastAt: t0},
		"d": {Commits: 1, Aborts: 1, Last: Committed, LastAt: later},
		"e": {Aborts: 1, Last: Aborted, LastAt: t0},
	}
	for id, w := range want {
		got := h.Stats(id)
		if got.Commits != w.Commits || got.Aborts != w.Aborts || got.Last != w.Last || !got.LastAt.Equal(w.LastAt) {
			t.Errorf("%s: %+v, want %+v", id, got, w)
		}
	}
	if got := h.Stats("a").Recent; len(got) != 1 || got[0].Kind != Committed {
		t.Errorf("a's recent events: %v", got)
	}
	if got := h.Stats("b").Recent; len(got) != 0 {
		t.Errorf("b took a's events: %v", got)
	}
}
