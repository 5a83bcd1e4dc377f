package model

import (
	"fmt"
	"time"
)

// EventKind is something txnscope saw happen to a transactional.id between two polls.
type EventKind string

const (
	Began     EventKind = "began"
	Committed EventKind = "committed"
	Aborted   EventKind = "aborted"
	// TimedOut: an Ongoing transaction past its timeout that the coordinator aborted.
	TimedOut EventKind = "aborted at timeout"
	// Fenced: the epoch was bumped while a transaction was open (another producer
	// took the id, or it was force-terminated).
	Fenced EventKind = "fenced"
	// Ended: the transaction finished but the cluster did not say how.
	Ended EventKind = "ended"
)

// IsAbort reports whether the event is one of the ways a transaction gets aborted.
func (k EventKind) IsAbort() bool { return k == Aborted || k == TimedOut || k == Fenced }

// Event is one observed change.
type Event struct {
	At            time.Time
	ID            string
	Kind          EventKind
	ProducerID    int64
	ProducerEpoch int16
	Detail        string
	// EpochJump is how far the producer epoch went up between the two polls, for
	// the events that end a transaction (0 otherwise). The collision rule reads it.
	EpochJump int16
	// Revises marks a Fenced event that says what the id's last abort really was
	// instead of reporting another transaction (fence.go): History relabels that
	// abort rather than counting a second one.
	Revises bool
}

// Diff compares two consecutive snapshots (both sorted by id) and returns what
// happened in between, in id order. The first snapshot is a baseline: pass a nil
// prev and nothing is reported.
func Diff(prev, next *Snapshot) []Event {
	if prev == nil || next == nil {
		return nil
	}
	var out []Event
	i, j := 0, 0
	for i < len(prev.Txns) || j < len(next.Txns) {
		switch {
		case j >= len(next.Txns) || (i < len(prev.Txns) && prev.Txns[i].ID < next.Txns[j].ID):
			i++ // the id expired or is no longer visible: nothing to say
		case i >= len(prev.Txns) || next.Txns[j].ID < prev.Txns[i].ID:
			out = appendNew(out, next.TakenAt, next.Txns[j])
			j++
		default:
			out = appendChange(out, prev.TakenAt, next.TakenAt, prev.Txns[i], next.Txns[j], next.EpochBumpsOnEnd)
			i++
			j++
		}
	}
	return out
}

func ev(at time.Time, t Txn, k EventKind, detail string) Event {
	return Event{At: at, ID: t.ID, Kind: k, ProducerID: t.ProducerID, ProducerEpoch: t.ProducerEpoch, Detail: detail}
}

// appendNew handles an id seen for the first time after the baseline.
func appendNew(out []Event, at time.Time, n Txn) []Event {
	if n.State.Open() {
		return append(out, ev(at, n, Began, ""))
	}
	if k, ok := outcomeKind(n); ok {
		return append(out, ev(at, n, k, "began and ended between polls"))
	}
	return out
}

func appendChange(out []Event, prevAt, at time.Time, p, n Txn, tv2 bool) []Event {
	out = appendRevision(out, at, p, n, tv2)
	pidChanged := p.ProducerID != n.ProducerID
	switch {
	case p.State.Open() && n.State.Open():
		if !MovedOn(p, n) {
			return out
		}
		// The coordinator moved on to a new transaction between polls. A
		// transaction last seen in Prepare* had its outcome decided already;
		// otherwise the log may tell (kafkaadmin reads it).
		outcome := decided(p)
		if outcome == "" {
			outcome = n.PrevOutcome
		}
		out = append(out, ended(prevAt, at, p, n, outcome, tv2)...)
		return append(out, ev(at, n, Began, ""))
	case p.State.Open():
		if n.PrevOutcome != "" && n.State != Empty {
			// The log says how p's transaction ended; n shows a later one,
			// begun and ended between the polls too.
			out = append(out, ended(prevAt, at, p, n, n.PrevOutcome, tv2)...)
			if k, ok := outcomeKind(n); ok {
				out = append(out, ev(at, n, k, "began and ended between polls"))
			}
			return out
		}
		return append(out, ended(prevAt, at, p, n, outcomeOf(n), tv2)...)
	case n.State.Open():
		return append(out, ev(at, n, Began, ""))
	default:
		// Both idle: a whole transaction can pass between polls; it shows as a new
		// outcome or a new epoch.
		if k, ok := outcomeKind(n); ok && (n.State != p.State || n.ProducerEpoch != p.ProducerEpoch || pidChanged) {
			return append(out, ev(at, n, k, "began and ended between polls"))
		}
		return out
	}
}

// MovedOn reports whether the id went from p's open transaction straight to
// another open one, n, between two polls.
func MovedOn(p, n Txn) bool {
	if !p.State.Open() || !n.State.Open() {
		return false
	}
	// Prepare* may carry the epoch bump of transaction version 2; the start
	// time is what identifies the transaction.
	startsMatch := p.Start.IsZero() || n.Start.IsZero() || p.Start.Equal(n.Start)
	same := p.ProducerID == n.ProducerID && startsMatch && (n.ProducerEpoch == p.ProducerEpoch || n.State != Ongoing)
	return !same
}

// outcomeOf is what the coordinator (or the log, on kfake) says about the last
// transaction of n: CompleteCommit, CompleteAbort or "".
func outcomeOf(n Txn) State {
	switch n.State {
	case CompleteCommit, CompleteAbort, PrepareCommit, PrepareAbort:
		if n.State == PrepareCommit {
			return CompleteCommit
		}
		if n.State == PrepareAbort {
			return CompleteAbort
		}
		return n.State
	}
	return n.Outcome
}

// decided is the outcome a transaction in PrepareCommit or PrepareAbort is bound
// to reach; "" for any other state.
func decided(t Txn) State {
	switch t.State {
	case PrepareCommit:
		return CompleteCommit
	case PrepareAbort:
		return CompleteAbort
	}
	return ""
}

func outcomeKind(n Txn) (EventKind, bool) {
	switch outcomeOf(n) {
	case CompleteCommit:
		return Committed, true
	case CompleteAbort:
		return Aborted, true
	}
	return "", false
}

// ended classifies how p's transaction finished, given what n shows now. tv2:
// the brokers bump the epoch on every commit and abort (Snapshot.EpochBumpsOnEnd).
func ended(prevAt, at time.Time, p, n Txn, outcome State, tv2 bool) []Event {
	bump := int(n.ProducerEpoch) - int(p.ProducerEpoch)
	evs := endedKind(prevAt, at, p, n, outcome, tv2, bump)
	// A new producer id restarts the epochs: its jump tells nothing.
	if bump > 0 && p.ProducerID == n.ProducerID {
		evs[0].EpochJump = int16(min(bump, 1<<15-1))
	}
	return evs
}

func endedKind(prevAt, at time.Time, p, n Txn, outcome State, tv2 bool, bump int) []Event {
	if outcome == CompleteCommit {
		return []Event{ev(at, n, Committed, "")}
	}
	if timedOut(prevAt, at, p) {
		age := at.Sub(p.Start).Round(time.Second)
		return []Event{ev(at, n, TimedOut, fmt.Sprintf("open %s, timeout %s", age, p.Timeout()))}
	}
	// A new producer id, an explicit PrepareEpochFence, or an abort already
	// decided and then an InitProducerId on top (initAfter) is a fence whatever
	// the version.
	fenced := p.State == PrepareEpochFence || p.ProducerID != n.ProducerID ||
		(p.State == PrepareAbort && initAfter(p, n, tv2))
	if tv2 {
		// Every end bumps the epoch, and a busy producer ends many transactions
		// between two polls: only the id back in Empty (an InitProducerId came in,
		// which bumps once to fence and once more for the new producer) tells a
		// fence apart. Two open transactions in a row are just that.
		fenced = fenced || (n.State == Empty && (bump >= 2 || (bump >= 1 && outcome == "")))
		// Moved past p's transaction, which the log says aborted: its abort,
		// and the end of n's own transaction if n shows one, account for one
		// bump each; a further one is an InitProducerId (fence.go). A busy
		// producer's commits show committed instead.
		if p.State == Ongoing && n.PrevOutcome == CompleteAbort && outcome == CompleteAbort {
			ends := 1
			if !n.State.Open() || n.State == PrepareCommit || n.State == PrepareAbort {
				ends = 2
			}
			fenced = fenced || bump > ends
		}
	} else {
		// Version 1 never bumps on a normal end: a bump without an outcome, or a
		// bigger jump, is a fence.
		fenced = fenced || bump >= 2 || (bump >= 1 && outcome == "")
	}
	if fenced {
		return []Event{ev(at, n, Fenced, fmt.Sprintf("epoch %d→%d", p.ProducerEpoch, n.ProducerEpoch))}
	}
	if outcome == CompleteAbort {
		return []Event{ev(at, n, Aborted, "")}
	}
	return []Event{ev(at, n, Ended, "outcome not reported by the cluster")}
}

// timedOut reports whether p's transaction was (at the latest) aborted by the
// coordinator's timeout scan. An Ongoing one past its deadline when the new state
// was read was. One last seen in PrepareAbort had its abort decided by the time
// it was seen (prevAt): the scan never aborts before the deadline, so a deadline
// already passed then means the scan did it (a timeout abort passes through
// PrepareAbort, for a few milliseconds when the markers are written at once).
func timedOut(prevAt, at time.Time, p Txn) bool {
	if p.TimeoutMs <= 0 || p.Start.IsZero() {
		return false
	}
	deadline := p.Start.Add(p.Timeout())
	switch p.State {
	case Ongoing, PrepareEpochFence:
		return !at.Before(deadline)
	case PrepareAbort:
		return !prevAt.Before(deadline)
	}
	return false
}

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
}

// RecentPerID bounds the per-id event memory.
const RecentPerID = 8

// History accumulates events across polls.
type History struct {
	byID   map[string]*IDStats
	ring   []Event
	next   int
	filled bool
	// prefixes holds the recent takeovers per KafkaSink prefix (collision.go).
	prefixes map[string][]Takeover
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
	for _, e := range evs {
		if e.Revises {
			h.revise(e)
			continue
		}
		st := h.byID[e.ID]
		if st == nil {
			st = &IDStats{}
			h.byID[e.ID] = st
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
		h.recordTakeover(e)
		st.Recent = append(st.Recent, e)
		if len(st.Recent) > RecentPerID {
			st.Recent = append(st.Recent[:0:0], st.Recent[len(st.Recent)-RecentPerID:]...)
		}
		h.ring[h.next] = e
		h.next++
		if h.next == len(h.ring) {
			h.next, h.filled = 0, true
		}
	}
}

// Baseline records the outcome each id shows in the first snapshot (the
// coordinator keeps the latest one), without adding events.
func (h *History) Baseline(s *Snapshot) {
	for _, t := range s.Txns {
		k, ok := outcomeKind(t)
		if !ok || t.State.Open() {
			continue
		}
		st := h.byID[t.ID]
		if st == nil {
			st = &IDStats{}
			h.byID[t.ID] = st
		}
		if k == Committed {
			st.Commits++
		} else {
			st.Aborts++
		}
		st.Last, st.LastAt = k, s.TakenAt
	}
}

// Stats returns what has been seen of id (zero value when nothing).
func (h *History) Stats(id string) IDStats {
	if h == nil {
		return IDStats{}
	}
	var out IDStats
	if st := h.byID[id]; st != nil {
		out = *st
	}
	if len(h.prefixes) > 0 {
		if f, ok := ParseFlinkID(id); ok {
			if ts := h.prefixes[f.Prefix]; len(ts) > 0 {
				out.Prefix, out.PrefixTakeovers = f.Prefix, ts
			}
		}
	}
	return out
}

// Latest returns up to n events, newest first.
func (h *History) Latest(n int) []Event {
	if h == nil {
		return nil
	}
	size := h.next
	if h.filled {
		size = len(h.ring)
	}
	if n > size {
		n = size
	}
	out := make([]Event, 0, n)
	for k := 1; k <= n; k++ {
		idx := (h.next - k + len(h.ring)) % len(h.ring)
		out = append(out, h.ring[idx])
	}
	return out
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
