package model

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// to is a takeover of <prefix>-<subtask>-<checkpoint> seen at t0+at.
func to(at time.Duration, subtask int, checkpoint int) Takeover {
	return Takeover{At: t0.Add(at), ID: fmt.Sprintf("orders-enricher-v1-%d-%d", subtask, checkpoint), Subtask: subtask}
}

func TestCollision(t *testing.T) {
	s := time.Second
	tests := []struct {
		name  string
		ts    []Takeover
		now   time.Duration // after t0
		wantN int
		want  bool
	}{
		{"none", nil, 0, 0, false},
		{"a single restart at parallelism 4: one open transaction per subtask, one burst",
			[]Takeover{to(0, 0, 17), to(0, 1, 17), to(0, 2, 17), to(2*s, 3, 17)}, 10 * s, 4, false},
		{"a single restart with pre-committed transactions: two ids per subtask, one burst",
			[]Takeover{to(0, 0, 17), to(0, 0, 18), to(0, 1, 17), to(2*s, 1, 18)}, 10 * s, 4, false},
		{"a single restart caught over several polls (slow refresh) is still one burst",
			[]Takeover{to(0, 0, 17), to(9*s, 0, 18), to(9*s, 0, 19)}, 20 * s, 3, false},
		{"two jobs fencing each other at every checkpoint",
			[]Takeover{to(0, 0, 5), to(2*s, 0, 6), to(4*s, 0, 7), to(11*s, 0, 9)}, 12 * s, 4, true},
		{"three ids in two bursts",
			[]Takeover{to(0, 0, 5), to(0, 0, 6), to(30*s, 0, 40)}, 31 * s, 3, true},
		{"two restarts within the window: two ids, two bursts",
			[]Takeover{to(0, 0, 5), to(60*s, 0, 40)}, 61 * s, 2, false},
		{"three restarts within the window (a crash loop) look alike",
			[]Takeover{to(0, 0, 5), to(60*s, 0, 40), to(120*s, 0, 80)}, 121 * s, 3, true},
		{"region failovers: each subtask restarted once, at different times",
			[]Takeover{to(0, 1, 5), to(60*s, 2, 40), to(120*s, 3, 80), to(180*s, 4, 120)}, 181 * s, 4, false},
		{"a busy producer on one id, several commits between every two polls",
			[]Takeover{to(0, 0, 1), to(2*s, 0, 1), to(14*s, 0, 1), to(30*s, 0, 1), to(60*s, 0, 1)}, 61 * s, 5, false},
		{"older than the window does not count",
			[]Takeover{to(0, 0, 5), to(2*s, 0, 6), to(11*s, 0, 7)}, CollisionWindow + 5*s, 1, false},
		{"still inside the window",
			[]Takeover{to(0, 0, 5), to(2*s, 0, 6), to(11*s, 0, 7)}, CollisionWindow, 3, true},
		{"takeovers after now (clock skew between polls) are ignored",
			[]Takeover{to(0, 0, 5), to(2*s, 0, 6), to(11*s, 0, 7)}, 5 * s, 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, ok := Collision(tt.ts, t0.Add(tt.now))
			if n != tt.wantN || ok != tt.want {
				t.Errorf("Collision = %d, %v; want %d, %v", n, ok, tt.wantN, tt.want)
			}
		})
	}
}

func TestIsTakeover(t *testing.T) {
	tests := []struct {
		e    Event
		want bool
	}{
		{Event{Kind: Fenced}, true},
		{Event{Kind: Fenced, EpochJump: 1}, true},
		{Event{Kind: Ended, EpochJump: 2}, true},
		{Event{Kind: Ended, EpochJump: 1}, false},
		{Event{Kind: Ended}, false},
		{Event{Kind: Ended, EpochJump: 1, Reinit: true}, true},
		{Event{Kind: Committed, EpochJump: 3}, false},
		{Event{Kind: Aborted, EpochJump: 2}, false},
		{Event{Kind: TimedOut, EpochJump: 2}, false},
		{Event{Kind: Began}, false},
	}
	for _, tt := range tests {
		if got := IsTakeover(tt.e); got != tt.want {
			t.Errorf("IsTakeover(%s jump %d) = %v", tt.e.Kind, tt.e.EpochJump, got)
		}
	}
}

// TestDiffEpochJump: a fence seen after the new owner already began (Kafka 4, transaction
// version 2: Ongoing epoch e, then Ongoing epoch e+2 a poll later) carries its jump, and so
// do the other ends; a new producer id carries none.
func TestDiffEpochJump(t *testing.T) {
	start := t0.Add(-time.Second)
	later := t0.Add(time.Second)
	p2 := t0.Add(2 * time.Second)
	tests := []struct {
		name       string
		prev, next Txn
		want       []string
		jump       int16
	}{
		{"replaced with a jump of two", tx("a", Ongoing, 1, 4, start), tx("a", Ongoing, 1, 6, later),
			[]string{"a:ended", "a:began"}, 2},
		{"replaced with a jump of one", tx("a", Ongoing, 1, 4, start), tx("a", Ongoing, 1, 5, later),
			[]string{"a:ended", "a:began"}, 1},
		{"fenced to Empty", tx("a", Ongoing, 1, 4, start), withOutcome(tx("a", Empty, 1, 6, time.Time{}), CompleteAbort),
			[]string{"a:fenced"}, 2},
		{"committed", tx("a", Ongoing, 1, 4, start), tx("a", CompleteCommit, 1, 5, time.Time{}),
			[]string{"a:committed"}, 1},
		{"new producer id", tx("a", Ongoing, 1, 4, start), withOutcome(tx("a", Empty, 2, 9, time.Time{}), CompleteAbort),
			[]string{"a:fenced"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs := Diff(tv2(snap(t0, tt.prev)), tv2(snap(p2, tt.next)))
			if got := kinds(evs); !slices.Equal(got, tt.want) {
				t.Fatalf("events %v, want %v", got, tt.want)
			}
			if evs[0].EpochJump != tt.jump {
				t.Errorf("jump %d, want %d", evs[0].EpochJump, tt.jump)
			}
			if len(evs) > 1 && evs[1].EpochJump != 0 {
				t.Errorf("began carries a jump %d", evs[1].EpochJump)
			}
		})
	}
}

// TestProblemsPrefixCollision: the history remembers takeovers per KafkaSink prefix, and
// the problem shows on the prefix's open ids and on its ids taken over recently, not on
// its old finished ids, other prefixes, or after a single restart.
func TestProblemsPrefixCollision(t *testing.T) {
	h := NewHistory(100)
	id := func(sub, cp int) string { return fmt.Sprintf("orders-enricher-v1-%d-%d", sub, cp) }
	// Two jobs take ids 5..8 of subtask 0 from each other, every 4 s.
	for i := range 4 {
		at := t0.Add(time.Duration(i) * 4 * time.Second)
		h.Add([]Event{
			{At: at, ID: id(0, 5+i), Kind: Ended, EpochJump: 2},
			{At: at, ID: id(0, 5+i), Kind: Began},
			{At: at, ID: "payments-dedup-v3-0-1", Kind: Ended, EpochJump: 4}, // busy, another prefix
		})
	}
	h.Add([]Event{{At: t0, ID: "not-flink", Kind: Fenced}})
	now := t0.Add(13 * time.Second)
	want := "prefix orders-enricher-v1 looks shared: 4 fences in 5m"
	tests := []struct {
		name string
		t    Txn
		now  time.Time
		want bool
	}{
		{"the id now open", Txn{ID: id(0, 9), State: Ongoing}, now, true},
		{"an open id of another subtask of the prefix", Txn{ID: id(3, 9), State: Ongoing}, now, true},
		{"a recently taken-over id, now committed", Txn{ID: id(0, 6), State: CompleteCommit}, now, true},
		{"an old finished id of the prefix", Txn{ID: id(0, 1), State: CompleteCommit}, now, false},
		{"a busy producer of another prefix", Txn{ID: "payments-dedup-v3-0-1", State: Ongoing}, now, false},
		{"an open id that is not a KafkaSink id", Txn{ID: "not-flink", State: Ongoing}, now, false},
		{"once the takeovers are older than the window", Txn{ID: id(0, 9), State: Ongoing}, now.Add(CollisionWindow), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Problems(tt.t, h.Stats(tt.t.ID), nil, Query{}, tt.now)
			if slices.Contains(got, want) != tt.want {
				t.Errorf("Problems = %q; want %q: %v", got, want, tt.want)
			}
		})
	}

	// The list's problem filter uses the same rule.
	s := snap(now, Txn{ID: id(0, 9), State: Ongoing}, Txn{ID: id(0, 1), State: CompleteCommit}, Txn{ID: "x", State: Ongoing})
	if got := ids(s, Rows(s, h, Query{Filter: FilterProblems}, now)); got != id(0, 9) {
		t.Errorf("problems only: %q", got)
	}

	// A single restart of a job at parallelism 3, two ids per subtask: no problem.
	r := NewHistory(100)
	for sub := range 3 {
		r.Add([]Event{{At: t0, ID: id(sub, 7), Kind: Fenced}, {At: t0.Add(2 * time.Second), ID: id(sub, 8), Kind: Ended, EpochJump: 3}})
	}
	for sub := range 3 {
		st := r.Stats(id(sub, 8))
		if len(st.PrefixTakeovers) != 6 {
			t.Errorf("subtask %d: %d takeovers recorded, want 6", sub, len(st.PrefixTakeovers))
		}
		if got := Problems(Txn{ID: id(sub, 8), State: Ongoing}, st, nil, Query{}, t0.Add(time.Minute)); slices.ContainsFunc(got, func(p string) bool {
			return len(p) > 6 && p[:6] == "prefix"
		}) {
			t.Errorf("a single restart is flagged: %q", got)
		}
	}
}

// TestHistoryTakeoversBounded: a prefix under constant collision keeps a bounded, recent
// memory, and what Stats handed out earlier does not change under the caller.
func TestHistoryTakeoversBounded(t *testing.T) {
	h := NewHistory(10)
	const id = "p-0-1"
	h.Add([]Event{{At: t0, ID: id, Kind: Fenced}})
	early := h.Stats(id).PrefixTakeovers
	for i := range 1000 {
		h.Add([]Event{{At: t0.Add(time.Duration(i) * 100 * time.Millisecond), ID: fmt.Sprintf("p-0-%d", i), Kind: Fenced}})
	}
	ts := h.Stats(id).PrefixTakeovers
	if len(ts) != maxTakeoversPerPrefix {
		t.Errorf("%d takeovers kept, want %d", len(ts), maxTakeoversPerPrefix)
	}
	if ts[len(ts)-1].ID != "p-0-999" {
		t.Errorf("newest kept %q", ts[len(ts)-1].ID)
	}
	if len(early) != 1 || early[0].ID != id {
		t.Errorf("an earlier Stats changed under its caller: %v", early)
	}
	// Older than the window relative to the newest: dropped.
	h.Add([]Event{{At: t0.Add(time.Hour), ID: "p-0-5000", Kind: Fenced}})
	if ts := h.Stats(id).PrefixTakeovers; len(ts) != 1 {
		t.Errorf("%d takeovers kept after an hour, want 1", len(ts))
	}
	if st := h.Stats("unrelated"); st.Prefix != "" || st.PrefixTakeovers != nil {
		t.Errorf("a non-KafkaSink id got prefix stats %+v", st)
	}
}
