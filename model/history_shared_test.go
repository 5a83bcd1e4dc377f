package model

import (
	"fmt"
	"slices"
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

// TestForgetBoundsTheHistory: History forgets the ids the cluster no longer
// lists only once it holds more than twice as many (plus the slack), and
// then keeps every id still listed.
func TestForgetBoundsTheHistory(t *testing.T) {
	first := &Snapshot{TakenAt: t0}
	for i := range 3000 {
		first.Txns = append(first.Txns, Txn{ID: fmt.Sprintf("id-%05d", i), State: CompleteCommit})
	}
	first.Sort()
	h := NewHistory(16)
	h.Baseline(first)
	h.Add([]Event{{At: t0, ID: "id-00007", Kind: Aborted}})

	later := &Snapshot{TakenAt: t0.Add(time.Minute), Txns: slices.Clone(first.Txns[:1000])}
	later.Sort()
	h.Forget(later) // 3000 ≤ 2×1000 + slack: nothing forgotten
	if got := h.Stats("id-02999"); got.Commits != 1 {
		t.Fatalf("an id was forgotten before the history was twice the cluster: %+v", got)
	}
	fewer := &Snapshot{TakenAt: t0.Add(2 * time.Minute), Txns: slices.Clone(first.Txns[:10])}
	fewer.Sort()
	h.Forget(fewer)
	if got := h.Stats("id-02999"); got.Commits != 0 || !got.LastAt.IsZero() {
		t.Errorf("a vanished id is still remembered: %+v", got)
	}
	if got := h.Stats("id-00007"); got.Commits != 1 || got.Aborts != 1 || len(got.Recent) != 1 {
		t.Errorf("a listed id lost its history: %+v", got)
	}
	if got := h.Stats("id-00001"); got.Commits != 1 {
		t.Errorf("a listed baseline id lost its history: %+v", got)
	}
}
