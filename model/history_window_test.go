package model

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// logged is an event read from the coordinator's log.
func logged(at time.Time, id string, k EventKind, begun time.Time, parts int32) Event {
	return Event{At: at, ID: id, Kind: k, ProducerID: 7, ProducerEpoch: 3, Logged: true, Begun: begun, Parts: parts}
}

// TestWindowCounts: an outcome counts in the last 5 (60) minutes until its
// minute is 5 (60) minutes old, and since start for ever.
func TestWindowCounts(t *testing.T) {
	m := t0 // 12:00:00, a minute's start
	tests := []struct {
		name   string
		events []Event
		now    time.Time
		want   Window
		since  [2]int // commits, aborts since start
	}{
		{"none", nil, m, Window{}, [2]int{}},
		{"just now", []Event{logged(m, "a", Committed, time.Time{}, 1)}, m, Window{1, 0, 1, 0}, [2]int{1, 0}},
		{"4m59.999s: still in 5 min", []Event{logged(m, "a", Committed, time.Time{}, 1)}, m.Add(5*time.Minute - time.Millisecond),
			Window{1, 0, 1, 0}, [2]int{1, 0}},
		{"exactly 5 min: out of 5 min, in 60", []Event{logged(m, "a", Committed, time.Time{}, 1)}, m.Add(5 * time.Minute),
			Window{0, 0, 1, 0}, [2]int{1, 0}},
		{"59m59s: still in 60 min", []Event{logged(m, "a", TimedOut, time.Time{}, 1)}, m.Add(time.Hour - time.Second),
			Window{0, 0, 0, 1}, [2]int{0, 1}},
		{"exactly 60 min: only since start", []Event{logged(m, "a", TimedOut, time.Time{}, 1)}, m.Add(time.Hour),
			Window{}, [2]int{0, 1}},
		{"every abort counts", []Event{
			logged(m, "a", Aborted, time.Time{}, 1), logged(m, "a", TimedOut, time.Time{}, 1),
			logged(m, "a", Fenced, time.Time{}, 1), logged(m, "a", ForceTerminated, time.Time{}, 1),
		}, m.Add(time.Second), Window{0, 4, 0, 4}, [2]int{0, 4}},
		{"steps and the id's life are no outcome", []Event{
			logged(m, "a", Began, time.Time{}, 0), logged(m, "a", Added, time.Time{}, 0),
			logged(m, "a", PreparedCommit, time.Time{}, 0), logged(m, "a", PreparedAbort, time.Time{}, 0),
			logged(m, "a", Initialized, time.Time{}, 0), logged(m, "a", Expired, time.Time{}, 0),
			{At: m, ID: "a", Kind: Ended},
		}, m, Window{}, [2]int{}},
		{"poll events count too", []Event{{At: m, ID: "a", Kind: Committed}, {At: m.Add(3 * time.Minute), ID: "a", Kind: Aborted}},
			m.Add(6 * time.Minute), Window{0, 1, 1, 1}, [2]int{1, 1}},
		{"late event an hour behind the newest: since start only", []Event{
			logged(m.Add(time.Hour), "a", Committed, time.Time{}, 1), logged(m, "a", Committed, time.Time{}, 1),
		}, m.Add(time.Hour), Window{1, 0, 1, 0}, [2]int{2, 0}},
		{"a little out of order", []Event{
			logged(m.Add(2*time.Minute), "a", Committed, time.Time{}, 1), logged(m, "a", Aborted, time.Time{}, 1),
		}, m.Add(5 * time.Minute), Window{1, 0, 1, 1}, [2]int{1, 1}},
		{"our clock behind the coordinator's", []Event{logged(m.Add(time.Minute), "a", Committed, time.Time{}, 1)}, m,
			Window{1, 0, 1, 0}, [2]int{1, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := NewHistory(64)
			h.Add(tt.events)
			st := h.Stats("a")
			if got := st.Window(tt.now); got != tt.want {
				t.Errorf("window = %+v, want %+v", got, tt.want)
			}
			if st.Commits != tt.since[0] || st.Aborts != tt.since[1] {
				t.Errorf("since start = %d/%d, want %d/%d", st.Commits, st.Aborts, tt.since[0], tt.since[1])
			}
		})
	}
}

// TestWindowDropsOldMinutes: an id busy for hours holds at most 60 minutes
// of counts, and the last hour's are right.
func TestWindowDropsOldMinutes(t *testing.T) {
	h := NewHistory(1)
	for i := range 3 * 60 {
		at := t0.Add(time.Duration(i) * time.Minute)
		h.Add([]Event{logged(at, "a", Committed, at.Add(-time.Second), 1), logged(at.Add(time.Second), "a", Aborted, at, 1)})
	}
	st := h.Stats("a")
	if n := len(st.log.mins); n != 60 {
		t.Errorf("%d minutes kept, want 60", n)
	}
	now := t0.Add(179 * time.Minute)
	if got, want := st.Window(now), (Window{5, 5, 60, 60}); got != want {
		t.Errorf("window = %+v, want %+v", got, want)
	}
	if st.Commits != 180 || st.Aborts != 180 {
		t.Errorf("since start = %d/%d", st.Commits, st.Aborts)
	}
	if got := st.Window(now.Add(2 * time.Hour)); got != (Window{}) {
		t.Errorf("two hours later: %+v", got)
	}
}

// TestFinishedTxns: each outcome is one finished transaction with what its
// event knew; a Diff's unknown begin and partitions stay unknown.
func TestFinishedTxns(t *testing.T) {
	b := t0.Add(-1500 * time.Millisecond)
	tests := []struct {
		name  string
		e     Event
		want  FinishedTxn
		dur   time.Duration
		known bool
	}{
		{"logged commit", logged(t0, "a", Committed, b, 3),
			FinishedTxn{BegunMs: b.UnixMilli(), EndMs: t0.UnixMilli(), ProducerID: 7, ProducerEpoch: 3, Kind: Committed, Parts: 3, Logged: true},
			1500 * time.Millisecond, true},
		{"logged force-terminate", logged(t0, "a", ForceTerminated, b, 0),
			FinishedTxn{BegunMs: b.UnixMilli(), EndMs: t0.UnixMilli(), ProducerID: 7, ProducerEpoch: 3, Kind: ForceTerminated, Parts: 0, Logged: true},
			1500 * time.Millisecond, true},
		{"poll abort at timeout", Event{At: t0, ID: "a", Kind: TimedOut, ProducerID: 9, ProducerEpoch: 1},
			FinishedTxn{EndMs: t0.UnixMilli(), ProducerID: 9, ProducerEpoch: 1, Kind: TimedOut, Parts: -1}, 0, false},
		{"poll event with parts set: still unknown", Event{At: t0, ID: "a", Kind: Committed, Parts: 4},
			FinishedTxn{EndMs: t0.UnixMilli(), Kind: Committed, Parts: -1}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := NewHistory(4)
			h.Add([]Event{tt.e})
			got := h.Stats("a").Finished()
			if len(got) != 1 || got[0] != tt.want {
				t.Fatalf("finished = %+v, want %+v", got, tt.want)
			}
			d, ok := got[0].Duration()
			if d != tt.dur || ok != tt.known {
				t.Errorf("duration = %v %v, want %v %v", d, ok, tt.dur, tt.known)
			}
			if _, ok := got[0].Begun(); ok != tt.known {
				t.Errorf("begun known = %v", ok)
			}
		})
	}
}

// TestFinishedKeepsTheLast: the last RecentTxns outcomes, oldest first; a
// slice handed out before does not change under its holder.
func TestFinishedKeepsTheLast(t *testing.T) {
	h := NewHistory(4)
	var held []FinishedTxn
	for i := range 20 {
		at := t0.Add(time.Duration(i) * time.Second)
		h.Add([]Event{logged(at, "a", Began, time.Time{}, 0), logged(at, "a", Added, time.Time{}, 0),
			logged(at, "a", PreparedCommit, time.Time{}, 0), logged(at.Add(100*time.Millisecond), "a", Committed, at, int32(i))})
		if i == RecentTxns {
			held = h.Stats("a").Finished()
		}
	}
	st := h.Stats("a")
	got := st.Finished()
	if len(got) != RecentTxns || got[0].Parts != 20-RecentTxns || got[RecentTxns-1].Parts != 19 {
		t.Errorf("finished = %+v", got)
	}
	if held[0].Parts != 1 {
		t.Errorf("a slice handed out changed: %+v", held[0])
	}
	if st.Commits != 20 {
		t.Errorf("commits = %d", st.Commits)
	}
	// Recent keeps beginnings and ends only; the ring keeps every step.
	for _, e := range st.Recent {
		if e.Kind != Began && e.Kind != Committed {
			t.Errorf("recent holds %s", e.Kind)
		}
	}
	if h.Len() != 4 || h.Latest(1)[0].Kind != Committed || h.Latest(4)[3].Kind != Began {
		t.Errorf("ring = %v", kinds(h.Latest(4)))
	}
}

// TestRecentKeepsTheIDsLife: beginnings, every outcome, initializations,
// expiry and poll-only ends stay in the id's recent events; the log's steps
// inside a transaction do not, and are no outcome (Last).
func TestRecentKeepsTheIDsLife(t *testing.T) {
	all := []EventKind{Began, Added, PreparedCommit, Committed, PreparedAbort, Aborted, TimedOut, Fenced,
		ForceTerminated, Initialized, Expired, Ended}
	want := []EventKind{Began, Committed, Aborted, TimedOut, Fenced, ForceTerminated, Initialized, Expired, Ended}
	for _, k := range all {
		h := NewHistory(4)
		h.Add([]Event{logged(t0, "a", Committed, time.Time{}, 1), logged(t0.Add(time.Second), "a", k, time.Time{}, 1)})
		st := h.Stats("a")
		kept := len(st.Recent) == 2
		if kept != slices.Contains(want, k) {
			t.Errorf("%s kept in recent: %v", k, kept)
		}
		wantLast := Committed
		if k.Ends() || k == Ended {
			wantLast = k
		}
		if st.Last != wantLast {
			t.Errorf("after %s, last = %s, want %s", k, st.Last, wantLast)
		}
	}
}

// TestRevisedAbortIsAFencedTxn: a Diff that learns an abort was a fence
// relabels the finished transaction too, counts unchanged.
func TestRevisedAbortIsAFencedTxn(t *testing.T) {
	h := NewHistory(8)
	h.Add([]Event{{At: t0, ID: "a", Kind: Committed}, {At: t0.Add(time.Second), ID: "a", Kind: Aborted}})
	held := h.Stats("a").Finished()
	h.Add([]Event{{At: t0.Add(2 * time.Second), ID: "a", Kind: Fenced, Revises: true, Detail: "epoch 2→4"}})
	st := h.Stats("a")
	got := fmt.Sprint(st.Finished()[0].Kind, ",", st.Finished()[1].Kind)
	if got != "committed,fenced" || st.Aborts != 1 || st.Window(t0).Aborts5m != 1 {
		t.Errorf("finished %s, aborts %d, window %+v", got, st.Aborts, st.Window(t0))
	}
	if held[1].Kind != Aborted {
		t.Errorf("a slice handed out changed: %s", held[1].Kind)
	}
}

// TestLoggedAbortThenBeginIsNoFence: the log's abort followed by a new
// transaction stays an abort by its producer.
func TestLoggedAbortThenBeginIsNoFence(t *testing.T) {
	h := NewHistory(8)
	h.Add([]Event{logged(t0, "a", Aborted, t0.Add(-time.Second), 2), logged(t0.Add(time.Millisecond), "a", Began, time.Time{}, 0)})
	st := h.Stats("a")
	if st.Last != Aborted || st.Aborts != 1 || st.Finished()[0].Kind != Aborted {
		t.Errorf("stats = %+v, finished %+v", st, st.Finished())
	}
}

// TestHistorySince: History began with its first snapshot, or its first
// event when it had none.
func TestHistorySince(t *testing.T) {
	h := NewHistory(4)
	if !h.Since().IsZero() {
		t.Errorf("empty history since %v", h.Since())
	}
	h.Baseline(snap(t0))
	h.Add([]Event{{At: t0.Add(time.Minute), ID: "a", Kind: Began}})
	if !h.Since().Equal(t0) {
		t.Errorf("since %v, want the baseline's %v", h.Since(), t0)
	}
	h = NewHistory(4)
	h.Add([]Event{{At: t0.Add(time.Minute), ID: "a", Kind: Began}})
	if !h.Since().Equal(t0.Add(time.Minute)) {
		t.Errorf("since %v, want the first event's", h.Since())
	}
	if (*History)(nil).Since() != (time.Time{}) {
		t.Error("nil history has a start")
	}
}

// TestRevisedAbortOfABusyID: the relabelled abort is the right one among
// more than RecentTxns outcomes.
func TestRevisedAbortOfABusyID(t *testing.T) {
	h := NewHistory(64)
	for i := range 11 {
		k := Committed
		if i == 10 {
			k = Aborted
		}
		h.Add([]Event{{At: t0.Add(time.Duration(i) * time.Second), ID: "a", Kind: k}})
	}
	h.Add([]Event{{At: t0.Add(time.Minute), ID: "a", Kind: Fenced, Revises: true}})
	var got []string
	for _, f := range h.Stats("a").Finished() {
		got = append(got, string(f.Kind))
	}
	want := "committed committed committed committed committed committed committed fenced"
	if fmt.Sprint(strings.Join(got, " ")) != want {
		t.Errorf("finished = %v", got)
	}
}
