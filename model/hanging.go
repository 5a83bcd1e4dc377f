package model

import (
	"slices"
	"sort"
	"time"
)

// DefaultMaxTxnTimeout is kafka-transactions.sh find-hanging's default
// --max-transaction-timeout (15 minutes, the brokers' default
// transaction.max.timeout.ms): no transaction can legitimately stay open longer.
const DefaultMaxTxnTimeout = 15 * time.Minute

// HangingReason says why an open transaction on a partition is hanging.
type HangingReason string

const (
	// NoOwner: ListTransactions lists no transactional id for the producer id.
	NoOwner HangingReason = "no transactional id owns the producer"
	// OwnerNotFound: an id was listed, but DescribeTransactions answered
	// TRANSACTIONAL_ID_NOT_FOUND (it expired or was removed meanwhile).
	OwnerNotFound HangingReason = "its transactional id is not found"
	// NotInTxn: the id's transaction does not list the partition, so the
	// coordinator will never write a marker there.
	NotInTxn HangingReason = "the partition is not in its transaction"
	// OwnerMaybeHidden: no visible transactional id owns the producer id,
	// but ACLs hide some ids, so the owner may be one of them and its
	// transaction live. Never a reason to abort.
	OwnerMaybeHidden HangingReason = "possibly hanging: owner may be hidden by ACLs"
)

// ProducerOn is one DescribeProducers row together with the partition it was
// read from.
type ProducerOn struct {
	TopicPartition
	Producer
}

// Owner is what the coordinators said about the transactional id that owns a
// producer id.
type Owner struct {
	// ID is the transactional id ListTransactions listed for the producer id.
	ID string
	// Txn is the id as DescribeTransactions reports it; nil when it answered
	// TRANSACTIONAL_ID_NOT_FOUND.
	Txn *Txn
	// Err is set when the id could not be described for another reason: then
	// nothing can be concluded and its producers are never reported.
	Err string
}

// Hanging is an open transaction on a partition that no coordinator will ever
// end: only an abort on the partition (WriteTxnMarkers) releases its LSO.
type Hanging struct {
	TopicPartition
	Producer
	Reason HangingReason
	// TransactionalID is the id that owns the producer, "" when none does.
	TransactionalID string
	// Duration is now − the producer's last timestamp, as the rule judged it.
	Duration time.Duration
}

// LastTimestampMs is the producer's last timestamp in epoch milliseconds as the
// broker reported it: -1 when unknown.
func (p Producer) LastTimestampMs() int64 {
	if p.LastWriteMs == 0 {
		return -1
	}
	return p.LastWriteMs
}

// LastTimestamp is the producer's last write, the zero time when unknown.
func (p Producer) LastTimestamp() time.Time {
	if p.LastWriteMs == 0 {
		return time.Time{}
	}
	return time.UnixMilli(p.LastWriteMs).UTC()
}

// WriteMs is t as a Producer's LastWriteMs: 0 for the zero time.
func WriteMs(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// IdleFor is now − the last timestamp in whole milliseconds, computed as
// kafka-transactions.sh does: an unknown (-1) timestamp makes it about now.
func (p Producer) IdleFor(now time.Time) time.Duration {
	return time.Duration(now.UnixMilli()-p.LastTimestampMs()) * time.Millisecond
}

// HangingCandidate reports whether a producer's open transaction has outlived
// any possible transaction timeout: it has a current transaction start offset
// and now − last timestamp > maxTimeout (strictly, as kafka-transactions.sh).
func HangingCandidate(p Producer, now time.Time, maxTimeout time.Duration) bool {
	return p.CurrentTxnStartOffset >= 0 && p.IdleFor(now) > maxTimeout
}

// HangingCandidates keeps the rows that are candidates, in their order.
func HangingCandidates(rows []ProducerOn, now time.Time, maxTimeout time.Duration) []ProducerOn {
	var out []ProducerOn
	for _, r := range rows {
		if HangingCandidate(r.Producer, now, maxTimeout) {
			out = append(out, r)
		}
	}
	return out
}

// CandidatePIDs are the distinct producer ids of the candidates, ascending: the
// ids ListTransactions is asked about.
func CandidatePIDs(rows []ProducerOn, now time.Time, maxTimeout time.Duration) []int64 {
	seen := map[int64]bool{}
	var out []int64
	for _, r := range HangingCandidates(rows, now, maxTimeout) {
		if !seen[r.ProducerID] {
			seen[r.ProducerID] = true
			out = append(out, r.ProducerID)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// FindHanging is kafka-transactions.sh find-hanging's rule. rows are the
// DescribeProducers rows of the partitions searched; owners holds, for the
// candidates' producer ids, what ListTransactions (filtered by those ids) and
// DescribeTransactions said (a producer id absent from owners is owned by no
// transactional id). A candidate is hanging when no id owns its producer id,
// the owning id is not found, or the id's transaction does not list the
// partition. The epoch is deliberately not compared: a coordinator whose
// transaction lists the partition writes its marker with the newer epoch, which
// ends the older transaction there too. Sorted by topic, partition, producer id.
func FindHanging(rows []ProducerOn, now time.Time, maxTimeout time.Duration, owners map[int64]Owner) []Hanging {
	return FindHangingHidden(rows, now, maxTimeout, owners, false)
}

// FindHangingHidden is FindHanging when ACLs may hide transactional ids from
// the caller (hidden): a candidate no visible id owns is then reported with
// OwnerMaybeHidden instead of NoOwner, as it may belong to an id we cannot see.
func FindHangingHidden(rows []ProducerOn, now time.Time, maxTimeout time.Duration, owners map[int64]Owner, hidden bool) []Hanging {
	var out []Hanging
	for _, r := range HangingCandidates(rows, now, maxTimeout) {
		h := Hanging{TopicPartition: r.TopicPartition, Producer: r.Producer, Duration: r.IdleFor(now)}
		o, owned := owners[r.ProducerID]
		switch {
		case !owned && hidden:
			h.Reason = OwnerMaybeHidden
		case !owned:
			h.Reason = NoOwner
		case o.Err != "":
			continue
		case o.Txn == nil:
			h.Reason, h.TransactionalID = OwnerNotFound, o.ID
		case !slices.Contains(o.Txn.Partitions, r.TopicPartition):
			h.Reason, h.TransactionalID = NotInTxn, o.ID
		default:
			continue
		}
		out = append(out, h)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].TopicPartition != out[j].TopicPartition {
			return out[i].TopicPartition.Less(out[j].TopicPartition)
		}
		return out[i].ProducerID < out[j].ProducerID
	})
	return out
}

// OwnersOf indexes already-described transactions by producer id, for callers
// that hold a Snapshot rather than asking the coordinators per producer id. An
// id that could not be described yields an Owner with Err, so its producers
// are never reported on a guess.
func OwnersOf(txns []Txn) map[int64]Owner {
	m := make(map[int64]Owner, len(txns))
	for i := range txns {
		m[txns[i].ProducerID] = ownerOf(&txns[i])
	}
	return m
}

// A row with Err is in doubt even when described: its coordinator did not
// answer and it is the last known state, whose partitions predate the
// transaction now open (CI, a paused coordinator: a committing producer's
// new transaction judged "not in its transaction").
func ownerOf(t *Txn) Owner {
	o := Owner{ID: t.ID, Txn: t}
	if !t.Described || t.Err != "" {
		o.Txn, o.Err = nil, t.Err
		if o.Err == "" {
			o.Err = "not described"
		}
	}
	return o
}

// Rows flattens a partition's DescribeProducers rows for FindHanging.
func (p Partition) Rows() []ProducerOn {
	out := make([]ProducerOn, len(p.Producers))
	for i, pr := range p.Producers {
		out[i] = ProducerOn{TopicPartition: p.TopicPartition, Producer: pr}
	}
	return out
}
