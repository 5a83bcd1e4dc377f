package model

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
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
//     timeout says force-terminate, an unchanged one a fence;
//   - someone else's InitProducerId shows at PrepareAbort already when the
//     transaction speaks version 1: the epoch goes up (only the coordinator
//     bumps it there), or the abort is written with the other client's
//     transaction version;
//   - txnscope's own force-terminates are known for sure (Terminated);
//   - otherwise its producer aborted it: the abort is followed by a new
//     transaction, or by nothing.
//
// So an abort that is not a timeout is held until the id's next record, or
// until Grace has passed without one.
type TxnLog struct {
	// cur are the rows as of the last Snapshot, sorted by id, each one's
	// Coordinator the broker that led its log partition then; part holds
	// those partitions, idx finds ids in cur. Rows changed since are in
	// edits (by position; ID "" when the id expired), ids new since in
	// fresh; there Coordinator holds the log partition. At 500,000 ids a
	// snapshot is then cur as it is, or one sequential merge into a new
	// one, not a walk of a map.
	cur   []Txn
	part  []int32
	idx   *txnIndex
	edits map[int32]Txn
	fresh map[string]Txn
	// commits is when the log last wrote a commit of each job's unit
	// (Snapshot.UnitCommits): the jobs view's last commit, from before
	// txnscope started too. One entry a subtask or thread, not an id.
	commits map[UnitKey]int64
	n       int // ids held

	cv       map[string]int16     // the client transaction version of each open transaction
	aborting map[string]abortHint // ids in PrepareAbort
	held     map[string]heldAbort
	own      map[string]ownInit
	out      []Event
	leaders  map[int32]int32 // the last Snapshot's, by log partition
	// unsure are the ids whose latest record could not be read: their row
	// is the state before it. blind counts, by log partition, the records
	// whose key could not be read: any id of that partition may be stale.
	unsure map[string]struct{}
	blind  map[int32]int
	// unmapped: cur was rebuilt without the leaders (Apply's merges), so
	// the next Snapshot maps every row.
	unmapped bool
	// shared: a Snapshot handed cur out, so a merge makes a new one.
	// expect is how many ids the caller expects (Expect): the room cur is
	// first made with.
	shared bool
	expect int
	// idxOwned: no Snapshot holds idx's slots, so a merge may reuse them.
	idxOwned bool
	// loose: until the first Snapshot (the start-up read), rows are
	// written in cur in place and new ids appended, unsorted, indexed as
	// they come; an expired id's row is left with ID "". The first
	// Snapshot sorts them once. Merging every quarter's new ids into
	// sorted rows was 6 s of a snapshot at 2,000,000 ids.
	loose bool

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
	// bumped: someone else's InitProducerId began it: the epoch went up
	// at PrepareAbort under transaction version 1 (where only the
	// coordinator bumps it), or it was written with another client version.
	bumped bool
	fence  bool // PrepareEpochFence
	// openEpoch is the epoch while the transaction was open.
	openEpoch int16
	// unknown: the record before the abort could not be read, so none of
	// the above is known.
	unknown bool
}

// heldAbort is an abort waiting for what comes next.
type heldAbort struct {
	ev        Event
	timeoutMs int32
	openEpoch int16 // the epoch of the transaction while it was open
	fence     bool  // bound to be a fence or a force-terminate
	// unsure: a record around it could not be read, so nothing says its
	// producer ended it.
	unsure bool
	since  time.Time
	// atMs is the abort record's own time (0: unknown): a next record
	// written Grace or more after it did not come within Grace, however
	// fast the records are read (a replay reads minutes in a moment).
	atMs int64
	// part is the abort's log partition, whose clock a replay settles it by.
	part int32
}

type ownInit struct {
	pid   int64
	epoch int16
}

// commit records a commit of id's unit at ms.
func (l *TxnLog) commit(id string, ms int64) {
	m := JobOf(id)
	k := UnitKey{Job: m.Job, Unit: m.Unit}
	if l.commits == nil {
		l.commits = map[UnitKey]int64{}
	}
	if ms > l.commits[k] {
		l.commits[k] = ms
	}
}

// NewTxnLog starts with no id.
func NewTxnLog() *TxnLog {
	return &TxnLog{edits: map[int32]Txn{}, fresh: map[string]Txn{}, cv: map[string]int16{},
		aborting: map[string]abortHint{}, held: map[string]heldAbort{}, own: map[string]ownInit{},
		unsure: map[string]struct{}{}, blind: map[int32]int{}, loose: true}
}

// Sure reports whether every row is what the log last said of its id: no
// record that could not be read stands between an id and its row. Each
// record holds an id's whole state, so an id is sure again with its next
// record that can be read; a record whose key could not be read leaves its
// partition unsure for good.
func (l *TxnLog) Sure() bool { return len(l.unsure) == 0 && len(l.blind) == 0 }

// Expect says about how many ids the log will hold (a listing's count):
// the start-up read then makes room for them once, instead of growing.
func (l *TxnLog) Expect(n int) { l.expect = n + n/32 }

// Len is how many ids the log holds.
func (l *TxnLog) Len() int { return l.n }

// row is id's state (Coordinator: its log partition), and where it is: its
// position in cur, or -1.
func (l *TxnLog) row(id string) (t Txn, pos int32, ok bool) {
	pos = -1
	if l.idx != nil {
		pos = int32(l.idx.find(l.cur, id))
	}
	if pos < 0 {
		t, ok = l.fresh[id]
		return t, -1, ok
	}
	if l.loose {
		t = l.cur[pos]
		t.Coordinator = l.part[pos]
		return t, pos, true
	}
	if e, edited := l.edits[pos]; edited {
		return e, pos, e.ID != ""
	}
	t = l.cur[pos]
	t.Coordinator = l.part[pos]
	return t, pos, true
}

// put makes t id's row (nil: the id expired).
func (l *TxnLog) put(id string, pos int32, t *Txn, existed bool) {
	switch {
	case t == nil && existed:
		l.n--
	case t != nil && !existed:
		l.n++
	}
	if l.loose {
		l.putLoose(pos, t)
		return
	}
	if pos >= 0 {
		if t == nil {
			l.edits[pos] = Txn{}
		} else {
			l.edits[pos] = *t
		}
		return
	}
	if t == nil {
		delete(l.fresh, id)
	} else {
		l.fresh[id] = *t
	}
}

// putLoose writes t at pos (nil: the id expired), or appends and indexes
// it (pos -1).
func (l *TxnLog) putLoose(pos int32, t *Txn) {
	switch {
	case pos >= 0 && t == nil:
		l.cur[pos] = Txn{} // no longer found
	case pos >= 0:
		l.cur[pos], l.part[pos] = *t, t.Coordinator
	case t != nil:
		switch {
		case l.cur == nil && l.expect > 0:
			l.cur, l.part = make([]Txn, 0, l.expect), make([]int32, 0, l.expect)
		case len(l.cur) == cap(l.cur):
			// Doubled, not the quarter append grows a large slice by: a
			// replay of 2,000,000 ids, told no count, copied its rows
			// over and over, 1.3 s of its read on one core.
			n := max(2*cap(l.cur), 1024)
			l.cur, l.part = append(make([]Txn, 0, n), l.cur...), append(make([]int32, 0, n), l.part...)
		}
		l.cur, l.part = append(l.cur, *t), append(l.part, t.Coordinator)
		if l.idx == nil || 2*len(l.cur) > len(l.idx.slots) {
			var reuse []uint32
			if l.idx != nil {
				reuse = l.idx.slots
			}
			l.idx = indexInto(reuse, l.cur, max(2*len(l.cur), l.expect))
			return
		}
		l.idx.add(l.cur, len(l.cur)-1)
	}
}

// tighten ends the loose phase: expired and Dead rows out, the rest sorted
// by id and indexed, each one's Coordinator the broker lead maps its log
// partition to.
func (l *TxnLog) tighten(lead func(int32) int32) {
	l.loose = false
	cur, part := l.cur, l.part
	w := 0
	for i := range cur {
		t := cur[i]
		switch {
		case t.ID == "":
			continue
		case t.State == Dead:
			l.n-- // its tombstone will find nothing
			continue
		}
		t.Coordinator = part[i] // carried through the sort
		cur[w] = t
		w++
	}
	clear(cur[w:])
	cur, part = cur[:w], part[:w]
	sortTxns(cur)
	for i := range cur {
		part[i] = cur[i].Coordinator
		cur[i].Coordinator = lead(part[i])
	}
	var reuse []uint32
	if l.idx != nil {
		reuse = l.idx.slots
	}
	l.cur, l.part = cur, part
	l.idx, l.idxOwned = indexInto(reuse, cur, l.expect), true
}

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
	if r.Unread != "" {
		l.unread(r, emit)
		return
	}
	// After a record that could not be read, the row is no evidence of
	// what this record changed: the transition is told from r alone.
	_, unsure := l.unsure[r.ID]
	delete(l.unsure, r.ID)
	if r.State == CompleteCommit && r.LastUpdateMs > 0 {
		l.commit(r.ID, r.LastUpdateMs)
	}
	p, pos, exists := l.row(r.ID)
	cv := l.cv[r.ID]
	h, afterAbort := l.held[r.ID]
	if afterAbort {
		delete(l.held, r.ID)
		if h.atMs > 0 && r.LastUpdateMs-h.atMs >= cmp.Or(l.Grace, DefaultGrace).Milliseconds() {
			// Settled as Take would have settled it live, before r came.
			l.settle(h, nil, emit)
			afterAbort = false
		} else {
			l.settle(h, &r, emit)
		}
	}
	if r.Tombstone {
		if exists && emit && p.State != Dead {
			l.out = append(l.out, Event{At: msTime(r.LastUpdateMs, now), ID: r.ID, Kind: Expired, ProducerID: p.ProducerID, ProducerEpoch: p.ProducerEpoch, Logged: true})
		}
		l.put(r.ID, pos, nil, exists)
		delete(l.aborting, r.ID)
		delete(l.cv, r.ID)
		return
	}
	if emit {
		l.step(p, cv, exists && !afterAbort && !unsure, r, now)
	} else if r.State == PrepareAbort || r.State == PrepareEpochFence {
		l.aborting[r.ID] = hintOf(p, cv, exists && !unsure, r)
	} else {
		delete(l.aborting, r.ID)
	}
	if r.State == Ongoing {
		l.cv[r.ID] = r.ClientTxnVersion
	} else if !r.State.Open() {
		delete(l.cv, r.ID)
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
	}
	l.put(r.ID, pos, &t, exists)
	if pending := len(l.fresh) + len(l.edits); pending >= maxPending && pending >= len(l.cur)/4 {
		l.rebuild(nil, false)
		l.unmapped = true
	}
}

// maxPending, or a quarter of cur if more, bounds the rows held in maps
// between two merges into cur: at 500,000 ids, the start-up read would hold
// them all there, at about 200 bytes each instead of 104. The quarter keeps
// the merges' copying linear in the ids.
var maxPending = 1 << 16 // a variable for the tests

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
		l.rotation(p, exists, r, at)
	case CompleteAbort:
		h, hinted := l.aborting[r.ID]
		delete(l.aborting, r.ID)
		if exists && p.State == CompleteAbort && p.StartUnixMs == r.StartMs {
			return
		}
		e = ending(e, p, exists, r)
		l.rotation(p, exists, r, at)
		openEpoch := r.ProducerEpoch
		if hinted && !h.unknown {
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
		l.held[r.ID] = heldAbort{ev: e, timeoutMs: r.TimeoutMs, openEpoch: openEpoch, fence: h.bumped || h.fence,
			unsure: h.unknown, since: now, atMs: r.LastUpdateMs, part: r.Partition}
	case Dead:
		delete(l.aborting, r.ID)
		e.Kind = Expired
		l.out = append(l.out, e)
	}
}

// rotation adds the Rotated event when r, the end of p's transaction, is
// written with the next producer id the coordinator gave the id when its
// epochs ran out (it names p's as the previous one).
func (l *TxnLog) rotation(p Txn, exists bool, r TxnLogRecord, at time.Time) {
	if !exists || r.ProducerID == p.ProducerID || p.ProducerID < 0 ||
		r.PrevProducerID != p.ProducerID && p.ProducerEpoch < EpochWarnAt {
		return
	}
	l.out = append(l.out, Event{At: at, ID: r.ID, Kind: Rotated, ProducerID: r.ProducerID, ProducerEpoch: r.ProducerEpoch, Logged: true,
		Detail: fmt.Sprintf("producer id %d→%d: epoch %d ran out", p.ProducerID, r.ProducerID, EpochRotatesAt)})
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
	case h.unsure:
		e.Detail = unsureAbort
	}
	if emit {
		l.out = append(l.out, e)
	}
}

// unsureAbort is the detail of an abort that a record around it, which
// could not be read, may have told more of: it is not its producer's for sure.
const unsureAbort = "who ended it is not known: a record of it could not be read"

// unread takes in a record that could not be read: its id's row stays as it
// was, unsure until its next record, and what was known of its open
// transaction is gone (an abort held for its next record is settled as one
// nobody is known to have made).
func (l *TxnLog) unread(r TxnLogRecord, emit bool) {
	if r.ID == "" {
		l.blind[r.Partition]++
		return
	}
	l.unsure[r.ID] = struct{}{}
	if h, ok := l.held[r.ID]; ok {
		delete(l.held, r.ID)
		h.unsure = true
		l.settle(h, nil, emit)
	}
	delete(l.cv, r.ID)
	l.aborting[r.ID] = abortHint{unknown: true}
}

// Take returns the events since the last Take, oldest first, with the held
// aborts Grace has passed on settled as their producers' own.
func (l *TxnLog) Take(now time.Time) []Event {
	return l.takeBy(func(int32) time.Time { return now })
}

// takeBy is Take with a clock for each log partition. A replay reads the
// partitions interleaved, each at its own time: by the time of another
// partition's newer record, an abort whose fencing Empty was still to be read
// was settled as its producer's own (a fence replayed as "aborted", then
// "initialized").
func (l *TxnLog) takeBy(clock func(part int32) time.Time) []Event {
	grace := cmp.Or(l.Grace, DefaultGrace)
	for id, h := range l.held {
		if clock(h.part).Sub(h.since) >= grace {
			delete(l.held, id)
			l.settle(h, nil, true)
		}
	}
	out := l.out
	l.out = nil
	slices.SortStableFunc(out, func(a, b Event) int { return a.At.Compare(b.At) })
	return out
}

// Snapshot returns a snapshot of every id's current state, its Txns sorted
// by id and indexed: coordinator maps a log partition to the broker leading
// it (-1 unknown). The caller sets the rest.
func (l *TxnLog) Snapshot(coordinator func(partition int32) int32) *Snapshot {
	leaders := map[int32]int32{}
	lead := func(p int32) int32 {
		b, ok := leaders[p]
		if !ok {
			b = coordinator(p)
			leaders[p] = b
		}
		return b
	}
	if l.loose {
		l.tighten(lead)
	}
	moved := l.unmapped // a log partition changed leaders since the last snapshot
	l.unmapped = false
	for p, b := range l.leaders {
		if lead(p) != b {
			moved = true
		}
	}
	if len(l.edits) > 0 || len(l.fresh) > 0 || moved {
		l.rebuild(lead, moved)
	}
	l.leaders = leaders
	// No copy: the log never writes cur (rebuild makes a new one), and
	// nobody may write a snapshot's rows (ShareStrings leaves the log's
	// alone). At 500,000 ids a copy was 52 MB a refresh, and a third
	// array of them held.
	txns := l.cur[:len(l.cur):len(l.cur)]
	l.shared, l.idxOwned = true, false
	s := &Snapshot{Txns: txns, UnitCommits: maps.Clone(l.commits)}
	if l.idx != nil && len(txns) > 0 {
		x := *l.idx
		x.base, x.inOrder = &txns[0], true
		s.index = &x
	}
	return s
}

// rebuild makes cur current: edited rows in their place, new ones merged
// in by id, expired and Dead ones out. Until a Snapshot has handed cur out
// (the start-up read) it merges in place when cur has room, from the back,
// made as large as Expect says at once: at 2,000,000 ids a merge into a
// new array held the old one beside it, 166 MB of the TUI's peak.
func (l *TxnLog) rebuild(lead func(int32) int32, moved bool) {
	ids := make([]string, 0, len(l.fresh))
	for id := range l.fresh {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	need := len(l.cur) + len(ids)
	old, oldPart := l.cur, l.part
	var cur []Txn
	var part []int32
	switch {
	case !l.shared && cap(old) >= need && cap(oldPart) >= need:
		cur, part = old[:need], oldPart[:need]
	case l.shared:
		cur, part = make([]Txn, need), make([]int32, need)
	default:
		room := max(need, l.expect)
		cur, part = make([]Txn, need, room), make([]int32, need, room)
	}
	l.shared = false
	shifted := false // a row moved: the index must be built again
	w := need        // rows go to cur[w-1], cur[w-2], …: never past a row still to read
	add := func(t Txn, p int32) {
		if t.ID == "" || t.State == Dead {
			if t.State == Dead {
				l.n-- // its tombstone will find nothing
			}
			shifted = true
			return
		}
		t.Coordinator = -1 // mapped by the next Snapshot (unmapped)
		if lead != nil {
			t.Coordinator = lead(p)
		}
		w--
		cur[w], part[w] = t, p
	}
	i, j := len(old)-1, len(ids)-1
	for i >= 0 || j >= 0 {
		if j >= 0 && (i < 0 || ids[j] > old[i].ID) {
			t := l.fresh[ids[j]]
			add(t, t.Coordinator)
			j--
			shifted = true
			continue
		}
		switch e, edited := l.edits[int32(i)]; {
		case edited:
			add(e, e.Coordinator)
		case moved:
			add(old[i], oldPart[i])
		default:
			w--
			cur[w], part[w] = old[i], oldPart[i]
		}
		i--
	}
	if w > 0 { // rows went out: close the gap, and let go of what is past the end
		n := copy(cur, cur[w:])
		copy(part, part[w:])
		clear(cur[n:])
		cur, part = cur[:n], part[:n]
	}
	l.cur, l.part = cur, part
	if lead == nil {
		// Apply's merge, in the middle of a read: the maps fill again
		// at once, and new ones were garbage the size of the old.
		clear(l.edits)
		clear(l.fresh)
	} else {
		// A Snapshot's: a cleared map keeps its buckets, and the
		// start-up read filled these with a quarter of the ids.
		l.edits, l.fresh = map[int32]Txn{}, map[string]Txn{}
	}
	switch {
	case shifted || l.idx == nil:
		var reuse []uint32
		if l.idx != nil && l.idxOwned {
			reuse = l.idx.slots
		}
		l.idx, l.idxOwned = indexInto(reuse, cur, l.expect), true
	default: // the same positions, maybe in a new array
		l.idx = &txnIndex{seed: l.idx.seed, slots: l.idx.slots, n: len(cur)}
	}
}

// hintOf reads a PrepareAbort (or PrepareEpochFence) record r that follows
// p, written by a client of transaction version cv.
func hintOf(p Txn, cv int16, exists bool, r TxnLogRecord) abortHint {
	h := abortHint{fence: r.State == PrepareEpochFence, openEpoch: r.ProducerEpoch,
		timedOut: r.TimeoutMs > 0 && r.StartMs > 0 && r.LastUpdateMs-r.StartMs >= int64(r.TimeoutMs)}
	if !exists || p.State != Ongoing || p.ProducerID != r.ProducerID {
		return h
	}
	h.openEpoch = p.ProducerEpoch
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
