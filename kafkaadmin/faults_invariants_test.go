package kafkaadmin_test

import (
	"fmt"
	"slices"
	"strings"

	"github.com/txnscope/txnscope/model"
)

// staleMark is how Refresh marks a row kept from the previous snapshot
// because its coordinator did not answer.
const staleMark = "showing the last known state"

// violations lists everything in got that the cluster did not report. ref is
// what a fault-free refresh given the same prev reads; prev is that prev (nil
// for a first refresh). A snapshot read under faults may know less than ref,
// but only where it says so: Txn.Err, Partition.Err, -1 offsets, Unread, a
// stale row, GroupsErr or Hidden. It may never know something else.
func violations(got, ref, prev *model.Snapshot) []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }

	if got.Brokers != ref.Brokers {
		bad("%d brokers, the cluster has %d", got.Brokers, ref.Brokers)
	}
	if got.BrokerMaxTimeoutMs != 0 && got.BrokerMaxTimeoutMs != ref.BrokerMaxTimeoutMs {
		bad("transaction.max.timeout.ms %d, the brokers say %d", got.BrokerMaxTimeoutMs, ref.BrokerMaxTimeoutMs)
	}
	if !slices.IsSortedFunc(got.Txns, func(a, b model.Txn) int { return strings.Compare(a.ID, b.ID) }) {
		bad("transactions not sorted by id")
	}

	for _, g := range got.Txns {
		r, ok := ref.Txn(g.ID)
		if !ok {
			bad("%s: an id the cluster does not have", g.ID)
			continue
		}
		var p *model.Txn
		if prev != nil {
			if x, ok := prev.Txn(g.ID); ok {
				p = &x
			}
		}
		if strings.Contains(g.Err, staleMark) {
			if p == nil {
				bad("%s: marked stale but no earlier snapshot had it", g.ID)
				continue
			}
			kept := g
			kept.Err = p.Err
			if !sameTxn(kept, *p) {
				bad("%s: stale row %+v is not the last known one %+v", g.ID, g, *p)
			}
			continue
		}
		if g.State != r.State || g.ProducerID != r.ProducerID {
			bad("%s: %s producer %d, the coordinator lists %s producer %d", g.ID, g.State, g.ProducerID, r.State, r.ProducerID)
		}
		if g.Outcome() != model.NoState && g.Outcome() != r.Outcome() {
			bad("%s: outcome %s, the log says %q", g.ID, g.Outcome(), r.Outcome())
		}
		if g.PrevOutcome() != model.NoState && g.PrevOutcome() != r.PrevOutcome() {
			bad("%s: previous outcome %s, the log says %q", g.ID, g.PrevOutcome(), r.PrevOutcome())
		}
		if g.Err == "" {
			if !g.Described {
				bad("%s: neither described nor marked: %+v", g.ID, g)
			}
			if !sameDescribed(g, r) {
				bad("%s: %+v, the coordinator describes %+v", g.ID, g, r)
			}
			continue
		}
		if g.Described {
			bad("%s: marked with %q yet described", g.ID, g.Err)
		}
		// A failed describe may keep the previous row's fields for display
		// (marked by Err); anything else must be what the cluster said.
		if !(sameDescribed(g, r) || p != nil && sameDescribed(g, *p) || g.ProducerEpoch == 0 && g.Partitions == nil && !g.HasStart() && g.TimeoutMs == 0) {
			bad("%s: marked %q but shows %+v, neither the coordinator's %+v nor the last known", g.ID, g.Err, g, r)
		}
	}
	if got.Hidden == "" {
		for _, r := range ref.Txns {
			if _, ok := got.Txn(r.ID); !ok {
				bad("%s: dropped without a word (no error, no stale row, no hidden note)", r.ID)
			}
		}
	}

	for _, g := range got.Partitions {
		r, ok := ref.Partition(g.TopicPartition)
		if !ok {
			bad("%s-%d: a partition nothing pins or watches", g.Topic, g.Partition)
			continue
		}
		name := fmt.Sprintf("%s-%d", g.Topic, g.Partition)
		if g.HighWatermark != -1 && g.HighWatermark != r.HighWatermark {
			bad("%s: high watermark %d, the leader says %d", name, g.HighWatermark, r.HighWatermark)
		}
		if g.LastStableOffset != -1 && g.LastStableOffset != r.LastStableOffset {
			bad("%s: LSO %d, the leader says %d", name, g.LastStableOffset, r.LastStableOffset)
		}
		if g.Leader != -1 && g.Leader != r.Leader {
			bad("%s: leader %d, metadata says %d", name, g.Leader, r.Leader)
		}
		if (g.Producers != nil || g.Err == "") && !slices.Equal(g.Producers, r.Producers) {
			bad("%s: producers %+v (err %q), the leader says %+v", name, g.Producers, g.Err, r.Producers)
		}
		if r.Pinned() && !g.Pinned() && g.Err == "" {
			bad("%s: shown not pinned (hwm %d, lso %d) without saying the read failed; it is pinned", name, g.HighWatermark, g.LastStableOffset)
		}
		if g.Err == "" && (g.HighWatermark != r.HighWatermark || g.LastStableOffset != r.LastStableOffset) {
			bad("%s: offsets %d/%d unmarked, the leader says %d/%d", name, g.HighWatermark, g.LastStableOffset, r.HighWatermark, r.LastStableOffset)
		}
	}
	if got.Unread == 0 && got.Scanned >= ref.Scanned {
		for _, r := range ref.Partitions {
			if _, ok := got.Partition(r.TopicPartition); !ok {
				bad("%s-%d: dropped although every partition was read", r.Topic, r.Partition)
			}
		}
	}

	for _, gc := range got.GroupCommits {
		if !slices.Contains(ref.GroupCommits, gc) {
			bad("group commit %+v the coordinator does not have", gc)
		}
	}
	if got.GroupsErr == "" {
		for _, rc := range ref.GroupCommits {
			if p, ok := got.Partition(rc.TopicPartition); ok && p.Pinned() && !slices.Contains(got.GroupCommits, rc) {
				bad("group commit %+v on a partition shown pinned is missing, and no error says why", rc)
			}
		}
	}
	return out
}

// sameDescribed compares what DescribeTransactions says about an id.
func sameDescribed(a, b model.Txn) bool {
	return a.ProducerEpoch == b.ProducerEpoch && a.TimeoutMs == b.TimeoutMs && a.StartTime().Equal(b.StartTime()) &&
		slices.Equal(a.Partitions, b.Partitions) && a.Coordinator == b.Coordinator
}

func sameTxn(a, b model.Txn) bool {
	return a.ID == b.ID && a.State == b.State && a.ProducerID == b.ProducerID && sameDescribed(a, b) &&
		a.Described == b.Described && a.Err == b.Err && a.Outcome() == b.Outcome() && a.PrevOutcome() == b.PrevOutcome()
}
