package model

import (
	"fmt"
	"slices"
	"sort"
	"time"
)

// StuckSlack is how far below a pinned LSO a group's committed offset may be
// and still count as stuck behind it. A franz-go consumer commits the offset
// after the last record it was given, not its fetch position, so the markers
// of transactions that ended just before the pinned one leave it a few
// offsets short of the LSO; a Java consumer commits the LSO itself.
const StuckSlack = 10

// Group types, as ListGroups v5+ names them (KIP-848, KIP-932, KIP-1071).
const (
	GroupClassic  = "classic"
	GroupConsumer = "consumer"
	GroupShare    = "share"
	GroupStreams  = "streams"
)

// GroupCommit is a consumer group's committed offset on one partition; for
// a share group (Type GroupShare), the share-partition's start offset, the
// first record it has not acknowledged.
type GroupCommit struct {
	Group string
	// State is the group's state as ListGroups reports it (Stable, Empty, ...).
	State string
	// Type is the group's protocol (GroupClassic, ...; "" when the broker
	// does not say: a classic group).
	Type string
	TopicPartition
	Offset int64
}

// StuckGroup is a consumer group whose committed offset is at (or just below)
// a pinned LSO: a read_committed reader that cannot move until the pin goes.
type StuckGroup struct {
	Group     string
	State     string
	Type      string // as GroupCommit.Type
	Committed int64
	// LagLSO is LSO − committed (0 when it waits right at the LSO); LagHWM is
	// HWM − committed, what it will read once the pin is released.
	LagLSO, LagHWM int64
}

// Pin explains one partition whose LSO is below its high watermark.
type Pin struct {
	Partition
	// Pinner is the producer whose open transaction starts at the LSO.
	Pinner    Producer
	HasPinner bool
	// Owner is the transaction the coordinator lists for the pinner's
	// producer id; HasOwner is false when no transactional id owns it.
	Owner    Txn
	HasOwner bool
	// Blocking: Owner is the open transaction holding this LSO (it lists the
	// partition at the pinner's epoch, or has not been described yet):
	// force-terminating it releases the partition.
	Blocking bool
	// Since is when the partition was first seen pinned at this LSO; AtLeast
	// says it was already pinned in txnscope's first snapshot, so it has been
	// pinned at least that long.
	Since   time.Time
	AtLeast bool
	Stuck   []StuckGroup
	// Hanging is set when no coordinator will ever end a transaction here:
	// kafka-transactions.sh find-hanging's rule, or an LSO pinned longer than
	// the max transaction timeout by a producer no ongoing transaction owns.
	// Why says which, in words; HangingPIDs are the producers concerned.
	Hanging     bool
	Why         []string
	HangingPIDs []int64
	// MaybeHanging: the rules above would call it hanging only because no
	// visible transactional id owns the producer, while ACLs hide some ids
	// (Partition.OwnersHidden): its owner may be one of them. Maybe says so
	// in words. It is not counted as hanging.
	MaybeHanging bool
	Maybe        []string
}

// PinnedFor is how long the LSO has been seen pinned.
func (p Pin) PinnedFor(now time.Time) time.Duration {
	if p.Since.IsZero() || now.Before(p.Since) {
		return 0
	}
	return now.Sub(p.Since)
}

// MaxTimeout is the brokers' transaction.max.timeout.ms, or Kafka's default
// when it could not be read.
func (s *Snapshot) MaxTimeout() time.Duration {
	if s.BrokerMaxTimeoutMs > 0 {
		return time.Duration(s.BrokerMaxTimeoutMs) * time.Millisecond
	}
	return DefaultMaxTxnTimeout
}

// Pins explains every pinned partition of s, longest pinned first. tr (may
// be nil) knows since when each LSO has been pinned; it must have observed s.
func Pins(s *Snapshot, tr *PinTracker, now time.Time) []Pin {
	return PinsOf(s, nil, tr, now)
}

// PinsOf is Pins with the owners of the snapshot's producers already found
// (ProducersOn; nil: found here when something is pinned): at 500,000 ids
// finding them is a scan of every id, once per refresh is enough.
func PinsOf(s *Snapshot, byPID map[int64]*Txn, tr *PinTracker, now time.Time) []Pin {
	if s == nil {
		return nil
	}
	var (
		maxTimeout = s.MaxTimeout()
		out        []Pin
	)
	for _, p := range s.Partitions {
		if !p.Pinned() {
			continue
		}
		if byPID == nil { // indexing even the producers' owners is not free: only when something is pinned
			byPID = ProducersOn(s)
		}
		pin := Pin{Partition: p, Since: s.TakenAt}
		if tr != nil {
			if at, atLeast, ok := tr.Since(p.TopicPartition, p.LastStableOffset); ok {
				pin.Since, pin.AtLeast = at, atLeast
			}
		}
		pin.Pinner, pin.HasPinner = p.Pinner()
		if pin.HasPinner {
			if t := byPID[pin.Pinner.ProducerID]; t != nil {
				pin.Owner, pin.HasOwner = *t, true
				pin.Blocking = blocks(*t, p.TopicPartition, pin.Pinner)
			}
		}
		judgeHanging(&pin, openOwners(p, byPID), now, maxTimeout)
		pin.Stuck = stuckOn(p, s.GroupCommits)
		out = append(out, pin)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if !a.Since.Equal(b.Since) {
			return a.Since.Before(b.Since)
		}
		if a.HeldBack() != b.HeldBack() {
			return a.HeldBack() > b.HeldBack()
		}
		return a.TopicPartition.Less(b.TopicPartition)
	})
	return out
}

// blocks reports whether t is the open transaction holding tp's LSO for the
// pinning producer: it lists the partition at the pinner's epoch or a later
// one (its marker carries its own epoch, which ends an older transaction of
// the same producer there too: transaction version 2 bumps the epoch at
// EndTxn, a fence at once). An id not described yet is given the benefit of
// the doubt.
func blocks(t Txn, tp TopicPartition, pinner Producer) bool {
	switch {
	case !t.State.Open():
		return false
	case !t.Described:
		return true
	}
	return slices.Contains(t.Partitions, tp) && t.ProducerEpoch >= pinner.ProducerEpoch
}

// judgeHanging applies find-hanging's rule to every producer of the
// partition, then the pin rule: pinned longer than any transaction may live
// (by txnscope's clock, or by the pinner's own last write) while no ongoing
// transaction owns the pinning producer.
// openOwners are the owners of the producers with a transaction open on p,
// the only ones judgeHanging asks about: a partition's state keeps every
// producer that wrote to it lately, 100,000 of them on a busy one.
func openOwners(p Partition, byPID map[int64]*Txn) map[int64]Owner {
	m := map[int64]Owner{}
	for _, pr := range p.Producers {
		if pr.CurrentTxnStartOffset < 0 {
			continue
		}
		if t := byPID[pr.ProducerID]; t != nil {
			m[pr.ProducerID] = ownerOf(t)
		}
	}
	return m
}

func judgeHanging(pin *Pin, owners map[int64]Owner, now time.Time, maxTimeout time.Duration) {
	seen := map[int64]bool{}
	var open []ProducerOn // the candidates are among them
	for _, pr := range pin.Producers {
		if pr.CurrentTxnStartOffset >= 0 {
			open = append(open, ProducerOn{TopicPartition: pin.TopicPartition, Producer: pr})
		}
	}
	for _, h := range FindHangingHidden(open, now, maxTimeout, owners, pin.OwnersHidden) {
		why := fmt.Sprintf("producer %d: %s (idle %s, past the %s max transaction timeout)",
			h.ProducerID, h.Reason, h.Duration.Round(time.Second), maxTimeout)
		if h.Reason == OwnerMaybeHidden {
			pin.Maybe = append(pin.Maybe, why)
			continue
		}
		pin.Why = append(pin.Why, why)
		if !seen[h.ProducerID] {
			seen[h.ProducerID] = true
			pin.HangingPIDs = append(pin.HangingPIDs, h.ProducerID)
		}
	}
	// Without a pinner and with a read error the producers are simply unknown.
	if !pin.Blocking && (pin.HasPinner || pin.Err == "") {
		pinned := pin.PinnedFor(now)
		if pin.HasPinner && pin.Pinner.LastWriteMs != 0 {
			pinned = max(pinned, now.Sub(pin.Pinner.LastTimestamp()))
		}
		switch {
		case pinned <= maxTimeout:
		case pin.HasPinner && !pin.HasOwner && pin.OwnersHidden:
			pin.Maybe = append(pin.Maybe, fmt.Sprintf("LSO pinned for %s, longer than the %s max transaction timeout, by producer %d, which no visible transaction owns: %s",
				pinned.Round(time.Second), maxTimeout, pin.Pinner.ProducerID, OwnerMaybeHidden))
		case !pin.HasPinner && pin.OwnersHidden:
			// A coordinator that did not answer may be writing its markers:
			// a paused one held a commit's markers while the leader's
			// producer state showed nobody at the LSO (CI, three brokers).
			pin.Maybe = append(pin.Maybe, fmt.Sprintf("LSO pinned for %s, longer than the %s max transaction timeout, by a producer DescribeProducers does not show starting at the LSO, "+
				"while some transactional ids are hidden or their coordinators did not answer: the transaction may be one of theirs", pinned.Round(time.Second), maxTimeout))
		case pin.HasPinner && pin.HasOwner && pin.Owner.Err != "":
			// Its owner's row is in doubt (last known while its coordinator
			// did not answer, or the coordinators' log and the coordinator
			// disagreed on it): what it holds is not known.
			pin.Maybe = append(pin.Maybe, fmt.Sprintf("LSO pinned for %s, longer than the %s max transaction timeout, by producer %d of %s: %s",
				pinned.Round(time.Second), maxTimeout, pin.Pinner.ProducerID, pin.Owner.ID, pin.Owner.Err))
		default:
			who := "an unknown producer (DescribeProducers shows none starting at the LSO)"
			if pin.HasPinner {
				who = fmt.Sprintf("producer %d, which no ongoing transaction owns", pin.Pinner.ProducerID)
				if !seen[pin.Pinner.ProducerID] {
					seen[pin.Pinner.ProducerID] = true
					pin.HangingPIDs = append(pin.HangingPIDs, pin.Pinner.ProducerID)
				}
			}
			pin.Why = append(pin.Why, fmt.Sprintf("LSO pinned for %s, longer than the %s max transaction timeout, by %s",
				pinned.Round(time.Second), maxTimeout, who))
		}
	}
	pin.Hanging = len(pin.Why) > 0
	pin.MaybeHanging = !pin.Hanging && len(pin.Maybe) > 0
}

// stuckOn picks the groups waiting at p's LSO from commits sorted by partition.
func stuckOn(p Partition, commits []GroupCommit) []StuckGroup {
	i := sort.Search(len(commits), func(i int) bool { return !commits[i].TopicPartition.Less(p.TopicPartition) })
	var out []StuckGroup
	for ; i < len(commits) && commits[i].TopicPartition == p.TopicPartition; i++ {
		c := commits[i]
		slack := int64(StuckSlack)
		if c.Type == GroupShare {
			// A share group's start offset is exact: below the LSO it still has
			// committed records to be given, it is behind, not stuck.
			slack = 0
		}
		if c.Offset < 0 || c.Offset > p.LastStableOffset || p.LastStableOffset-c.Offset > slack {
			continue
		}
		out = append(out, StuckGroup{Group: c.Group, State: c.State, Type: c.Type, Committed: c.Offset,
			LagLSO: p.LastStableOffset - c.Offset, LagHWM: p.HighWatermark - c.Offset})
	}
	return out
}

// SortGroupCommits puts commits in the order Pins relies on.
func SortGroupCommits(cs []GroupCommit) {
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].TopicPartition != cs[j].TopicPartition {
			return cs[i].TopicPartition.Less(cs[j].TopicPartition)
		}
		return cs[i].Group < cs[j].Group
	})
}

// BlockedGroup is one consumer group stuck behind one or more pinned
// partitions.
type BlockedGroup struct {
	Group string
	State string
	Type  string // as GroupCommit.Type
	// Partitions are the pinned partitions it waits on, longest pinned first.
	Partitions []TopicPartition
	// LagLSO and LagHWM are summed over those partitions.
	LagLSO, LagHWM int64
	// Since is when the longest of those pins began (as Pin.Since).
	Since   time.Time
	Hanging bool // one of them is hanging
	// Blockers are the transactional ids holding them, in pin order, without
	// repeats; partitions held by no id add nothing here.
	Blockers []string
}

// BlockedGroups gathers the stuck groups of pins (as Pins returns them),
// the longest blocked first.
func BlockedGroups(pins []Pin) []BlockedGroup {
	idx := map[string]int{}
	var out []BlockedGroup
	for _, p := range pins {
		for _, g := range p.Stuck {
			i, ok := idx[g.Group]
			if !ok {
				i = len(out)
				idx[g.Group] = i
				out = append(out, BlockedGroup{Group: g.Group, State: g.State, Type: g.Type, Since: p.Since})
			}
			b := &out[i]
			b.Partitions = append(b.Partitions, p.TopicPartition)
			b.LagLSO += g.LagLSO
			b.LagHWM += g.LagHWM
			if p.Since.Before(b.Since) {
				b.Since = p.Since
			}
			b.Hanging = b.Hanging || p.Hanging
			if p.HasOwner && !containsString(b.Blockers, p.Owner.ID) {
				b.Blockers = append(b.Blockers, p.Owner.ID)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Since.Equal(out[j].Since) {
			return out[i].Since.Before(out[j].Since)
		}
		return out[i].Group < out[j].Group
	})
	return out
}

func containsString(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}

// HangingIDs are the transactional ids owning a producer that holds a
// hanging transaction in pins: their rows in the list are marked too.
func HangingIDs(s *Snapshot, pins []Pin) map[string]bool {
	return HangingIDsOf(s, nil, pins)
}

// HangingIDsOf is HangingIDs with the owners of the snapshot's producers
// already found (nil: found here when needed), as PinsOf.
func HangingIDsOf(s *Snapshot, byPID map[int64]*Txn, pins []Pin) map[string]bool {
	out := map[string]bool{}
	if s == nil {
		return out
	}
	for _, p := range pins {
		if !p.Hanging {
			continue
		}
		if byPID == nil {
			byPID = ProducersOn(s)
		}
		for _, pid := range p.HangingPIDs {
			if t := byPID[pid]; t != nil {
				out[t.ID] = true
			}
		}
	}
	return out
}

// PinTracker remembers since when each partition has been pinned at its
// current LSO, across snapshots, the way History remembers events.
type PinTracker struct {
	seen    map[TopicPartition]pinSeen
	started bool
}

type pinSeen struct {
	lso     int64
	at      time.Time
	atLeast bool
}

// NewPinTracker starts with nothing seen.
func NewPinTracker() *PinTracker {
	return &PinTracker{seen: map[TopicPartition]pinSeen{}}
}

// Observe takes a snapshot in: a partition newly pinned, or pinned at
// another LSO, starts counting at the snapshot's time; one read and no
// longer pinned is forgotten. A partition that could not be read keeps what
// was known, so one failed read does not reset its age.
func (t *PinTracker) Observe(s *Snapshot) {
	if s == nil {
		return
	}
	first := !t.started
	t.started = true
	read := make(map[TopicPartition]bool, len(s.Partitions))
	for _, p := range s.Partitions {
		if p.LastStableOffset < 0 || p.HighWatermark < 0 {
			continue
		}
		read[p.TopicPartition] = true
		if !p.Pinned() {
			continue
		}
		if old, ok := t.seen[p.TopicPartition]; ok && old.lso == p.LastStableOffset {
			continue
		}
		t.seen[p.TopicPartition] = pinSeen{lso: p.LastStableOffset, at: s.TakenAt, atLeast: first}
	}
	for tp := range t.seen {
		if _, ok := s.Partition(tp); ok && !read[tp] {
			continue // read failed: keep
		}
		if !read[tp] || !pinnedIn(s, tp) {
			delete(t.seen, tp)
		}
	}
}

func pinnedIn(s *Snapshot, tp TopicPartition) bool {
	p, ok := s.Partition(tp)
	return ok && p.Pinned()
}

// Since is when tp was first seen pinned at lso; atLeast is set when that
// was txnscope's first snapshot.
func (t *PinTracker) Since(tp TopicPartition, lso int64) (at time.Time, atLeast bool, ok bool) {
	s, ok := t.seen[tp]
	if !ok || s.lso != lso {
		return time.Time{}, false, false
	}
	return s.at, s.atLeast, true
}
