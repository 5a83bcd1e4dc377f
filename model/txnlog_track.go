package model

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// TxnLog is every transactional id as the coordinators' log tells it: the
// latest state of each, and one event per transition, with the coordinator's
// own times. Feed it the log's records in offset order, partition by
// partition (an id always lives in one partition).
//
// How an abort came about is told by what the coordinator wrote around it:
//   - a timeout: its PrepareAbort was written at or past start + timeout;
//   - a fence or a force-terminate: an InitProducerId came in while the
//     transaction was open, so the abort is followed at once by Empty one
//     epoch up (a new producer, or an admin, initialized the id). An admin's
//     InitProducerId carries its own timeout (kafka-transactions.sh sends its
//     request timeout), a restarted producer its configured one: a changed
//     timeout says force-terminate, an unchanged one a fence. txnscope's own
//     force-terminates are known for sure (Terminated);
//   - otherwise its producer aborted it: the abort is followed by a new
//     transaction, or by nothing.
//
// So an abort that is neither a timeout nor bound to be a fence is held
// until the id's next record, or until Grace has passed without one.
type TxnLog struct {
	rows  []Txn   // one per id, in the order first seen; Coordinator holds the log partition
	cv    []int16 // each row's client transaction version, as its record said
	at    map[string]int32
	order []int32 // rows in id order (Txns)
	fresh []int32 // rows not in order yet
	gone  int     // rows whose id expired (ID "")

	aborting map[string]abortHint // ids in PrepareAbort
	held     map[string]heldAbort
	own      map[string]ownInit
	out      []Event

	// Grace is how long an abort waits for the record that would make it a
	// fence (DefaultGrace when zero).
	Grace time.Duration
}

// DefaultGrace covers a fencing producer's retries of InitProducerId
// (CONCURRENT_TRANSACTIONS until the abort is complete, 100 ms apart).
const DefaultGrace = 2 * time.Second

// abortHint is what the PrepareAbort record said.
type abortHint struct {
	timedOut bool
	// bumped: the epoch went up at PrepareAbort under transaction version 1,
	// where only the coordinator (timeout, fence) bumps it.
	bumped bool
	fence  bool // PrepareEpochFence
	// openEpoch is the epoch while the transaction was open.
	openEpoch int16
}

// heldAbort is an abort waiting for what comes next.
type heldAbort struct {
	ev        Event
	timeoutMs int32
	openEpoch int16 // the epoch of the transaction while it was open
	fence     bool  // bound to be a fence or a force-terminate
	since     time.Time
}

type ownInit struct {
	pid   int64
	epoch int16
}

// NewTxnLog starts with no id.
func NewTxnLog() *TxnLog {
	return &TxnLog{at: map[string]int32{}, aborting: map[string]abortHint{}, held: map[string]heldAbort{}, own: map[string]ownInit{}}
}

// Len is how many ids the log holds.
func (l *TxnLog) Len() int { return len(l.rows) - l.gone }

// Terminated records that txnscope is about to force-terminate id's
// transaction, open at producer id pid and epoch epoch: its abort is then a
// force-terminate for sure, whatever follows it (txnscope sends one
// InitProducerId, which aborts the transaction, and does not retry it to
// initialize the id).
func (l *TxnLog) Terminated(id string, pid int64, epoch int16) {
	if len(l.own) > 1024 {
		clear(l.own)
	}
	l.own[id] = ownInit{pid, epoch}
}

// Apply takes the next record in. emit false takes it in silently: the
// start-up read of the log's past, which is state, not news. now is the
// wall clock, for Grace.
func (l *TxnLog) Apply(r TxnLogRecord, emit bool, now time.Time) {
	i, exists := l.at[r.ID]
	var (
		p  Txn
		cv int16
	)
	if exists {
		p, cv = l.rows[i], l.cv[i]
	}
	h, afterAbort := l.held[r.ID]
	if afterAbort {
		delete(l.held, r.ID)
		l.settle(h, &r, emit)
	}
	if r.Tombstone {
		if exists {
			if emit && p.State != Dead {
				l.out = append(l.out, Event{At: msTime(r.LastUpdateMs, now), ID: r.ID, Kind: Expired, ProducerID: p.ProducerID, ProducerEpoch: p.ProducerEpoch, Logged: true})
			}
			l.rows[i] = Txn{}
			delete(l.at, r.ID)
			l.gone++
		}
		delete(l.aborting, r.ID)
		return
	}
	if emit {
		l.step(p, cv, exists && !afterAbort, r, now)
	} else if r.State == PrepareAbort || r.State == PrepareEpochFence {
		l.aborting[r.ID] = hintOf(p, cv, exists, r)
	} else {
		delete(l.aborting, r.ID)
	}
	t := Txn{
		ID: r.ID, State: r.State, Partitions: r.Partitions, ProducerID: r.ProducerID,
		ProducerEpoch: r.ProducerEpoch, TimeoutMs: r.TimeoutMs, Coordinator: r.Partition, Described: true,
	}
	if r.StartMs > 0 {
		t.StartUnixMs = r.StartMs
	}
	if exists {
		t.ID = p.ID // one string per id
		l.rows[i], l.cv[i] = t, r.ClientTxnVersion
		return
	}
	l.at[r.ID] = int32(len(l.rows))
	l.fresh = append(l.fresh, int32(len(l.rows)))
	l.rows = append(l.rows, t)
	l.cv = append(l.cv, r.ClientTxnVersion)
}

// step appends the events of the transition from p (the id's state so far,
// when it exists) to r. An id whose abort was just settled counts as new: the
// Empty that fenced it is no news of its own.
func (l *TxnLog) step(p Txn, cv int16, exists bool, r TxnLogRecord, now time.Time) {
	at := msTime(r.LastUpdateMs, now)
	e := Event{At: at, ID: r.ID, ProducerID: r.ProducerID, ProducerEpoch: r.ProducerEpoch, Logged: true}
	open := exists && p.State.Open()
	switch r.State {
	case Empty:
		delete(l.aborting, r.ID)
		if exists && !open && (r.ProducerID != p.ProducerID || r.ProducerEpoch != p.ProducerEpoch) {
			e.Kind, e.Detail = Initialized, epochs(p, r)
			l.out = append(l.out, e)
		}
	case Ongoing:
		delete(l.aborting, r.ID)
		switch {
		case !open || p.StartUnixMs != r.StartMs:
			e.Kind, e.At, e.Parts = Began, msTime(r.StartMs, at), int32(len(r.Partitions))
			e.Detail = parts(len(r.Partitions))
			l.out = append(l.out, e)
		case len(r.Partitions) > len(p.Partitions):
			e.Kind, e.Parts = Added, int32(len(r.Partitions))
			e.Detail = fmt.Sprintf("+%d: %s", len(r.Partitions)-len(p.Partitions), parts(len(r.Partitions)))
			l.out = append(l.out, e)
		}
	case PrepareCommit:
		delete(l.aborting, r.ID)
		if !exists || p.State != PrepareCommit {
			e.Kind, e.Begun, e.Parts = PreparedCommit, msTime(r.StartMs, time.Time{}), int32(len(r.Partitions))
			l.out = append(l.out, e)
		}
	case PrepareAbort, PrepareEpochFence:
		h := hintOf(p, cv, exists, r)
		l.aborting[r.ID] = h
		if !exists || p.State != r.State {
			e.Kind, e.Begun, e.Parts = PreparedAbort, msTime(r.StartMs, time.Time{}), int32(len(r.Partitions))
			if h.timedOut {
				e.Detail = "past its timeout"
			}
			l.out = append(l.out, e)
		}
	case CompleteCommit:
		delete(l.aborting, r.ID)
		if exists && p.State == CompleteCommit && p.StartUnixMs == r.StartMs {
			return // written again (a coordinator moved)
		}
		e.Kind = Committed
		l.out = append(l.out, ending(e, p, exists, r))
	case CompleteAbort:
		h, hinted := l.aborting[r.ID]
		delete(l.aborting, r.ID)
		if exists && p.State == CompleteAbort && p.StartUnixMs == r.StartMs {
			return
		}
		e = ending(e, p, exists, r)
		openEpoch := r.ProducerEpoch
		if hinted {
			openEpoch = h.openEpoch
		}
		if o, ok := l.own[r.ID]; ok && o.pid == r.ProducerID && o.epoch == openEpoch {
			delete(l.own, r.ID)
			e.Kind, e.Detail = ForceTerminated, "by txnscope"
			l.out = append(l.out, e)
			return
		}
		if h.timedOut {
			e.Kind = TimedOut
			e.Detail = fmt.Sprintf("open %s, timeout %s", e.At.Sub(e.Begun).Round(time.Millisecond), time.Duration(r.TimeoutMs)*time.Millisecond)
			l.out = append(l.out, e)
			return
		}
		e.Kind = Aborted
		l.held[r.ID] = heldAbort{ev: e, timeoutMs: r.TimeoutMs, openEpoch: openEpoch, fence: h.bumped || h.fence, since: now}
	case Dead:
		delete(l.aborting, r.ID)
		e.Kind = Expired
		l.out = append(l.out, e)
	}
}

// settle decides how a held abort came about, now that the id's next record
// r is in (nil: none came within Grace).
func (l *TxnLog) settle(h heldAbort, r *TxnLogRecord, emit bool) {
	e := h.ev
	switch {
	case r != nil && r.State == Empty && (r.ProducerID != e.ProducerID || r.ProducerEpoch > e.ProducerEpoch):
		e.Kind, e.Detail = Fenced, fmt.Sprintf("epoch %d→%d", h.openEpoch, r.ProducerEpoch)
		if r.ProducerID != e.ProducerID {
			e.Detail = fmt.Sprintf("producer id %d→%d", e.ProducerID, r.ProducerID)
		} else {
			e.EpochJump = r.ProducerEpoch - h.openEpoch
		}
		if r.TimeoutMs != h.timeoutMs {
			e.Kind = ForceTerminated
			e.Detail = fmt.Sprintf("by an admin: timeout %s→%s", time.Duration(h.timeoutMs)*time.Millisecond, time.Duration(r.TimeoutMs)*time.Millisecond)
		}
		e.ProducerID, e.ProducerEpoch = r.ProducerID, r.ProducerEpoch
	case h.fence:
		// Someone else's InitProducerId aborted it and was not sent again
		// to take the id (as txnscope's force-terminate does).
		e.Kind, e.Detail = Fenced, "another client's InitProducerId; nobody took the id after"
	}
	if emit {
		l.out = append(l.out, e)
	}
}

// Take returns the events since the last Take, oldest first, with the held
// aborts Grace has passed on settled as their producers' own.
func (l *TxnLog) Take(now time.Time) []Event {
	grace := cmp.Or(l.Grace, DefaultGrace)
	for id, h := range l.held {
		if now.Sub(h.since) >= grace {
			delete(l.held, id)
			l.settle(h, nil, true)
		}
	}
	out := l.out
	l.out = nil
	slices.SortStableFunc(out, func(a, b Event) int { return a.At.Compare(b.At) })
	return out
}

// Txns returns every id's current state sorted by id, as snapshot rows:
// coordinator maps a log partition to the broker leading it (-1 unknown).
func (l *TxnLog) Txns(coordinator func(partition int32) int32) []Txn {
	l.sortFresh()
	out := make([]Txn, 0, len(l.order))
	for _, i := range l.order {
		t := l.rows[i]
		if t.State == Dead {
			continue
		}
		t.Coordinator = coordinator(t.Coordinator)
		out = append(out, t)
	}
	return out
}

// sortFresh merges the rows added since into order, and drops expired ones
// (compacting the rows once a quarter of them are).
func (l *TxnLog) sortFresh() {
	if len(l.fresh) == 0 && l.gone == 0 {
		return
	}
	byID := func(a, b int32) int { return strings.Compare(l.rows[a].ID, l.rows[b].ID) }
	slices.SortFunc(l.fresh, byID)
	merged := make([]int32, 0, len(l.order)+len(l.fresh))
	i, j := 0, 0
	for i < len(l.order) || j < len(l.fresh) {
		var k int32
		if j >= len(l.fresh) || (i < len(l.order) && byID(l.order[i], l.fresh[j]) < 0) {
			k, i = l.order[i], i+1
		} else {
			k, j = l.fresh[j], j+1
		}
		if l.rows[k].ID != "" {
			merged = append(merged, k)
		}
	}
	l.order, l.fresh = merged, l.fresh[:0]
	if l.gone > 0 && l.gone >= len(l.rows)/4 {
		l.compact()
	}
}

// compact drops the expired rows; order must be current.
func (l *TxnLog) compact() {
	rows, cv := make([]Txn, 0, len(l.order)), make([]int16, 0, len(l.order))
	for n, i := range l.order {
		rows, cv = append(rows, l.rows[i]), append(cv, l.cv[i])
		l.at[l.rows[i].ID] = int32(n)
		l.order[n] = int32(n)
	}
	l.rows, l.cv, l.gone = rows, cv, 0
}

// hintOf reads a PrepareAbort (or PrepareEpochFence) record r that follows
// p, written by a client of transaction version cv.
func hintOf(p Txn, cv int16, exists bool, r TxnLogRecord) abortHint {
	h := abortHint{fence: r.State == PrepareEpochFence, openEpoch: r.ProducerEpoch}
	if !exists || p.State != Ongoing || p.ProducerID != r.ProducerID {
		h.timedOut = r.TimeoutMs > 0 && r.StartMs > 0 && r.LastUpdateMs-r.StartMs >= int64(r.TimeoutMs)
		return h
	}
	h.openEpoch = p.ProducerEpoch
	h.timedOut = r.TimeoutMs > 0 && r.StartMs > 0 && r.LastUpdateMs-r.StartMs >= int64(r.TimeoutMs)
	// Under version 1 only the coordinator bumps the epoch (a timeout, a
	// fence). And the abort a fence starts is written with the version of the
	// client that sent the InitProducerId: another version than the
	// producer's says someone else ended it.
	h.bumped = (r.ProducerEpoch > p.ProducerEpoch && r.ClientTxnVersion < 2) || r.ClientTxnVersion != cv
	return h
}

// ending fills in what an ending event says of the transaction it ends.
func ending(e Event, p Txn, exists bool, r TxnLogRecord) Event {
	e.Begun = msTime(r.StartMs, time.Time{})
	if e.Begun.IsZero() && exists {
		e.Begun = p.StartTime()
	}
	// The Complete* record lists no partitions: the open states did.
	e.Parts = int32(len(r.Partitions))
	if exists && p.State.Open() && len(p.Partitions) > 0 {
		e.Parts = int32(len(p.Partitions))
	}
	if !e.Begun.IsZero() {
		e.Detail = "open " + e.At.Sub(e.Begun).Round(time.Millisecond).String()
	}
	return e
}

func epochs(p Txn, r TxnLogRecord) string {
	if p.ProducerID != r.ProducerID {
		return fmt.Sprintf("producer id %d→%d", p.ProducerID, r.ProducerID)
	}
	return fmt.Sprintf("epoch %d→%d", p.ProducerEpoch, r.ProducerEpoch)
}

func parts(n int) string {
	if n == 1 {
		return "1 partition"
	}
	return fmt.Sprintf("%d partitions", n)
}

// msTime is a coordinator timestamp (Unix ms) as a time; or def when it has none.
func msTime(ms int64, def time.Time) time.Time {
	if ms <= 0 {
		return def
	}
	return time.UnixMilli(ms)
}
