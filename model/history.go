package model

// The history store: the events of this session (events.go makes them)
// and what was seen of each id, bounded, for the screens and the exporter.

import (
	"slices"
	"time"
)

// IDStats is what txnscope has seen of one id since it started.
type IDStats struct {
	Commits int
	Aborts  int
	Last    EventKind // last outcome (never Began)
	LastAt  time.Time
	Recent  []Event // newest last, at most RecentPerID
	// Prefix is the id's KafkaSink prefix when it has one and takeovers were seen
	// on that prefix; PrefixTakeovers are those takeovers, oldest first, within
	// CollisionWindow of the latest one (Collision reads them).
	Prefix          string
	PrefixTakeovers []Takeover
	// log holds the finished transactions and the recent counts
	// (history_window.go: Finished, Window), nil until the id's first outcome.
	log *idLog
}

// RecentPerID bounds the per-id event memory.
const RecentPerID = 8

// History accumulates events across polls.
type History struct {
	// byID holds the ids that had events (or a second baseline) since
	// their baseline, and the ids new since.
	byID map[string]*IDStats
	// bases hold the ids seen only in a baseline: Flink's 500,000 ids cost
	// a string header each there (16 bytes) instead of a map entry (60).
	bases []baseline
	// owned counts the entries of bases whose id has moved to byID since.
	owned  int
	ring   []Event
	next   int
	filled bool
	added  int // events ever put in the ring
	// prefixes holds the recent takeovers per KafkaSink prefix (collision.go).
	prefixes map[string][]Takeover
	// since is when History began: its first snapshot or event.
	since time.Time
	// jobs are the outcomes per job (jobs_history.go).
	jobs jobLog
	// baseAts are the times of the snapshots Baseline was given: an
	// outcome stamped with one was seen there, not when it happened.
	baseAts []time.Time
}

// baseline is what one Baseline call saw: the ids whose latest outcome was
// a commit or an abort when the snapshot was taken (at), sorted, their
// strings the snapshot's own.
type baseline struct {
	at                 time.Time
	committed, aborted []string
}

// NewHistory keeps the latest capacity events overall.
func NewHistory(capacity int) *History {
	if capacity < 1 {
		capacity = 1
	}
	return &History{byID: map[string]*IDStats{}, ring: make([]Event, capacity)}
}

// Add records events in order.
func (h *History) Add(evs []Event) {
	if h.since.IsZero() && len(evs) > 0 {
		h.since = evs[0].At
	}
	for _, e := range evs {
		if e.Revises {
			wasAbort := h.stats(e.ID).Last == Aborted
			h.revise(e)
			if st := h.byID[e.ID]; wasAbort && st != nil && st.log != nil {
				st.log.relabel()
				h.jobs.fenced(e.ID, st.LastAt)
			}
			continue
		}
		st := h.own(e.ID)
		switch {
		case e.Kind == Committed:
			st.Commits++
		case e.Kind.IsAbort():
			st.Aborts++
		}
		if e.Kind.Ends() {
			st.addFinished(e)
		}
		if e.Kind.Ends() || e.Kind == Ended {
			h.jobs.add(e)
		}
		// Last is an outcome: the log's steps and the id's own life are not.
		if e.Kind.Ends() || e.Kind == Ended {
			st.Last, st.LastAt = e.Kind, e.At
		}
		h.recordTakeover(e)
		if keptInRecent(e.Kind) {
			st.Recent = append(st.Recent, e)
			if len(st.Recent) > RecentPerID {
				st.Recent = append(st.Recent[:0:0], st.Recent[len(st.Recent)-RecentPerID:]...)
			}
		}
		h.ring[h.next] = e
		h.added++
		h.next++
		if h.next == len(h.ring) {
			h.next, h.filled = 0, true
		}
	}
}

// Baseline records the outcome each id shows in s, the first snapshot (the
// coordinator keeps the latest one), without adding events. The ids seen
// nowhere before go to one baseline, the others count it as an outcome.
func (h *History) Baseline(s *Snapshot) {
	if h.since.IsZero() {
		h.since = s.TakenAt
	}
	h.baseAts = append(h.baseAts, s.TakenAt)
	b := baseline{at: s.TakenAt}
	var nc, na int
	for _, t := range s.Txns {
		if k, fresh := h.baseKind(t); fresh && k == Committed {
			nc++
		} else if fresh {
			na++
		}
	}
	// Sized exactly: append's spare capacity would cost up to 16 bytes an id.
	b.committed, b.aborted = make([]string, 0, nc), make([]string, 0, na)
	for _, t := range s.Txns {
		k, fresh := h.baseKind(t)
		switch {
		case fresh && k == Committed:
			b.committed = append(b.committed, t.ID)
		case fresh:
			b.aborted = append(b.aborted, t.ID)
		case k != "":
			st := h.own(t.ID)
			if k == Committed {
				st.Commits++
			} else {
				st.Aborts++
			}
			st.Last, st.LastAt = k, s.TakenAt
		}
	}
	if len(b.committed)+len(b.aborted) == 0 {
		return
	}
	// Snapshots come sorted by id; the lookups must not depend on it.
	slices.Sort(b.committed)
	slices.Sort(b.aborted)
	h.bases = append(h.bases, b)
}

// baseKind is the outcome t shows to Baseline ("" for none, or an open
// transaction), and whether History knows nothing of t's id yet.
func (h *History) baseKind(t Txn) (k EventKind, fresh bool) {
	k, ok := outcomeKind(t)
	if !ok || t.State.Open() {
		return "", false
	}
	if _, seen := h.byID[t.ID]; seen {
		return k, false
	}
	_, seen := h.base(t.ID)
	return k, !seen
}

// base returns what a baseline saw of id.
func (h *History) base(id string) (IDStats, bool) {
	for _, b := range h.bases {
		if _, ok := slices.BinarySearch(b.committed, id); ok {
			return IDStats{Commits: 1, Last: Committed, LastAt: b.at}, true
		}
		if _, ok := slices.BinarySearch(b.aborted, id); ok {
			return IDStats{Aborts: 1, Last: Aborted, LastAt: b.at}, true
		}
	}
	return IDStats{}, false
}

// stats is what has been seen of id, its prefix's takeovers left out.
func (h *History) stats(id string) IDStats {
	if st := h.byID[id]; st != nil {
		return *st
	}
	st, _ := h.base(id)
	return st
}

// own returns id's IDStats to change: a new one, starting from what its
// baseline saw, the first time.
func (h *History) own(id string) *IDStats {
	if st := h.byID[id]; st != nil {
		return st
	}
	c := &IDStats{}
	if b, ok := h.base(id); ok {
		*c = b
		h.owned++
	}
	h.byID[id] = c
	return c
}

// held is how many ids History remembers.
func (h *History) held() int {
	n := len(h.byID) - h.owned
	for _, b := range h.bases {
		n += len(b.committed) + len(b.aborted)
	}
	return n
}

// forgetSlack is how many ids beyond twice the snapshot's History keeps
// before Forget sweeps: small clusters never lose a thing.
const forgetSlack = 1024

// Forget drops what was seen of the ids s no longer lists, once History
// holds twice as many ids as s (plus forgetSlack): Flink names a new id per
// checkpoint and the cluster expires the old ones after a week, so without
// it the history of a long-running TUI grows without end. A sweep visits
// every id, but only after as many ids have vanished as s holds.
func (h *History) Forget(s *Snapshot) {
	if s == nil || h.held() <= 2*len(s.Txns)+forgetSlack {
		return
	}
	for id := range h.byID {
		if _, ok := s.Txn(id); !ok {
			delete(h.byID, id)
		}
	}
	bases := h.bases[:0]
	for _, b := range h.bases {
		b.committed, b.aborted = h.keep(b.committed, s), h.keep(b.aborted, s)
		if len(b.committed)+len(b.aborted) > 0 {
			bases = append(bases, b)
		}
	}
	clear(h.bases[len(bases):])
	h.bases, h.owned = bases, 0
	h.jobs.keep(s)
}

// keep returns the baseline ids s still lists that have not moved to byID,
// in a slice of their own size when some were dropped.
func (h *History) keep(ids []string, s *Snapshot) []string {
	n := len(ids)
	ids = slices.DeleteFunc(ids, func(id string) bool {
		_, moved := h.byID[id]
		_, listed := s.Txn(id)
		return moved || !listed
	})
	if len(ids) == n {
		return ids
	}
	if len(ids) == 0 {
		return nil
	}
	// A copy, so that the old array is freed.
	out := make([]string, len(ids))
	copy(out, ids)
	return out
}

// Stats returns what has been seen of id (zero value when nothing).
func (h *History) Stats(id string) IDStats {
	if h == nil {
		return IDStats{}
	}
	out := h.stats(id)
	if len(h.prefixes) > 0 {
		if f, ok := ParseFlinkID(id); ok {
			if ts := h.prefixes[f.Prefix]; len(ts) > 0 {
				out.Prefix, out.PrefixTakeovers = f.Prefix, ts
			}
		}
	}
	return out
}

// Since is when History began keeping what it holds: the time of its first
// snapshot (or event); the zero time before.
func (h *History) Since() time.Time {
	if h == nil {
		return time.Time{}
	}
	return h.since
}

// Latest returns up to n events, newest first.
func (h *History) Latest(n int) []Event { return h.LatestFrom(0, n) }

// LatestFrom is up to n of the kept events, newest first, after the newest
// skip of them.
func (h *History) LatestFrom(skip, n int) []Event {
	if h == nil {
		return nil
	}
	size := h.Len()
	skip = min(max(skip, 0), size)
	n = max(min(n, size-skip), 0)
	out := make([]Event, 0, n)
	for k := skip + 1; k <= skip+n; k++ {
		idx := (h.next - k + len(h.ring)) % len(h.ring)
		out = append(out, h.ring[idx])
	}
	return out
}

// Added counts every event ever added, kept or since dropped: a place in the
// stream that newer events do not move.
func (h *History) Added() int {
	if h == nil {
		return 0
	}
	return h.added
}

// Len is the number of events kept.
func (h *History) Len() int {
	if h == nil {
		return 0
	}
	if h.filled {
		return len(h.ring)
	}
	return h.next
}
