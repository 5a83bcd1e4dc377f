package model

import (
	"fmt"
	"testing"
	"time"
)

func TestHistoryAddCounts(t *testing.T) {
	h := NewHistory(100)
	h.Add([]Event{
		{At: t0, ID: "a", Kind: Began},
		{At: t0.Add(1), ID: "a", Kind: Committed},
		{At: t0.Add(2), ID: "a", Kind: Began},
		{At: t0.Add(3), ID: "a", Kind: Aborted},
		{At: t0.Add(4), ID: "a", Kind: TimedOut},
		{At: t0.Add(5), ID: "a", Kind: Fenced},
		{At: t0.Add(6), ID: "a", Kind: Ended},
		{At: t0.Add(7), ID: "a", Kind: Began},
		{At: t0.Add(8), ID: "b", Kind: Committed},
	})
	a := h.Stats("a")
	if a.Commits != 1 || a.Aborts != 3 {
		t.Errorf("a: commits %d aborts %d, want 1 and 3", a.Commits, a.Aborts)
	}
	if a.Last != Ended || !a.LastAt.Equal(t0.Add(6)) {
		t.Errorf("a: last %s at %v; a later Began must not replace the last outcome", a.Last, a.LastAt)
	}
	if len(a.Recent) != 8 || a.Recent[7].Kind != Began {
		t.Errorf("a: recent = %v", kinds(a.Recent))
	}
	if b := h.Stats("b"); b.Commits != 1 || b.Last != Committed {
		t.Errorf("b = %+v", b)
	}
	if z := h.Stats("zzz"); z.Commits != 0 || z.Last != "" || z.Recent != nil {
		t.Errorf("unknown id = %+v", z)
	}
	if h.Len() != 9 {
		t.Errorf("Len = %d", h.Len())
	}
}

func TestHistoryRecentBounded(t *testing.T) {
	h := NewHistory(1000)
	for i := 0; i < 3*RecentPerID+1; i++ {
		h.Add([]Event{{At: t0.Add(time.Duration(i)), ID: "a", Kind: Committed, Detail: fmt.Sprint(i)}})
	}
	st := h.Stats("a")
	if len(st.Recent) != RecentPerID {
		t.Fatalf("recent holds %d, want %d", len(st.Recent), RecentPerID)
	}
	if st.Recent[0].Detail != fmt.Sprint(2*RecentPerID+1) || st.Recent[RecentPerID-1].Detail != fmt.Sprint(3*RecentPerID) {
		t.Errorf("recent = %v..%v, want the newest, oldest first", st.Recent[0].Detail, st.Recent[RecentPerID-1].Detail)
	}
	if st.Commits != 3*RecentPerID+1 {
		t.Errorf("commits = %d: counts must not be bounded", st.Commits)
	}
}

func TestHistoryLatestRing(t *testing.T) {
	details := func(evs []Event) string {
		s := ""
		for _, e := range evs {
			s += e.Detail
		}
		return s
	}
	h := NewHistory(3)
	if got := h.Latest(5); len(got) != 0 {
		t.Errorf("empty Latest = %v", got)
	}
	add := func(d string) { h.Add([]Event{{ID: "x", Kind: Began, Detail: d}}) }
	add("1")
	add("2")
	if got := details(h.Latest(5)); got != "21" {
		t.Errorf("Latest = %q want 21", got)
	}
	add("3")
	add("4")
	add("5")
	if got := details(h.Latest(5)); got != "543" {
		t.Errorf("after wrap Latest = %q want 543", got)
	}
	if got := details(h.Latest(2)); got != "54" {
		t.Errorf("Latest(2) = %q want 54", got)
	}
	if got := h.Latest(0); len(got) != 0 {
		t.Errorf("Latest(0) = %v", got)
	}
	if h.Len() != 3 {
		t.Errorf("Len = %d want 3", h.Len())
	}
	if one := NewHistory(0); one.Latest(1) != nil && len(one.Latest(1)) != 0 {
		t.Errorf("capacity 0 history not empty")
	}
}

// The events pane scrolls back through the ring; what lies past either end
// is simply not there.
func TestHistoryLatestFrom(t *testing.T) {
	h := NewHistory(4)
	for _, d := range []string{"1", "2", "3", "4", "5", "6"} {
		h.Add([]Event{{ID: "x", Kind: Began, Detail: d}})
	}
	for _, tc := range []struct {
		skip, n int
		want    string
	}{
		{0, 2, "65"}, {1, 2, "54"}, {2, 5, "43"}, {3, 2, "3"}, {4, 2, ""}, {9, 2, ""}, {-1, 2, "65"}, {1, 0, ""}, {1, -3, ""},
	} {
		got := ""
		for _, e := range h.LatestFrom(tc.skip, tc.n) {
			got += e.Detail
		}
		if got != tc.want {
			t.Errorf("LatestFrom(%d, %d) = %q, want %q", tc.skip, tc.n, got, tc.want)
		}
	}
	if h.Added() != 6 || h.Len() != 4 {
		t.Errorf("Added %d, Len %d; want 6 ever added, 4 kept", h.Added(), h.Len())
	}
	if (*History)(nil).LatestFrom(0, 3) != nil || (*History)(nil).Added() != 0 {
		t.Error("a nil history has events")
	}
}

func TestHistoryBaseline(t *testing.T) {
	h := NewHistory(10)
	s := snap(t0,
		tx("a", CompleteCommit, 1, 0, time.Time{}),
		tx("b", CompleteAbort, 2, 0, time.Time{}),
		withOutcome(tx("c", Empty, 3, 0, time.Time{}), CompleteCommit),
		tx("d", Empty, 4, 0, time.Time{}),
		tx("e", Ongoing, 5, 0, t0),
	)
	h.Baseline(s)
	if h.Len() != 0 {
		t.Errorf("Baseline added %d events", h.Len())
	}
	want := map[string][2]int{"a": {1, 0}, "b": {0, 1}, "c": {1, 0}, "d": {0, 0}, "e": {0, 0}}
	for id, w := range want {
		st := h.Stats(id)
		if st.Commits != w[0] || st.Aborts != w[1] {
			t.Errorf("%s: commits %d aborts %d want %v", id, st.Commits, st.Aborts, w)
		}
	}
	if st := h.Stats("b"); st.Last != Aborted || !st.LastAt.Equal(t0) {
		t.Errorf("b last = %s at %v", st.Last, st.LastAt)
	}
	// Diffing afterwards adds to the baseline, it does not replace it.
	h.Add(Diff(s, snap(t0.Add(time.Second), tx("a", CompleteCommit, 1, 1, time.Time{}))))
	if st := h.Stats("a"); st.Commits != 2 {
		t.Errorf("a commits after diff = %d want 2", st.Commits)
	}
}

func TestHistoryNil(t *testing.T) {
	var h *History
	if st := h.Stats("a"); st.Commits != 0 {
		t.Error("nil history has stats")
	}
	if h.Latest(3) != nil || h.Len() != 0 {
		t.Error("nil history has events")
	}
}

// txnscope's force-terminate leaves the id aborted one epoch up (version 1);
// the job's restart then initializes it again: one fence, one abort counted.
func TestHistoryOneFenceAfterForceTerminate(t *testing.T) {
	p1 := time.Date(2026, 3, 1, 3, 0, 0, 0, time.UTC)
	polls := []*Snapshot{
		snap(p1, tx("a", Ongoing, 1, 5, p1.Add(-time.Second))),
		snap(p1.Add(2*time.Second), tx("a", CompleteAbort, 1, 6, time.Time{})),
		snap(p1.Add(4*time.Second), tx("a", Empty, 1, 7, time.Time{})),
	}
	h := NewHistory(10)
	for i := 1; i < len(polls); i++ {
		h.Add(Diff(polls[i-1], polls[i]))
	}
	st := h.Stats("a")
	if st.Last != Fenced || st.Aborts != 1 || st.Commits != 0 || len(st.Recent) != 1 || h.Len() != 1 {
		t.Errorf("stats %+v, %d events; want one fence", st, h.Len())
	}
}
