package model

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// PlanForceTerminate is the force-terminate of t as the operator sees it. It
// refuses what it could not later tell from the id's next transaction.
func PlanForceTerminate(t Txn) (Action, error) {
	switch {
	case !t.Described:
		return Action{}, fmt.Errorf("%s has not been described yet (epoch and start unknown); wait for the next refresh", t.ID)
	case !t.State.Abortable():
		return Action{}, fmt.Errorf("%s is %s: force-terminate needs an Ongoing or PrepareEpochFence transaction; "+
			"an InitProducerId now would only fence its producer", t.ID, t.State)
	case !t.HasStart():
		return Action{}, fmt.Errorf("the coordinator reports no start time for %s's transaction, so it could not be told from the next one", t.ID)
	}
	return Action{
		Kind: ForceTerminate, TransactionalID: t.ID, State: t.State, Start: t.StartTime(),
		Partitions: slices.Clone(t.Partitions), Coordinator: t.Coordinator, TimeoutMs: t.TimeoutMs,
		ProducerID: t.ProducerID, ProducerEpoch: t.ProducerEpoch,
	}, nil
}

// ErrNotIdle is wrapped by PlanAbortPartition when the producer wrote more
// recently than the idle rule allows: the plan it returns with it may be sent
// only if the operator explicitly sets the rule aside (IdleWaived).
var ErrNotIdle = errors.New("held back by the idle rule")

// PlanAbortPartition is the abort of pr's open transaction on p. minIdle is
// the idle rule (the brokers' transaction.max.timeout.ms); zero or less means
// the operator explicitly set it aside.
func PlanAbortPartition(p Partition, pr Producer, minIdle time.Duration, now time.Time) (Action, error) {
	a := Action{
		Kind: AbortPartition, TopicPartition: p.TopicPartition, Leader: p.Leader,
		ProducerID: pr.ProducerID, ProducerEpoch: pr.ProducerEpoch, CoordinatorEpoch: pr.CoordinatorEpoch,
		StartOffset: pr.CurrentTxnStartOffset, LastWrite: pr.LastTimestamp(), MinIdle: minIdle, IdleWaived: minIdle <= 0,
	}
	switch {
	case pr.CurrentTxnStartOffset < 0:
		return Action{}, fmt.Errorf("producer %d has no open transaction on %s-%d", pr.ProducerID, p.Topic, p.Partition)
	case p.Leader < 0:
		return Action{}, fmt.Errorf("%s-%d has no known leader right now; try again after a refresh", p.Topic, p.Partition)
	case !a.IdleWaived && !idleOver(pr, now, minIdle):
		return a, fmt.Errorf("%w: %s", ErrNotIdle, a.notIdle(pr, now))
	}
	return a, nil
}

// idleOver is the idle rule: the producer's last write is known and older
// than min. An unknown one proves nothing (kafka-transactions.sh takes it for
// very old).
func idleOver(pr Producer, now time.Time, min time.Duration) bool {
	return pr.LastWriteMs != 0 && HangingCandidate(pr, now, min)
}

// notIdle says why the idle rule holds an abort back.
func (a Action) notIdle(pr Producer, now time.Time) string {
	last := "an unknown time ago"
	if pr.LastWriteMs != 0 {
		last = Short(pr.IdleFor(now)) + " ago"
	}
	return fmt.Sprintf("producer %d last wrote to %s-%d %s, not over %s (the brokers' transaction.max.timeout.ms): "+
		"its transaction may be live and merely not listed by its coordinator (yet), "+
		"which is why kafka-transactions.sh find-hanging would not call it hanging", pr.ProducerID, a.Topic, a.Partition, last, Short(a.MinIdle))
}

// AbortTarget is the producer an abort on a partition ends, among the
// orphans there (the open transactions no coordinator accounts for): the
// producer pid when it is one of them, else the one pinning the LSO, else the
// first.
func AbortTarget(orphans []Producer, pid int64, pinner *Producer) (Producer, bool) {
	if len(orphans) == 0 {
		return Producer{}, false
	}
	for _, o := range orphans {
		if o.ProducerID == pid {
			return o, true
		}
	}
	if pinner != nil {
		for _, o := range orphans {
			if o.ProducerID == pinner.ProducerID {
				return o, true
			}
		}
	}
	return orphans[0], true
}

// Orphans returns the producers with an open transaction on p that no open
// transaction listed by the coordinator accounts for: the candidates for an
// abort on the partition (KIP-664's hanging transactions).
func Orphans(p Partition, byPID map[int64]*Txn) []Producer {
	var out []Producer
	for _, pr := range p.Producers {
		if pr.CurrentTxnStartOffset < 0 {
			continue
		}
		t := byPID[pr.ProducerID]
		// An owner not described yet is given the benefit of the doubt.
		if t != nil && t.State.Open() && (t.Pending || slices.Contains(t.Partitions, p.TopicPartition)) {
			continue
		}
		out = append(out, pr)
	}
	return out
}

// ProducersOn is ByProducerID for the producers with a transaction open on
// s's partitions only: every owner the screens and the pin rules look up is
// one of them (the pinner, the orphans, the hanging; the idle ones are shown
// as such). A map of every id, rebuilt each refresh, cost 40 bytes and a
// share of the refresh per id at 500,000 ids; one of every producer a
// pinned partition keeps (one per transactional id that wrote there lately,
// 41,000 a partition after 500,000 Flink ids) cost most of the TUI's CPU.
func ProducersOn(s *Snapshot) map[int64]*Txn { return ProducersOf(s, s.Partitions) }

// ProducersOf is ProducersOn for parts only.
func ProducersOf(s *Snapshot, parts []Partition) map[int64]*Txn {
	m := make(map[int64]*Txn)
	n := 0
	for _, p := range parts {
		for _, pr := range p.Producers {
			if pr.CurrentTxnStartOffset >= 0 {
				n++
			}
		}
	}
	maybe := newPIDFilter(n)
	for _, p := range parts {
		for _, pr := range p.Producers {
			if pr.CurrentTxnStartOffset < 0 {
				continue
			}
			m[pr.ProducerID] = nil
			maybe.add(pr.ProducerID)
		}
	}
	if len(m) == 0 {
		return m
	}
	for i := range s.Txns {
		if !maybe.has(s.Txns[i].ProducerID) {
			continue
		}
		if _, ok := m[s.Txns[i].ProducerID]; ok {
			m[s.Txns[i].ProducerID] = &s.Txns[i] // the last one wins, as in ByProducerID
		}
	}
	for pid, t := range m {
		if t == nil {
			delete(m, pid)
		}
	}
	return m
}

// pidFilter answers "certainly not" for most producer ids in one bit test,
// so that ProducersOf asks its map about a few of 500,000 ids only. It has
// 16 bits per producer (at least 65,536): a fixed size was saturated by the
// 100,000 producers a busy partition's state keeps, and let every id through.
type pidFilter struct {
	words []uint64
	shift uint
}

func newPIDFilter(n int) pidFilter {
	shift := uint(48) // 65,536 bits
	for size := 1 << 16; size < 16*n && shift > 32; size <<= 1 {
		shift--
	}
	return pidFilter{words: make([]uint64, (1<<(64-shift))/64), shift: shift}
}

func (f *pidFilter) bit(pid int64) (int, uint64) {
	h := uint64(pid) * 0x9e3779b97f4a7c15 >> f.shift
	return int(h >> 6), 1 << (h & 63)
}

func (f *pidFilter) add(pid int64) { w, b := f.bit(pid); f.words[w] |= b }

func (f *pidFilter) has(pid int64) bool { w, b := f.bit(pid); return f.words[w]&b != 0 }

// ByProducerID indexes the transactions of s by producer id.
func ByProducerID(s *Snapshot) map[int64]*Txn {
	m := make(map[int64]*Txn, len(s.Txns))
	for i := range s.Txns {
		m[s.Txns[i].ProducerID] = &s.Txns[i]
	}
	return m
}
