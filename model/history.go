package model

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// EventKind is something txnscope saw happen to a transactional.id: between
// two polls, or written by its coordinator to its log (Event.Logged).
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
	// Ended: the transaction finished and nothing said how: no coordinator
	// state about it, no COMMIT or ABORT marker read. Never counted.
	Ended EventKind = "ended"
)

// The coordinator's log tells more (txnlog_track.go): every step, and how an
// abort came about.
const (
	// ForceTerminated: an admin initialized the id again while its
	// transaction was open (kafka-transactions.sh forceTerminateTransaction,
	// txnscope's own force-terminate), which aborted it. Counted as an abort.
	ForceTerminated EventKind = "force-terminated"
	// Added: the running transaction added partitions.
	Added EventKind = "partitions added"
	// PreparedCommit and PreparedAbort: the coordinator decided the outcome
	// and is writing the markers.
	PreparedCommit EventKind = "prepare-commit"
	PreparedAbort  EventKind = "prepare-abort"
	// Initialized: a producer initialized the idle id (InitProducerId): a
	// restart, or another producer taking it; nothing was aborted.
	Initialized EventKind = "initialized"
	// Expired: the coordinator forgot the id (transactional.id.expiration.ms).
	Expired EventKind = "expired"
)

// IsAbort reports whether the event is one of the ways a transaction gets aborted.
func (k EventKind) IsAbort() bool {
	return k == Aborted || k == TimedOut || k == Fenced || k == ForceTerminated
}

// Ends reports whether the event is the end of a transaction with a known
// outcome: a commit or one of the aborts.
func (k EventKind) Ends() bool { return k == Committed || k.IsAbort() }

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
	// Reinit marks an Ended event whose epoch shows the id was initialized
	// again (another producer, a force-terminate) while its transaction was
	// open, when nothing says how that transaction ended: a takeover, but not
	// counted as an abort.
	Reinit bool
	// Logged: the event was read from the coordinator's log, At is the
	// coordinator's own time and the outcome is what it wrote, not inferred.
	Logged bool
	// Begun is when the transaction an ending event ends began (the zero
	// time when not known); Parts is how many partitions it held (Logged
	// events only).
	Begun time.Time
	Parts int32
	// started is when a poll last saw the ended transaction begin: not
	// Begun, since a poll sees the end up to a refresh late and a duration
	// from it would say so (the crash-loop rule needs only the order).
	started time.Time
}

// EventsBetween is what happened between prev and next for a history:
// what the coordinators' log says when it is the source of next's events,
// even when prev came from polls (a Diff across the switch would guess what
// the log tells exactly); otherwise the Diff of the two polls. None for the
// first snapshot (prev nil): it is a baseline either way.
func EventsBetween(prev, next *Snapshot) []Event {
	if prev == nil {
		return nil
	}
	if next.Source.Log || next.Source.LogEvents {
		return next.Events
	}
	return Diff(prev, next)
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
	if n.Pending {
		return appendNewListed(out, at, n) // pending.go
	}
	if n.State.Open() {
		return append(out, ev(at, n, Began, ""))
	}
	if k, ok := outcomeKind(n); ok {
		return append(out, ev(at, n, k, "began and ended between polls"))
	}
	return out
}

func appendChange(out []Event, prevAt, at time.Time, p, n Txn, tv2 bool) []Event {
	if p.Pending || n.Pending {
		return appendListed(out, prevAt, at, p, n, tv2) // pending.go
	}
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
			outcome = n.PrevOutcome()
		}
		out = append(out, ended(prevAt, at, p, n, outcome, tv2)...)
		return append(out, ev(at, n, Began, ""))
	case p.State.Open():
		if n.PrevOutcome() != "" && n.State != Empty {
			// The log says how p's transaction ended; n shows a later one,
			// begun and ended between the polls too.
			out = append(out, ended(prevAt, at, p, n, n.PrevOutcome(), tv2)...)
			if k, ok := outcomeKind(n); ok {
				out = append(out, ev(at, n, k, "began and ended between polls"))
			}
			return out
		}
		return append(out, endedIn(prevAt, at, p, n, tv2)...)
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

// endedIn reports p's transaction, which n shows complete or idle. A
// transaction last seen in Prepare* had its outcome decided then; a Complete*
// state of n that says otherwise is about a later transaction, begun and ended
// between the polls.
func endedIn(prevAt, at time.Time, p, n Txn, tv2 bool) []Event {
	mine, last := decided(p), outcomeOf(n)
	if mine == "" && last != "" && !tv2 && LaterEnd(p, n, tv2) {
		// Under version 1 n's outcome is a later transaction's: how p's
		// ended is not known. (Under version 2 its marker is read.)
		out := ended(prevAt, at, p, n, "", tv2)
		k, _ := outcomeKind(n)
		return append(out, ev(at, n, k, "began and ended between polls"))
	}
	if mine == "" || last == "" || last == mine {
		return ended(prevAt, at, p, n, cmp.Or(mine, last), tv2)
	}
	out := ended(prevAt, at, p, n, mine, tv2)
	k, _ := outcomeKind(n)
	return append(out, ev(at, n, k, "began and ended between polls"))
}

// LaterEnd reports whether n, complete, ended a later transaction than p's
// Ongoing one. Under transaction version 2 the epoch moves on every end: two
// or more up is more than one end. Under version 1 a commit never moves it: a
// COMMIT one or more up is a later transaction's, the id having been
// initialized again since p (a fence, or a restarted producer). An ABORT up
// is taken for p's own (a fence or the timeout bumps the epoch as it aborts).
func LaterEnd(p, n Txn, tv2 bool) bool {
	if p.State != Ongoing || n.ProducerID != p.ProducerID {
		return false
	}
	rise := int(n.ProducerEpoch) - int(p.ProducerEpoch)
	switch {
	case tv2:
		return (n.State == CompleteCommit || n.State == CompleteAbort) && rise >= 2
	case n.State == CompleteCommit:
		return rise >= 1
	}
	return false
}

// MovedOn reports whether the id went from p's open transaction straight to
// another open one, n, between two polls.
func MovedOn(p, n Txn) bool {
	if !p.State.Open() || !n.State.Open() {
		return false
	}
	// Prepare* may carry the epoch bump of transaction version 2; the start
	// time is what identifies the transaction.
	startsMatch := !p.HasStart() || !n.HasStart() || p.StartUnixMs == n.StartUnixMs
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
	return n.Outcome()
}

// decided is the outcome a transaction in PrepareCommit, PrepareAbort or
// PrepareEpochFence (the coordinator fencing its producer aborts it) is bound
// to reach; "" for any other state.
func decided(t Txn) State {
	switch t.State {
	case PrepareCommit:
		return CompleteCommit
	case PrepareAbort, PrepareEpochFence:
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
	if p.State.Open() && p.HasStart() {
		evs[0].started = p.StartTime()
	}
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
	// Aborted only on evidence: an ABORT marker, or the coordinator's state
	// (CompleteAbort, or p seen in PrepareAbort or PrepareEpochFence).
	if outcome != CompleteAbort {
		return []Event{unknownEnd(prevAt, at, p, n, tv2, bump)}
	}
	if timedOut(prevAt, at, p) {
		return []Event{ev(at, n, TimedOut, fmt.Sprintf("open %s, timeout %s", openFor(at, p), p.Timeout()))}
	}
	if reinit(p, n, outcome, tv2, bump) {
		return []Event{ev(at, n, Fenced, fmt.Sprintf("epoch %d→%d", p.ProducerEpoch, n.ProducerEpoch))}
	}
	return []Event{ev(at, n, Aborted, "")}
}

// unknownEnd is the end of p's transaction when nothing said how it ended. The
// epoch may still show that the id was initialized again, and the clock that
// the transaction outlived its timeout: both are said, neither is an outcome.
func unknownEnd(prevAt, at time.Time, p, n Txn, tv2 bool, bump int) Event {
	const unknown = "no COMMIT/ABORT marker read"
	switch {
	case timedOut(prevAt, at, p):
		return ev(at, n, Ended, fmt.Sprintf("open %s, past its timeout %s; %s", openFor(at, p), p.Timeout(), unknown))
	case reinit(p, n, "", tv2, bump):
		e := ev(at, n, Ended, fmt.Sprintf("epoch %d→%d: the id was initialized again; %s", p.ProducerEpoch, n.ProducerEpoch, unknown))
		e.Reinit = true
		return e
	}
	return ev(at, n, Ended, "outcome not reported by the cluster")
}

func openFor(at time.Time, p Txn) time.Duration { return at.Sub(p.StartTime()).Round(time.Second) }

// reinit reports whether the epochs show an InitProducerId on the id since p:
// a new producer, a force-terminate, or the coordinator fencing p. outcome is
// what ended p's transaction as far as known ("" when unknown).
func reinit(p, n Txn, outcome State, tv2 bool, bump int) bool {
	// A new producer id, an explicit PrepareEpochFence, or an abort already
	// decided and then an InitProducerId on top (initAfter) is a fence whatever
	// the version.
	if p.State == PrepareEpochFence || p.ProducerID != n.ProducerID ||
		(p.State == PrepareAbort && initAfter(p, n, tv2)) {
		return true
	}
	if !tv2 {
		// Version 1 bumps only for an InitProducerId (or the timeout, told
		// apart before): any bump is one, the fence's own abort seen
		// complete one epoch up included (txnscope's force-terminate stops
		// there; a new producer's InitProducerId after it is then no news).
		return bump >= 1
	}
	// Every end bumps the epoch, and a busy producer ends many transactions
	// between two polls: only the id back in Empty (an InitProducerId came in,
	// which bumps once to fence and once more for the new producer) tells a
	// fence apart. Two open transactions in a row are just that.
	if n.State == Empty && (bump >= 2 || (bump >= 1 && outcome == "")) {
		return true
	}
	// Moved past p's transaction, which the log says aborted: its abort, and
	// the end of n's own transaction if n shows one, account for one bump
	// each; a further one is an InitProducerId (fence.go). A busy producer's
	// commits show committed instead.
	if p.State == Ongoing && n.PrevOutcome() == CompleteAbort && outcome == CompleteAbort {
		ends := 1
		if !n.State.Open() || n.State == PrepareCommit || n.State == PrepareAbort {
			ends = 2
		}
		return bump > ends
	}
	return false
}

// timedOut reports whether p's transaction, known to be aborted, was aborted
// (at the latest) by the coordinator's timeout scan; of one whose outcome is
// unknown, only that it outlived its deadline (its producer may have committed
// just before, or after, if the scan had not run yet). An Ongoing one past its
// deadline when the new state was read was. One last seen in PrepareAbort had its abort decided by the time
// it was seen (prevAt): the scan never aborts before the deadline, so a deadline
// already passed then means the scan did it (a timeout abort passes through
// PrepareAbort, for a few milliseconds when the markers are written at once).
func timedOut(prevAt, at time.Time, p Txn) bool {
	if p.TimeoutMs <= 0 || !p.HasStart() {
		return false
	}
	deadline := p.StartTime().Add(p.Timeout())
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
