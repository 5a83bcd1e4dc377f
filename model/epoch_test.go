package model

import (
	"strings"
	"testing"
	"time"
)

func TestOutlookOf(t *testing.T) {
	at := func(sec int64) int64 { return t0.Add(time.Duration(sec) * time.Second).UnixMilli() }
	fin := func(pid int64, epoch int16, sec int64) FinishedTxn {
		return FinishedTxn{EndMs: at(sec), ProducerID: pid, ProducerEpoch: epoch, Kind: Committed}
	}
	cur := Txn{ID: "pool-0-0", ProducerID: 4, ProducerEpoch: 30006, Described: true}
	for _, tc := range []struct {
		name    string
		fin     []FinishedTxn
		perHour float64
		rotates time.Duration // after t0; 0: not known
	}{
		{"no transaction seen end: no rate", nil, 0, 0},
		{"one: no rate", []FinishedTxn{fin(4, 30006, 0)}, 0, 0},
		{"a commit every 10 s: 360/h, 2761 left", []FinishedTxn{fin(4, 30001, 0), fin(4, 30002, 10), fin(4, 30003, 20), fin(4, 30006, 50)},
			360, 50*time.Second + 2761*10*time.Second},
		{"the old producer id's ends do not count", []FinishedTxn{fin(3, 32766, 0), fin(4, 30005, 40), fin(4, 30006, 50)}, 360, 50*time.Second + 2761*10*time.Second},
		{"version 1: commits keep the epoch", []FinishedTxn{fin(4, 30006, 0), fin(4, 30006, 10), fin(4, 30006, 20)}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := OutlookOf(cur, tc.fin)
			if o.ID != cur.ID || o.Epoch != 30006 || o.Left() != 2761 {
				t.Fatalf("outlook %+v", o)
			}
			if o.PerHour != tc.perHour {
				t.Errorf("per hour %v, want %v", o.PerHour, tc.perHour)
			}
			switch {
			case tc.rotates == 0 && !o.Rotates.IsZero():
				t.Errorf("rotates at %s, want not known", o.Rotates)
			case tc.rotates != 0 && !o.Rotates.Equal(t0.Add(tc.rotates)):
				t.Errorf("rotates at %s, want %s", o.Rotates, t0.Add(tc.rotates))
			}
			if !o.Warn(t0) {
				t.Errorf("epoch 30006 must warn whatever the rate")
			}
		})
	}
}

func TestEpochWarnAndOrder(t *testing.T) {
	now := t0
	in := func(d time.Duration, epoch int16) EpochOutlook {
		o := EpochOutlook{ID: "x", Epoch: epoch, PerHour: 360}
		if d > 0 {
			o.Rotates = now.Add(d)
		}
		return o
	}
	for _, tc := range []struct {
		o    EpochOutlook
		warn bool
	}{
		{EpochOutlook{}, false},
		{in(0, 100), false},
		{in(0, EpochWarnAt-1), false},
		{in(0, EpochWarnAt), true},
		{in(EpochWarnWithin+time.Minute, 20000), false},
		{in(EpochWarnWithin, 20000), true},
		{in(time.Minute, 32760), true},
		{in(time.Hour, EpochWarnHalf-1), false}, // a job that checkpoints every second: 9 h a round
		{in(time.Hour, EpochWarnHalf), true},
	} {
		if got := tc.o.Warn(now); got != tc.warn {
			t.Errorf("%+v: warn %v, want %v", tc.o, got, tc.warn)
		}
	}
	if !in(time.Hour, 100).Sooner(in(2*time.Hour, 30000)) {
		t.Errorf("with both rates known the earlier rotation comes first")
	}
	if !in(0, 31000).Sooner(in(0, 30000)) || !in(0, 1).Sooner(EpochOutlook{}) || (EpochOutlook{}).Sooner(in(0, 1)) {
		t.Errorf("without rates the higher epoch comes first, and any outlook before none")
	}
}

// TestCommitRefusesRotatedCommittable: a checkpoint's committable whose
// producer id the coordinator rotated away is refused, saying so; another
// producer id far from the end of the epochs is not called a rotation.
func TestCommitRefusesRotatedCommittable(t *testing.T) {
	rotated := &Committable{ID: "pool-0-0", ProducerID: 4, Epoch: 32766, Checkpoint: 9}
	err := committableFits("pool-0-0", 1007, 0, rotated)
	if err == nil || !strings.Contains(err.Error(), "rotated pool-0-0 to producer id 1007") || !strings.Contains(err.Error(), "FLINK-40689") {
		t.Fatalf("rotated committable: %v", err)
	}
	other := &Committable{ID: "pool-0-0", ProducerID: 4, Epoch: 12, Checkpoint: 9}
	err = committableFits("pool-0-0", 1007, 0, other)
	if err == nil || strings.Contains(err.Error(), "rotated") {
		t.Fatalf("another producer id at epoch 12: %v", err)
	}
	if err := committableFits("pool-0-0", 4, 32766, rotated); err != nil {
		t.Fatalf("the very transaction: %v", err)
	}
}

// TestDiffRotation: polls that see an id go from the end of its epochs to a
// new producer id see a commit and a rotation, never a fence or another
// producer: the same producer goes on.
func TestDiffRotation(t *testing.T) {
	p1, p2 := t0, t0.Add(time.Second)
	start, start2 := t0.Add(-time.Second), t0.Add(500*time.Millisecond)
	for _, tc := range []struct {
		name string
		a, b *Snapshot
		want string
	}{
		{"open at 32766, then open at the new id",
			tv2(snap(p1, tx("a", Ongoing, 4, 32766, start))), tv2(snap(p2, withPrev(tx("a", Ongoing, 1007, 0, start2), CompleteCommit))),
			"committed, began, pid rotated(producer id 4→1007: epoch 32766 ran out)"},
		{"committed at the end, then open at the new id",
			tv2(snap(p1, tx("a", CompleteCommit, 4, 32760, time.Time{}))), tv2(snap(p2, tx("a", Ongoing, 1007, 1, start2))),
			"began, pid rotated(producer id 4→1007: epoch 32766 ran out)"},
		{"aborted near the end, then a commit on the new id: no fence",
			tv2(snap(p1, tx("a", CompleteAbort, 4, 32766, time.Time{}))), tv2(snap(p2, tx("a", CompleteCommit, 1007, 0, time.Time{}))),
			"committed(began and ended between polls), pid rotated(producer id 4→1007: epoch 32766 ran out)"},
		{"a new producer id far from the end is still a takeover",
			tv2(snap(p1, tx("a", Ongoing, 4, 12, start))), tv2(snap(p2, tx("a", Ongoing, 1007, 0, start2))),
			"ended(epoch 12→0: the id was initialized again; no COMMIT/ABORT marker read), began"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs := Diff(tc.a, tc.b)
			if got := logKinds(evs); got != tc.want {
				t.Errorf("events %q, want %q", got, tc.want)
			}
			for _, e := range evs {
				if IsTakeover(e) && strings.Contains(tc.want, "rotated") {
					t.Errorf("a rotation taken for a takeover: %+v", e)
				}
			}
		})
	}
}

// TestTxnLogRotation: the coordinators' log of Kafka 4.4 as it was written
// when an id ran out of epochs (the records of a real run, producer ids 7 →
// 8): the end at 32766 is prepared at 32767 with the next producer id and
// completes on it at epoch 0. A commit or an abort, then the rotation;
// never a fence, and the producer's next transaction is its own.
func TestTxnLogRotation(t *testing.T) {
	next := func(r TxnLogRecord) TxnLogRecord { r.NextProducerID = 8; return r }
	on8 := func(r TxnLogRecord) TxnLogRecord { r.PrevProducerID, r.ProducerID = 7, 8; return r }
	for _, tc := range []struct {
		name string
		recs []TxnLogRecord
		want string
	}{
		{"a commit rotates it",
			[]TxnLogRecord{rec(Ongoing, 32766, 100, 100, "x"), next(rec(PrepareCommit, 32767, 100, 101, "x")), on8(rec(CompleteCommit, 0, 100, 101)),
				on8(rec(Ongoing, 0, 102, 102, "x")), on8(rec(PrepareCommit, 1, 102, 103, "x")), on8(rec(CompleteCommit, 1, 102, 103))},
			"began(1 partition), prepare-commit, committed(open 1s), pid rotated(producer id 7→8: epoch 32766 ran out), " +
				"began(1 partition), prepare-commit, committed(open 1s)"},
		{"an empty abort rotates it (transaction version 2)",
			[]TxnLogRecord{rec(PrepareAbort, 32766, 100, 100), rec(CompleteAbort, 32766, 100, 100),
				next(rec(PrepareAbort, 32767, 101, 101)), on8(rec(CompleteAbort, 0, 101, 101)),
				on8(rec(PrepareAbort, 1, 102, 102)), on8(rec(CompleteAbort, 1, 102, 102))},
			"prepare-abort, aborted(open 0s), prepare-abort, pid rotated(producer id 7→8: epoch 32766 ran out), aborted(open 0s), prepare-abort, aborted(open 0s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := applyAll(NewTxnLog(), tc.recs)
			if s := logKinds(got); s != tc.want {
				t.Errorf("events:\n got %s\nwant %s", s, tc.want)
			}
			for _, e := range got {
				if IsTakeover(e) || e.Kind == Fenced || e.Kind == Initialized {
					t.Errorf("a rotation told as another producer: %+v", e)
				}
			}
		})
	}
}
