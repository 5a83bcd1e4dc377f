package model

import (
	"fmt"
	"strings"
	"testing"
)

// txnPartSnap: "a" (producer 1) lists orders-1 and orders-0 (in that order)
// and audit-9, which no partition read covers; producer 1 also has an open
// transaction on billing-2 that "a" does not list (hanging), and an
// idempotent row on billing-3 (nothing open: not a candidate). On orders-0
// producer 7, which no id owns, sits before "a" at the LSO.
func txnPartSnap() (*Snapshot, Txn) {
	a := Txn{ID: "a", State: Ongoing, ProducerID: 1, Partitions: []TopicPartition{{"orders", 1}, {"orders", 0}, {"audit", 9}}}
	b := Txn{ID: "b", State: Ongoing, ProducerID: 2, Partitions: []TopicPartition{{"orders", 1}}}
	s := snap(t0, a, b)
	s.Partitions = []Partition{
		{TopicPartition: TopicPartition{"billing", 2}, HighWatermark: 90, LastStableOffset: 50,
			Producers: []Producer{{ProducerID: 1, CurrentTxnStartOffset: 50}}},
		{TopicPartition: TopicPartition{"billing", 3}, HighWatermark: 90, LastStableOffset: 90,
			Producers: []Producer{{ProducerID: 1, CurrentTxnStartOffset: -1}}},
		{TopicPartition: TopicPartition{"orders", 0}, HighWatermark: 100, LastStableOffset: 10,
			Producers: []Producer{{ProducerID: 7, CurrentTxnStartOffset: 10}, {ProducerID: 1, CurrentTxnStartOffset: 12}}},
		{TopicPartition: TopicPartition{"orders", 1}, HighWatermark: 100, LastStableOffset: 20,
			Producers: []Producer{{ProducerID: 1, CurrentTxnStartOffset: 20}, {ProducerID: 2, CurrentTxnStartOffset: 30}}},
	}
	s.Sort()
	return s, a
}

func TestTxnPartitions(t *testing.T) {
	s, a := txnPartSnap()
	parts := TxnPartitions(a, s, ByProducerID(s))
	var got []string
	for _, p := range parts {
		pinner := "-"
		if p.HasPinner {
			pinner = fmt.Sprint(p.Pinner.ProducerID)
			if p.PinnerID != "" {
				pinner += "(" + p.PinnerID + ")"
			}
		}
		var orphans []string
		for _, o := range p.Orphans {
			orphans = append(orphans, fmt.Sprint(o.ProducerID))
		}
		got = append(got, fmt.Sprintf("%s-%d known=%v listed=%v own=%v pinsLSO=%v pinner=%s orphans=[%s]",
			p.Topic, p.Partition, p.Known, p.Listed, p.HasOwn, p.PinsLSO, pinner, strings.Join(orphans, " ")))
	}
	want := []string{
		// Listed ones first, in partition order; audit-9 was never read.
		"audit-9 known=false listed=true own=false pinsLSO=false pinner=- orphans=[]",
		// Producer 7, owned by no id, holds the LSO: a hanging candidate.
		"orders-0 known=true listed=true own=true pinsLSO=false pinner=7 orphans=[7]",
		"orders-1 known=true listed=true own=true pinsLSO=true pinner=1(a) orphans=[]",
		// Not listed, yet producer 1 is open there: the hanging scan finds it.
		"billing-2 known=true listed=false own=true pinsLSO=true pinner=1(a) orphans=[1]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("TxnPartitions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if o := parts[2].Owners; o[1] != "a" || o[2] != "b" || len(o) != 2 {
		t.Errorf("orders-1 owners %v, want 1→a 2→b", o)
	}
}

func TestTxnPartitionAbortTarget(t *testing.T) {
	pin := Producer{ProducerID: 3}
	orphans := []Producer{{ProducerID: 1}, {ProducerID: 2}, {ProducerID: 3}}
	for _, tc := range []struct {
		name   string
		p      TxnPartition
		pid    int64
		want   int64
		wantOK bool
	}{
		{"the transaction's own producer first", TxnPartition{Orphans: orphans, Pinner: pin, HasPinner: true}, 2, 2, true},
		{"else the one pinning the LSO", TxnPartition{Orphans: orphans, Pinner: pin, HasPinner: true}, 9, 3, true},
		{"else the first", TxnPartition{Orphans: orphans}, 9, 1, true},
		{"a pinner that is not an orphan is no target", TxnPartition{Orphans: orphans[:2], Pinner: pin, HasPinner: true}, 9, 1, true},
		{"no orphans, no abort", TxnPartition{Pinner: pin, HasPinner: true}, 3, 0, false},
	} {
		got, ok := tc.p.AbortTarget(tc.pid)
		if ok != tc.wantOK || got.ProducerID != tc.want {
			t.Errorf("%s: AbortTarget(%d) = %d, %v; want %d, %v", tc.name, tc.pid, got.ProducerID, ok, tc.want, tc.wantOK)
		}
		if tc.p.Abortable() != tc.wantOK {
			t.Errorf("%s: Abortable() = %v", tc.name, !tc.wantOK)
		}
	}
}

func TestTxnPartitionMaybeHidden(t *testing.T) {
	orphans := []Producer{{ProducerID: 1}, {ProducerID: 2}}
	for _, tc := range []struct {
		name              string
		p                 TxnPartition
		maybe1, maybeOnly bool
	}{
		{"nothing hidden", TxnPartition{Orphans: orphans, Owners: map[int64]string{}}, false, false},
		{"hidden ids, no visible owner", TxnPartition{Part: hidden(Partition{}), Orphans: orphans, Owners: map[int64]string{}}, true, true},
		{"hidden ids, one owner visible", TxnPartition{Part: hidden(Partition{}), Orphans: orphans, Owners: map[int64]string{2: "b"}}, true, false},
		{"hidden ids, no orphans", TxnPartition{Part: hidden(Partition{}), Owners: map[int64]string{}}, true, false},
	} {
		if got := tc.p.MaybeHidden(1); got != tc.maybe1 {
			t.Errorf("%s: MaybeHidden(1) = %v", tc.name, got)
		}
		if got := tc.p.MaybeOnly(); got != tc.maybeOnly {
			t.Errorf("%s: MaybeOnly() = %v", tc.name, got)
		}
	}
}

func TestPinnedPartition(t *testing.T) {
	s, _ := txnPartSnap()
	p, _ := s.Partition(TopicPartition{"orders", 0})
	pin := Pin{Partition: p}
	pin.Pinner, pin.HasPinner = p.Pinner()
	got := PinnedPartition(pin, ByProducerID(s))
	if !got.Known || got.HasOwn || !got.HasPinner || got.Pinner.ProducerID != 7 {
		t.Fatalf("PinnedPartition = %+v, want known, pinned by 7, no own producer", got)
	}
	if tgt, ok := got.AbortTarget(got.Pinner.ProducerID); !ok || tgt.ProducerID != 7 || got.Owners[1] != "a" {
		t.Errorf("target %d %v, owners %v; want producer 7, 1→a", tgt.ProducerID, ok, got.Owners)
	}
	// Before the first refresh nothing is known to be orphaned.
	if before := PinnedPartition(pin, nil); before.Abortable() || before.Owners == nil {
		t.Errorf("without producer index: %+v, want no orphans and an empty owner map", before)
	}
}
