package model

// What happened to a transactional id: read off two consecutive snapshots
// (Diff), or off the coordinators' own log (txnlog_track.go). history.go
// keeps them.

import (
	"cmp"
	"fmt"
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
	// Rotated: the coordinator gave the id a new producer id at epoch 0,
	// its epochs having run out (epoch.go); the transaction that ended there
	// is its own event. Not a takeover: the same producer goes on.
	Rotated EventKind = "pid rotated"
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
	at := next.TakenAt
	if next.ReadAt.After(at) {
		at = next.ReadAt
	}
	i, j := 0, 0
	for i < len(prev.Txns) || j < len(next.Txns) {
		switch {
		case j >= len(next.Txns) || (i < len(prev.Txns) && prev.Txns[i].ID < next.Txns[j].ID):
			i++ // the id expired or is no longer visible: nothing to say
		case i >= len(prev.Txns) || next.Txns[j].ID < prev.Txns[i].ID:
			out = appendNew(out, at, next.Txns[j])
			j++
		default:
			out = appendChange(out, prev.TakenAt, at, prev.Txns[i], next.Txns[j], next.EpochBumpsOnEnd)
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
	out = appendStep(out, prevAt, at, p, n, tv2)
	if rotated(p, n, tv2) {
		// After the end that rotated it, told of n's producer id.
		out = append(out, rotatedEvent(at, p, n))
	}
	return out
}

func appendStep(out []Event, prevAt, at time.Time, p, n Txn, tv2 bool) []Event {
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
		if outcome == NoState {
			outcome = n.PrevOutcome()
		}
		out = append(out, ended(prevAt, at, p, n, outcome, tv2)...)
		return append(out, ev(at, n, Began, ""))
	case p.State.Open():
		if n.PrevOutcome() != NoState && n.State != Empty {
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
	if mine == NoState && last != NoState && !tv2 && LaterEnd(p, n, tv2) {
		// Under version 1 n's outcome is a later transaction's: how p's
		// ended is not known. (Under version 2 its marker is read.)
		out := ended(prevAt, at, p, n, NoState, tv2)
		k, _ := outcomeKind(n)
		return append(out, ev(at, n, k, "began and ended between polls"))
	}
	if mine == NoState || last == NoState || last == mine {
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
	return NoState
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
	case reinit(p, n, NoState, tv2, bump):
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
	if p.State == PrepareEpochFence || p.ProducerID != n.ProducerID && !rotated(p, n, tv2) ||
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
	if n.State == Empty && (bump >= 2 || (bump >= 1 && outcome == NoState)) {
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
