package model

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// step is one thing done to a History: a Baseline, events, or a Forget.
type step struct {
	base   *Snapshot
	add    []Event
	forget *Snapshot
}

func (st step) apply(h *History) {
	switch {
	case st.base != nil:
		h.Baseline(st.base)
	case st.forget != nil:
		h.Forget(st.forget)
	default:
		h.Add(st.add)
	}
}

// want is what Stats should say of an id; recent is how many events it keeps.
type want struct {
	commits, aborts int
	last            EventKind
	at              time.Time
	recent          int
}

func closed(id string, st State) Txn { return Txn{ID: id, State: st} }

// TestHistoryBaselineThenEvents: an id the baseline saw counts its outcome
// once, then every event on top, however many; ids it did not see start
// from nothing; every id keeps its own count.
func TestHistoryBaselineThenEvents(t *testing.T) {
	t1, t2, t3 := t0.Add(time.Minute), t0.Add(2*time.Minute), t0.Add(3*time.Minute)
	first := snap(t0, closed("a", CompleteCommit), closed("b", CompleteCommit), closed("c", CompleteAbort),
		closed("d", CompleteAbort), tx("e", Ongoing, 5, 0, t0), closed("f", Empty))
	tests := []struct {
		name  string
		steps []step
		want  map[string]want
	}{
		{"baseline only",
			[]step{{base: first}},
			map[string]want{"a": {1, 0, Committed, t0, 0}, "c": {0, 1, Aborted, t0, 0}, "e": {}, "f": {}, "new": {}}},
		{"committed in the baseline, then changed, then changed again",
			[]step{{base: first}, {add: []Event{{At: t1, ID: "a", Kind: Committed}}}, {add: []Event{{At: t2, ID: "a", Kind: Aborted}}}},
			map[string]want{"a": {1 + 1, 1, Aborted, t2, 2}, "b": {1, 0, Committed, t0, 0}}},
		{"began after the baseline keeps the baseline's outcome",
			[]step{{base: first}, {add: []Event{{At: t1, ID: "a", Kind: Began}}}},
			map[string]want{"a": {1, 0, Committed, t0, 1}, "b": {1, 0, Committed, t0, 0}}},
		{"aborted in the baseline, then committed",
			[]step{{base: first}, {add: []Event{{At: t1, ID: "c", Kind: Committed}}}},
			map[string]want{"c": {1, 1, Committed, t1, 1}, "d": {0, 1, Aborted, t0, 0}}},
		{"aborted in the baseline, then revised a fence",
			[]step{{base: first}, {add: []Event{{At: t1, ID: "c", Kind: Fenced, Revises: true}}}},
			map[string]want{"c": {0, 1, Fenced, t0, 0}, "d": {0, 1, Aborted, t0, 0}}},
		{"committed in the baseline, a revision changes nothing",
			[]step{{base: first}, {add: []Event{{At: t1, ID: "a", Kind: Fenced, Revises: true}}}},
			map[string]want{"a": {1, 0, Committed, t0, 0}}},
		{"ids new after the baseline",
			[]step{{base: first}, {add: []Event{{At: t1, ID: "new", Kind: Began}, {At: t2, ID: "new", Kind: Committed},
				{At: t2, ID: "e", Kind: Aborted}, {At: t2, ID: "f", Kind: Committed}}}},
			map[string]want{"new": {1, 0, Committed, t2, 2}, "e": {0, 1, Aborted, t2, 1}, "f": {1, 0, Committed, t2, 1}}},
		{"a second baseline counts the outcome again for the ids seen before",
			[]step{{base: first}, {add: []Event{{At: t1, ID: "b", Kind: Committed}}},
				{base: snap(t3, closed("a", CompleteAbort), closed("b", CompleteCommit), closed("e", CompleteCommit),
					closed("g", CompleteAbort), tx("c", Ongoing, 3, 0, t3))}},
			map[string]want{"a": {1, 1, Aborted, t3, 0}, "b": {3, 0, Committed, t3, 1}, "c": {0, 1, Aborted, t0, 0},
				"d": {0, 1, Aborted, t0, 0}, "e": {1, 0, Committed, t3, 0}, "g": {0, 1, Aborted, t3, 0}}},
		{"an id of the second baseline changed",
			[]step{{base: first}, {base: snap(t1, closed("g", CompleteCommit))}, {add: []Event{{At: t2, ID: "g", Kind: Aborted}}}},
			map[string]want{"g": {1, 1, Aborted, t2, 1}, "a": {1, 0, Committed, t0, 0}}},
		{"a baseline snapshot out of id order",
			[]step{{base: &Snapshot{TakenAt: t0, Txns: []Txn{closed("z", CompleteCommit), closed("m", CompleteAbort),
				closed("a", CompleteCommit), closed("q", CompleteAbort)}}}},
			map[string]want{"a": {1, 0, Committed, t0, 0}, "m": {0, 1, Aborted, t0, 0}, "q": {0, 1, Aborted, t0, 0},
				"z": {1, 0, Committed, t0, 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := NewHistory(16)
			for _, st := range tt.steps {
				st.apply(h)
			}
			for id, w := range tt.want {
				got := h.Stats(id)
				if got.Commits != w.commits || got.Aborts != w.aborts || got.Last != w.last || !got.LastAt.Equal(w.at) || len(got.Recent) != w.recent {
					t.Errorf("%s: %d commits, %d aborts, last %q at %v, %d recent; want %+v",
						id, got.Commits, got.Aborts, got.Last, got.LastAt, len(got.Recent), w)
				}
			}
		})
	}
}

// TestHistoryBaselineFenceIsATakeover: a baseline abort revised a fence is
// a takeover on its KafkaSink prefix, as an abort seen as an event is.
func TestHistoryBaselineFenceIsATakeover(t *testing.T) {
	h := NewHistory(4)
	h.Baseline(snap(t0, closed("job-3-17", CompleteAbort), closed("job-3-18", CompleteCommit)))
	h.Add([]Event{{At: t0.Add(time.Minute), ID: "job-3-17", Kind: Fenced, Revises: true}})
	st := h.Stats("job-3-18")
	if st.Prefix != "job" || len(st.PrefixTakeovers) != 1 || st.PrefixTakeovers[0].ID != "job-3-17" || !st.PrefixTakeovers[0].At.Equal(t0) {
		t.Errorf("prefix %q takeovers %+v, want job-3-17's at the baseline", st.Prefix, st.PrefixTakeovers)
	}
}

// numbered returns n closed ids id-00000… (every tenth aborted), sorted.
func numbered(at time.Time, n int) *Snapshot {
	s := &Snapshot{TakenAt: at}
	for i := range n {
		st := CompleteCommit
		if i%10 == 3 {
			st = CompleteAbort
		}
		s.Txns = append(s.Txns, closed(fmt.Sprintf("id-%05d", i), st))
	}
	s.Sort()
	return s
}

// listing is a snapshot listing the ids of s from..to.
func listing(s *Snapshot, from, to int) *Snapshot {
	return &Snapshot{TakenAt: s.TakenAt.Add(time.Hour), Txns: slices.Clone(s.Txns[from:to])}
}

// TestHistoryForgetBaseline: Forget counts each id once, whether the
// baseline saw it, events came since, or both, and once it sweeps, drops
// the vanished ids wherever they are kept and keeps the listed ones whole.
func TestHistoryForgetBaseline(t *testing.T) {
	first := numbered(t0, 3000)
	later := t0.Add(time.Minute)
	all := make([]Event, 0, 3000)
	for _, x := range first.Txns {
		all = append(all, Event{At: later, ID: x.ID, Kind: Committed})
	}
	tests := []struct {
		name  string
		steps []step
		// kept are ids still remembered, with their outcomes; gone are forgotten.
		kept map[string]int
		gone []string
	}{
		// 3000 ids ≤ 2×988 + 1024: the ids with events since the baseline are not counted twice.
		{"every baseline id changed, not yet twice the cluster",
			[]step{{base: first}, {add: all}, {forget: listing(first, 0, 988)}},
			map[string]int{"id-00000": 2, "id-02999": 2}, nil},
		{"every baseline id changed, twice the cluster",
			[]step{{base: first}, {add: all}, {forget: listing(first, 0, 987)}},
			map[string]int{"id-00000": 2, "id-00986": 2}, []string{"id-00987", "id-02999"}},
		{"vanished baseline ids are forgotten, listed ones kept",
			[]step{{base: first}, {add: all[5:6]}, {add: all[2500:2501]}, {forget: listing(first, 0, 10)}},
			map[string]int{"id-00000": 1, "id-00005": 2, "id-00009": 1}, []string{"id-00010", "id-02500", "id-02999"}},
		{"ids of two baselines",
			[]step{{base: listing(first, 0, 2000)}, {base: listing(first, 1000, 3000)}, {forget: listing(first, 1990, 2010)}},
			map[string]int{"id-01990": 2, "id-01999": 2, "id-02000": 1, "id-02009": 1}, []string{"id-00000", "id-01989", "id-02010"}},
		{"a second sweep after the first",
			[]step{{base: first}, {add: all[7:8]}, {forget: listing(first, 0, 100)}, {base: numbered(later, 4000)}, {forget: listing(first, 50, 60)}},
			map[string]int{"id-00050": 2, "id-00059": 2}, []string{"id-00007", "id-00049", "id-00060", "id-03999"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := NewHistory(16)
			for _, st := range tt.steps {
				st.apply(h)
			}
			for id, c := range tt.kept {
				if got := h.Stats(id); got.Commits+got.Aborts != c {
					t.Errorf("%s: %+v, want %d outcomes", id, got, c)
				}
			}
			for _, id := range tt.gone {
				if got := h.Stats(id); got.Commits+got.Aborts != 0 || !got.LastAt.IsZero() {
					t.Errorf("%s is still remembered: %+v", id, got)
				}
			}
		})
	}
}

// refHistory is History's counting as it was with one map entry per id:
// the reference the randomized test holds History to.
type refHistory map[string]IDStats

func (r refHistory) baseline(s *Snapshot) {
	for _, t := range s.Txns {
		k, ok := outcomeKind(t)
		if !ok || t.State.Open() {
			continue
		}
		st := r[t.ID]
		if k == Committed {
			st.Commits++
		} else {
			st.Aborts++
		}
		st.Last, st.LastAt = k, s.TakenAt
		r[t.ID] = st
	}
}

func (r refHistory) add(e Event) {
	st, ok := r[e.ID]
	if e.Revises {
		if ok && st.Last == Aborted {
			st.Last = Fenced
			r[e.ID] = st
		}
		return
	}
	switch {
	case e.Kind == Committed:
		st.Commits++
	case e.Kind.IsAbort():
		st.Aborts++
	}
	if e.Kind != Began {
		st.Last, st.LastAt = e.Kind, e.At
	}
	r[e.ID] = st
}

func (r refHistory) forget(s *Snapshot) {
	if len(r) <= 2*len(s.Txns)+forgetSlack {
		return
	}
	for id := range r {
		if _, ok := s.Txn(id); !ok {
			delete(r, id)
		}
	}
}

// TestHistoryMatchesOneEntryPerID runs random baselines, events and
// forgets on History and on the reference, and compares every id's counts.
func TestHistoryMatchesOneEntryPerID(t *testing.T) {
	states := []State{CompleteCommit, CompleteCommit, CompleteAbort, Ongoing, Empty}
	kinds := []EventKind{Began, Committed, Aborted, TimedOut, Fenced, Ended}
	for seed := range uint64(20) {
		rnd := rand.New(rand.NewPCG(seed, 11))
		id := func() string { return fmt.Sprintf("id-%04d", rnd.IntN(3000)) }
		randSnap := func(at time.Time, n int) *Snapshot {
			s := &Snapshot{TakenAt: at}
			seen := map[string]bool{}
			for range n {
				if x := id(); !seen[x] {
					seen[x] = true
					s.Txns = append(s.Txns, Txn{ID: x, State: states[rnd.IntN(len(states))]})
				}
			}
			s.Sort()
			return s
		}
		h, ref := NewHistory(8), refHistory{}
		for i := range 40 {
			at := t0.Add(time.Duration(i) * time.Second)
			switch r := rnd.IntN(10); {
			case r == 0 || i == 0:
				s := randSnap(at, rnd.IntN(2000))
				h.Baseline(s)
				ref.baseline(s)
			case r < 3:
				s := randSnap(at, rnd.IntN(600))
				h.Forget(s)
				ref.forget(s)
			default:
				for range rnd.IntN(200) {
					e := Event{At: at, ID: id(), Kind: kinds[rnd.IntN(len(kinds))]}
					e.Revises = e.Kind == Fenced && rnd.IntN(2) == 0
					h.Add([]Event{e})
					ref.add(e)
				}
			}
			if got, want := h.held(), len(ref); got != want {
				t.Fatalf("seed %d step %d: History holds %d ids, the reference %d", seed, i, got, want)
			}
		}
		for n := range 3000 {
			x := fmt.Sprintf("id-%04d", n)
			got, w := h.Stats(x), ref[x]
			if got.Commits != w.Commits || got.Aborts != w.Aborts || got.Last != w.Last || !got.LastAt.Equal(w.LastAt) {
				t.Fatalf("seed %d, %s: %+v, want %+v", seed, x, got, w)
			}
		}
	}
}
