package model

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestStateOpenAbortable(t *testing.T) {
	tests := []struct {
		s               State
		open, abortable bool
	}{
		{Empty, false, false},
		{Ongoing, true, true},
		{PrepareCommit, true, false},
		{PrepareAbort, true, false},
		{CompleteCommit, false, false},
		{CompleteAbort, false, false},
		{Dead, false, false},
		{PrepareEpochFence, true, true},
		{StateOf("Bogus"), false, false},
	}
	for _, tt := range tests {
		if got := tt.s.Open(); got != tt.open {
			t.Errorf("%s.Open() = %v, want %v", tt.s, got, tt.open)
		}
		if got := tt.s.Abortable(); got != tt.abortable {
			t.Errorf("%s.Abortable() = %v, want %v", tt.s, got, tt.abortable)
		}
	}
}

func TestTxnAgeRatioSeverity(t *testing.T) {
	now := t0
	tests := []struct {
		name    string
		txn     Txn
		age     time.Duration
		ageOK   bool
		ratio   float64
		ratioOK bool
		sev     Severity
	}{
		{"fresh ongoing", Txn{State: Ongoing, StartUnixMs: now.Add(-10 * time.Second).UnixMilli(), TimeoutMs: 60000},
			10 * time.Second, true, 10.0 / 60, true, SevOK},
		{"half way warns", Txn{State: Ongoing, StartUnixMs: now.Add(-30 * time.Second).UnixMilli(), TimeoutMs: 60000},
			30 * time.Second, true, 0.5, true, SevWarn},
		{"ninety percent is danger", Txn{State: Ongoing, StartUnixMs: now.Add(-54 * time.Second).UnixMilli(), TimeoutMs: 60000},
			54 * time.Second, true, 0.9, true, SevDanger},
		{"past timeout", Txn{State: Ongoing, StartUnixMs: now.Add(-2 * time.Minute).UnixMilli(), TimeoutMs: 60000},
			2 * time.Minute, true, 2, true, SevDanger},
		{"unknown start", Txn{State: Ongoing, TimeoutMs: 60000}, 0, false, 0, false, SevOK},
		{"zero timeout has age but no ratio", Txn{State: Ongoing, StartUnixMs: now.Add(-time.Hour).UnixMilli()},
			time.Hour, true, 0, false, SevOK},
		{"negative timeout", Txn{State: Ongoing, StartUnixMs: now.Add(-time.Hour).UnixMilli(), TimeoutMs: -1},
			time.Hour, true, 0, false, SevOK},
		{"clock skew: start in the future", Txn{State: Ongoing, StartUnixMs: now.Add(5 * time.Second).UnixMilli(), TimeoutMs: 60000},
			0, true, 0, true, SevOK},
		{"idle id keeps no age", Txn{State: CompleteCommit, StartUnixMs: now.Add(-time.Hour).UnixMilli(), TimeoutMs: 60000},
			0, false, 0, false, SevOK},
		{"empty id keeps no age", Txn{State: Empty, StartUnixMs: now.Add(-time.Hour).UnixMilli(), TimeoutMs: 60000},
			0, false, 0, false, SevOK},
		{"prepare commit is still aging", Txn{State: PrepareCommit, StartUnixMs: now.Add(-50 * time.Second).UnixMilli(), TimeoutMs: 60000},
			50 * time.Second, true, 50.0 / 60, true, SevWarn},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, ok := tt.txn.Age(now)
			if a != tt.age || ok != tt.ageOK {
				t.Errorf("Age = %v,%v want %v,%v", a, ok, tt.age, tt.ageOK)
			}
			r, ok := tt.txn.Ratio(now)
			if ok != tt.ratioOK || (ok && !near(r, tt.ratio)) {
				t.Errorf("Ratio = %v,%v want %v,%v", r, ok, tt.ratio, tt.ratioOK)
			}
			if s := tt.txn.Severity(now); s != tt.sev {
				t.Errorf("Severity = %v want %v", s, tt.sev)
			}
		})
	}
}

func near(a, b float64) bool { d := a - b; return d < 1e-9 && d > -1e-9 }

func TestSeverityOfBoundaries(t *testing.T) {
	tests := []struct {
		r    float64
		want Severity
	}{
		{0, SevOK}, {0.4999, SevOK}, {0.5, SevWarn}, {0.8999, SevWarn},
		{0.9, SevDanger}, {1, SevDanger}, {7, SevDanger}, {-1, SevOK},
	}
	for _, tt := range tests {
		if got := SeverityOf(tt.r); got != tt.want {
			t.Errorf("SeverityOf(%v) = %v want %v", tt.r, got, tt.want)
		}
	}
}

func TestTimeout(t *testing.T) {
	if got := (Txn{TimeoutMs: 900000}).Timeout(); got != 15*time.Minute {
		t.Errorf("Timeout = %v", got)
	}
	if got := (Txn{}).Timeout(); got != 0 {
		t.Errorf("unknown Timeout = %v", got)
	}
}

func TestPartitionHeldBackPinner(t *testing.T) {
	idem := Producer{ProducerID: 1, CurrentTxnStartOffset: -1}
	a := Producer{ProducerID: 10, ProducerEpoch: 2, CurrentTxnStartOffset: 40}
	b := Producer{ProducerID: 11, ProducerEpoch: 0, CurrentTxnStartOffset: 55}
	tests := []struct {
		name   string
		p      Partition
		held   int64
		pinned bool
		pinner int64 // -1: none
	}{
		{"nothing open", Partition{HighWatermark: 100, LastStableOffset: 100, Producers: []Producer{idem}}, 0, false, -1},
		{"one open producer", Partition{HighWatermark: 100, LastStableOffset: 40, Producers: []Producer{a}}, 60, true, 10},
		{"several open, the earliest pins", Partition{HighWatermark: 100, LastStableOffset: 40, Producers: []Producer{idem, b, a}}, 60, true, 10},
		{"none at the LSO (hanging, unlisted)", Partition{HighWatermark: 100, LastStableOffset: 30, Producers: []Producer{a, b}}, 70, true, -1},
		{"idempotent producer never pins", Partition{HighWatermark: 100, LastStableOffset: 40, Producers: []Producer{idem}}, 60, true, -1},
		{"unknown HWM", Partition{HighWatermark: -1, LastStableOffset: 40, Producers: []Producer{a}}, 0, false, -1},
		{"unknown LSO", Partition{HighWatermark: 100, LastStableOffset: -1, Producers: []Producer{a}}, 0, false, -1},
		{"LSO above HWM (racy read)", Partition{HighWatermark: 39, LastStableOffset: 40, Producers: []Producer{a}}, 0, false, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.HeldBack(); got != tt.held {
				t.Errorf("HeldBack = %d want %d", got, tt.held)
			}
			if got := tt.p.Pinned(); got != tt.pinned {
				t.Errorf("Pinned = %v want %v", got, tt.pinned)
			}
			pr, ok := tt.p.Pinner()
			switch {
			case tt.pinner < 0 && ok:
				t.Errorf("Pinner = %d, want none", pr.ProducerID)
			case tt.pinner >= 0 && (!ok || pr.ProducerID != tt.pinner):
				t.Errorf("Pinner = %d,%v want %d", pr.ProducerID, ok, tt.pinner)
			}
		})
	}
}

func TestPartitionProducer(t *testing.T) {
	p := Partition{Producers: []Producer{{ProducerID: 3, ProducerEpoch: 1}, {ProducerID: 4, ProducerEpoch: 9}}}
	if pr, ok := p.Producer(4); !ok || pr.ProducerEpoch != 9 {
		t.Errorf("Producer(4) = %+v,%v", pr, ok)
	}
	if _, ok := p.Producer(5); ok {
		t.Error("Producer(5) found")
	}
}

func TestSnapshotLookups(t *testing.T) {
	s := &Snapshot{
		Txns: []Txn{
			{ID: "c", State: Ongoing, StartUnixMs: t0.Add(-time.Second).UnixMilli()},
			{ID: "a", State: CompleteCommit},
			{ID: "b", State: Ongoing, StartUnixMs: t0.Add(-time.Minute).UnixMilli()},
			{ID: "d", State: Ongoing},
			{ID: "e", State: PrepareCommit, StartUnixMs: t0.Add(-2 * time.Second).UnixMilli()},
		},
		Partitions: []Partition{
			{TopicPartition: TopicPartition{"t2", 0}, Leader: 2},
			{TopicPartition: TopicPartition{"t1", 10}, Leader: 1},
			{TopicPartition: TopicPartition{"t1", 2}, Leader: 3},
		},
	}
	s.Sort()
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		if tx, ok := s.Txn(id); !ok || tx.ID != id {
			t.Errorf("Txn(%q) = %q,%v", id, tx.ID, ok)
		}
	}
	for _, id := range []string{"", "0", "bb", "z"} {
		if _, ok := s.Txn(id); ok {
			t.Errorf("Txn(%q) found", id)
		}
	}
	for tp, leader := range map[TopicPartition]int32{{"t1", 2}: 3, {"t1", 10}: 1, {"t2", 0}: 2} {
		if p, ok := s.Partition(tp); !ok || p.Leader != leader {
			t.Errorf("Partition(%v) = %+v,%v", tp, p, ok)
		}
	}
	for _, tp := range []TopicPartition{{"t1", 3}, {"t0", 0}, {"t3", 0}, {"t2", 1}} {
		if _, ok := s.Partition(tp); ok {
			t.Errorf("Partition(%v) found", tp)
		}
	}
	counts := s.StateCounts()
	if counts[Ongoing] != 3 || counts[CompleteCommit] != 1 || counts[PrepareCommit] != 1 || counts[Empty] != 0 {
		t.Errorf("StateCounts = %v", counts)
	}
	old, ok := s.OldestOpen()
	if !ok || old.ID != "b" {
		t.Errorf("OldestOpen = %q,%v want b", old.ID, ok)
	}
	if _, ok := (&Snapshot{Txns: []Txn{{ID: "x", State: Empty}}}).OldestOpen(); ok {
		t.Error("OldestOpen found one among idle ids")
	}
	tps := []TopicPartition{{"b", 1}, {"a", 10}, {"a", 9}}
	SortPartitions(tps)
	if tps[0] != (TopicPartition{"a", 9}) || tps[1] != (TopicPartition{"a", 10}) || tps[2] != (TopicPartition{"b", 1}) {
		t.Errorf("SortPartitions = %v", tps)
	}
}
