// Package model holds txnscope's domain: transactions, partitions and producers as the
// cluster reports them, plus the pure rules built on them. No I/O lives here.
package model

import (
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The states with Kafka's own names (State.String); the zero State has
// none.
const (
	Empty State = iota + 1
	Ongoing
	PrepareCommit
	PrepareAbort
	CompleteCommit
	CompleteAbort
	Dead
	PrepareEpochFence
)

// Open reports whether a transaction in this state still holds partitions: the
// coordinator has not finished writing its markers.
func (s State) Open() bool {
	switch s {
	case Ongoing, PrepareCommit, PrepareAbort, PrepareEpochFence:
		return true
	}
	return false
}

// Abortable reports whether force-terminate makes sense: the transaction has not
// started its own commit or abort yet.
func (s State) Abortable() bool { return s == Ongoing || s == PrepareEpochFence }

// TopicPartition names one partition.
type TopicPartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

// Less orders partitions by topic, then partition number.
func (tp TopicPartition) Less(o TopicPartition) bool {
	if tp.Topic != o.Topic {
		return tp.Topic < o.Topic
	}
	return tp.Partition < o.Partition
}

// SortPartitions sorts in place by topic, then partition.
func SortPartitions(tps []TopicPartition) {
	sort.Slice(tps, func(i, j int) bool { return tps[i].Less(tps[j]) })
}

// Txn is one transactional.id as the coordinator reports it. A snapshot holds
// one per id, and the TUI two snapshots while a refresh is taken in (a million
// rows at 500,000 ids): the fields are ordered so that no padding is wasted, the
// start is milliseconds and the outcomes are bytes (size_test.go pins the size).
type Txn struct {
	ID         string
	Partitions []TopicPartition
	// Err is a per-id problem (e.g. an authorization failure on describe).
	Err        string
	ProducerID int64
	// StartUnixMs is the start of the running transaction in Unix
	// milliseconds, as the coordinator reports it; 0 when it reports none
	// (StartTime).
	StartUnixMs int64
	Coordinator int32
	// TimeoutMs is 0 when the id has not been described (yet).
	TimeoutMs     int32
	ProducerEpoch int16
	State         State
	// Described is false when only ListTransactions has been seen for this
	// id.
	Described bool
	// Pending: only listed so far, to be described (a progressive first load,
	// or more changes than one refresh describes): epoch, timeout, start and
	// partitions are not known yet, not zero (pending.go).
	Pending bool
	// outcome and prevOutcome are what the log says about the id's current
	// and previous transaction: see Outcome and PrevOutcome.
	outcome     outcome
	prevOutcome outcome
}

// StartTime is the start of the running transaction, the zero time when the
// coordinator reported none. Like the coordinator's own timestamp it is whole
// milliseconds in the local zone, with no monotonic reading.
func (t Txn) StartTime() time.Time {
	if t.StartUnixMs == 0 {
		return time.Time{}
	}
	return time.UnixMilli(t.StartUnixMs)
}

// SetStart sets the start from a time, to the millisecond; the zero time
// means none.
func (t *Txn) SetStart(at time.Time) {
	if at.IsZero() {
		t.StartUnixMs = 0
		return
	}
	t.StartUnixMs = at.UnixMilli()
}

// HasStart reports whether the coordinator reported a start.
func (t Txn) HasStart() bool { return t.StartUnixMs != 0 }

// Outcome is CompleteCommit or CompleteAbort when the coordinator itself says
// Empty after a transaction (kfake) and the outcome was read from the log
// instead; empty otherwise.
func (t Txn) Outcome() State { return t.outcome.state() }

// SetOutcome records what the log says about the id's current transaction:
// CompleteCommit or CompleteAbort; any other state clears it.
func (t *Txn) SetOutcome(s State) { t.outcome = asOutcome(s) }

// PrevOutcome is what the log says about the id's previous transaction when the
// id moved past it to another one between two polls (MovedOn, or a later
// Complete* state: a busy producer, or a restart fencing a zombie):
// CompleteCommit, CompleteAbort, or empty when unknown.
func (t Txn) PrevOutcome() State { return t.prevOutcome.state() }

// SetPrevOutcome records what the log says about the transaction before the
// one t shows: CompleteCommit or CompleteAbort; any other state clears it.
func (t *Txn) SetPrevOutcome(s State) { t.prevOutcome = asOutcome(s) }

// outcome is how the log says a transaction ended, in one byte instead of a
// State's sixteen: only the two Complete* states are ever read from a log.
type outcome uint8

const (
	noOutcome outcome = iota
	outcomeCommit
	outcomeAbort
)

func asOutcome(s State) outcome {
	switch s {
	case CompleteCommit:
		return outcomeCommit
	case CompleteAbort:
		return outcomeAbort
	}
	return noOutcome
}

func (o outcome) state() State {
	switch o {
	case outcomeCommit:
		return CompleteCommit
	case outcomeAbort:
		return CompleteAbort
	}
	return NoState
}

// Age is how long the current transaction has been running; ok is false when the
// coordinator reported no start time.
func (t Txn) Age(now time.Time) (time.Duration, bool) {
	if !t.HasStart() || !t.State.Open() {
		return 0, false
	}
	a := now.Sub(t.StartTime())
	if a < 0 {
		a = 0
	}
	return a, true
}

// Ratio is age / transaction.timeout.ms; ok is false when either is unknown.
func (t Txn) Ratio(now time.Time) (float64, bool) {
	a, ok := t.Age(now)
	if !ok || t.TimeoutMs <= 0 {
		return 0, false
	}
	return float64(a) / float64(time.Duration(t.TimeoutMs)*time.Millisecond), true
}

// Timeout is transaction.timeout.ms as a duration (0 when unknown).
func (t Txn) Timeout() time.Duration { return time.Duration(t.TimeoutMs) * time.Millisecond }

// Severity grades how close something is to trouble.
type Severity int

const (
	SevOK Severity = iota
	SevWarn
	SevDanger
)

// Thresholds of age/timeout at which a transaction turns warn and danger.
const (
	WarnRatio   = 0.5
	DangerRatio = 0.9
)

// SeverityOf grades an age/timeout ratio.
func SeverityOf(ratio float64) Severity {
	switch {
	case ratio >= DangerRatio:
		return SevDanger
	case ratio >= WarnRatio:
		return SevWarn
	}
	return SevOK
}

// Severity grades the transaction by its ratio; transactions without a ratio are OK.
func (t Txn) Severity(now time.Time) Severity {
	r, ok := t.Ratio(now)
	if !ok {
		return SevOK
	}
	return SeverityOf(r)
}

// Producer is one row of DescribeProducers for a partition.
type Producer struct {
	ProducerID    int64
	ProducerEpoch int16
	LastSequence  int32
	// LastWriteMs is the broker's LastTimestamp in Unix milliseconds, 0 when
	// it reported -1 (unknown) or 0 (a client that sent no time: as unknown,
	// never 1970, which would make any open transaction look abandoned). Not a time.Time: a pinned partition can list
	// 41,000 producers every refresh, and rows without a pointer are never
	// scanned by the garbage collector, and 24 bytes smaller.
	LastWriteMs      int64
	CoordinatorEpoch int32
	// CurrentTxnStartOffset is -1 when the producer has no open transaction here.
	CurrentTxnStartOffset int64
}

// Partition holds the offsets and producer state of one partition touched by an
// open transaction.
type Partition struct {
	TopicPartition
	Leader int32
	// HighWatermark and LastStableOffset are -1 when unknown.
	HighWatermark    int64
	LastStableOffset int64
	Producers        []Producer
	// Err is a per-partition problem (no permission, leader unavailable, ...).
	Err string
	// OffsetsDenied and ProducersDenied say the principal may not read the
	// offsets (ListOffsets needs DESCRIBE on the topic) or the producer state
	// (DescribeProducers needs READ): Err then starts with NoPermission, and
	// what they cover is unknown, never zero or empty.
	OffsetsDenied   bool
	ProducersDenied bool
	// OwnersHidden is set when ACLs hide some transactional ids from us: a
	// producer here that no visible transaction owns may belong to one of
	// them, so that is no proof of a hanging transaction.
	OwnersHidden bool
}

// NoPermission starts every error that comes from a missing ACL, so a reader
// (and a test) can tell "not allowed" from "broken".
const NoPermission = "no permission"

// Denied reports whether err is about a missing permission.
func Denied(err string) bool { return strings.HasPrefix(err, NoPermission) }

// HeldBack is how many records read_committed consumers cannot see yet.
func (p Partition) HeldBack() int64 {
	if p.HighWatermark < 0 || p.LastStableOffset < 0 || p.HighWatermark < p.LastStableOffset {
		return 0
	}
	return p.HighWatermark - p.LastStableOffset
}

// Pinned reports whether an open transaction holds the LSO below the high watermark.
func (p Partition) Pinned() bool { return p.HeldBack() > 0 }

// Producer returns the row for a producer id.
func (p Partition) Producer(pid int64) (Producer, bool) {
	for _, pr := range p.Producers {
		if pr.ProducerID == pid {
			return pr, true
		}
	}
	return Producer{}, false
}

// Pinner returns the producer whose open transaction starts at the LSO: the one a
// read_committed consumer is waiting for.
func (p Partition) Pinner() (Producer, bool) {
	if !p.Pinned() {
		return Producer{}, false
	}
	for _, pr := range p.Producers {
		if pr.CurrentTxnStartOffset >= 0 && pr.CurrentTxnStartOffset == p.LastStableOffset {
			return pr, true
		}
	}
	return Producer{}, false
}

// HiddenIDs starts Snapshot.Hidden: ListTransactions silently leaves out the
// ids the principal may not DESCRIBE.
const HiddenIDs = "some transactional ids are hidden by ACLs"

// Snapshot is one full refresh of the cluster.
type Snapshot struct {
	// TakenAt is when the refresh began: ages are counted from it.
	TakenAt time.Time
	// RowsAt is set when the rows are an earlier listing's, held as they
	// were (HoldRows): when that listing was read. Zero: read by this
	// refresh.
	RowsAt time.Time
	// ReadAt is when its rows had all been read (listed and described); zero
	// when not known. A change between two polls happened before it: a
	// transaction aborted at its timeout a few milliseconds after TakenAt is
	// told from one its producer aborted by it.
	ReadAt    time.Time
	Bootstrap string
	Brokers   int
	// BrokerMaxTimeoutMs is transaction.max.timeout.ms (0 when unknown).
	BrokerMaxTimeoutMs int64
	// Txns is sorted by ID.
	Txns []Txn
	// Partitions covers the partitions of open transactions, every partition
	// whose LSO is below its high watermark, and the watched ones; sorted by
	// topic and partition.
	Partitions []Partition
	// Hidden is set when the cluster said some ids are not visible to us
	// (ACLs); it starts with HiddenIDs.
	Hidden string
	// EpochBumpsOnEnd is set when the brokers run transaction version 2 (KIP-890
	// part 2, Kafka 4.0+): every commit or abort bumps the producer epoch, so a
	// higher epoch alone never tells a fence.
	EpochBumpsOnEnd bool
	// Scanned is how many partitions had their offsets read this refresh (every
	// partition of the cluster); Partitions keeps only those worth showing.
	Scanned int
	// Unread is how many of them could not be read (only watched partitions
	// keep their error in Partitions).
	Unread int
	// GroupCommits are consumer groups' committed offsets on the pinned
	// partitions, sorted by partition, then group (pinning.go).
	GroupCommits []GroupCommit
	// GroupsErr is set when the consumer groups could not be read.
	GroupsErr string
	// Source says where the states and the history come from.
	Source Source
	// Unanswered are the brokers that did not answer this refresh, sorted by
	// id: what they hold is missing or last known, and the rest is read. A
	// refresh that none answered fails instead.
	Unanswered []BrokerError
	// UnitCommits are when the coordinators' log last wrote a commit of
	// each job's unit, Unix ms, when it is the source (nil otherwise).
	UnitCommits map[UnitKey]int64
	// Events are what the coordinators' log says happened since the previous
	// snapshot, oldest first, when it is the source of the events
	// (Source.Log or Source.LogEvents); nil otherwise, and then the history
	// is a Diff of two snapshots.
	Events []Event

	// index finds Txns by id; Sort builds it (index.go).
	index *txnIndex
}

// BrokerError is one broker that did not answer, and why.
type BrokerError struct {
	ID  int32
	Err string
}

// UnansweredText says in a few words which brokers did not answer ("" when
// all did): "broker 2", "brokers 1, 3".
func UnansweredText(bs []BrokerError) string {
	if len(bs) == 0 {
		return ""
	}
	ids := make([]string, len(bs))
	for i, b := range bs {
		ids[i] = strconv.Itoa(int(b.ID))
	}
	if len(ids) == 1 {
		return "broker " + ids[0]
	}
	return "brokers " + strings.Join(ids, ", ")
}

// Source is where a snapshot's states and history come from.
type Source struct {
	// Log: the coordinators' own log (__transaction_state), followed to its
	// end; the states were not listed nor described, and every event is what
	// a coordinator wrote.
	Log bool
	// Why says why the log is not the source ("" when it is): the topic
	// cannot be read (no READ, kfake), or it is still being read.
	Why string
	// Since is the time of the oldest record the log still holds (the zero
	// time when unknown): how far back a replay reaches.
	Since time.Time
	// Window is the start of the stretch of the log a one-shot replayed for
	// its history (snapshot: the last hour, or --since); zero when the
	// history was followed (the UI, the exporter) or is one read's.
	Window time.Time
	// Unread says in one line which records of the log could not be read
	// (model.UnreadLine; "" when none). While one of them leaves an id's
	// state unknown the log is not the source, and Why says so too.
	Unread string
	// LogEvents: the states were listed (Log false) but the events are still
	// the log's, read so far: its reader is live and was only behind, or
	// the log's end could not be read for a moment (a leader election). A
	// Diff would count again what the log reads later, and keep one event
	// an id where the log has them all.
	LogEvents bool
	// Reading: the log is being read from its start, and once through gives
	// every id's row, described: until then the listing's rows stand, and
	// only the open ones are worth describing.
	Reading bool
}

// HoldRows makes s show prev's rows as they are, shared with their index: a
// refresh that did not list them again (kafkaadmin, while the coordinators'
// log is first read at millions of ids). RowsAt says since when.
func (s *Snapshot) HoldRows(prev *Snapshot) {
	s.Txns, s.index = prev.Txns, prev.index
	s.RowsAt = prev.RowsAt
	if s.RowsAt.IsZero() {
		s.RowsAt = prev.TakenAt
	}
}

// Txn finds a transaction by id (Txns is sorted by id). After Sort it is one
// hash probe; a snapshot changed since is searched.
func (s *Snapshot) Txn(id string) (Txn, bool) {
	if i, ok := s.at(id); ok {
		return s.Txns[i], true
	}
	return Txn{}, false
}

// Pos is the position of id's row in Txns.
func (s *Snapshot) Pos(id string) (int, bool) { return s.at(id) }

// at is the position of id's row in Txns: the index's when it has the id,
// else a search.
func (s *Snapshot) at(id string) (int, bool) {
	if s.index.fits(s.Txns) {
		if i := s.index.find(s.Txns, id); i >= 0 {
			return i, true
		}
	}
	return search(s.Txns, id)
}

// Partition finds a partition's offsets and producers.
func (s *Snapshot) Partition(tp TopicPartition) (Partition, bool) {
	i := sort.Search(len(s.Partitions), func(i int) bool { return !s.Partitions[i].TopicPartition.Less(tp) })
	if i < len(s.Partitions) && s.Partitions[i].TopicPartition == tp {
		return s.Partitions[i], true
	}
	return Partition{}, false
}

// StateCounts counts transactions per state.
func (s *Snapshot) StateCounts() map[State]int {
	// Counted by number without hashing: this runs per id on every refresh.
	var n [256]int
	for i := range s.Txns {
		n[s.Txns[i].State]++
	}
	m := make(map[State]int, 8)
	for st, c := range n {
		if c > 0 {
			m[State(st)] = c
		}
	}
	return m
}

// OldestOpen returns the open transaction that started first.
func (s *Snapshot) OldestOpen() (Txn, bool) {
	best := -1
	for i := range s.Txns {
		t := &s.Txns[i]
		if !t.State.Open() || !t.HasStart() {
			continue
		}
		if best < 0 || t.StartUnixMs < s.Txns[best].StartUnixMs {
			best = i
		}
	}
	if best < 0 {
		return Txn{}, false
	}
	return s.Txns[best], true
}

// Sort puts Txns and Partitions in the order the lookups rely on and indexes
// Txns by id. A refresh sorts twice: on a snapshot already in order it only
// checks the order. Call it before the snapshot is shared: it writes the
// index that Txn reads.
func (s *Snapshot) Sort() {
	// The log's rows are in order by construction: checking 2,000,000 of
	// them took a tenth of a steady TUI's CPU.
	inOrder := s.index.fits(s.Txns) && s.index.inOrder
	if !inOrder && (sortTxns(s.Txns) || !s.index.fits(s.Txns)) {
		s.index = newTxnIndex(s.Txns)
	}
	less := func(a, b Partition) int { return ComparePartitions(a.TopicPartition, b.TopicPartition) }
	if !slices.IsSortedFunc(s.Partitions, less) {
		slices.SortStableFunc(s.Partitions, less)
	}
}

// ComparePartitions orders partitions by topic, then partition, as Less.
func ComparePartitions(a, b TopicPartition) int {
	if c := strings.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	return int(a.Partition) - int(b.Partition)
}
