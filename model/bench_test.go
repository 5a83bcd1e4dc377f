package model

import (
	"fmt"
	"testing"
	"time"
)

// flinkSnap is n Flink-style ids, one in ten open, the rest idle.
func flinkSnap(n int, at time.Time) *Snapshot {
	s := &Snapshot{TakenAt: at, Txns: make([]Txn, n)}
	for i := range s.Txns {
		t := Txn{ID: fmt.Sprintf("job-%02d-%08d", i%50, i), ProducerID: int64(i), TimeoutMs: 60000, Described: true, State: CompleteCommit}
		if i%10 == 0 {
			t.State = Ongoing
			t.SetStart(at.Add(-time.Duration(i%60) * time.Second))
			t.Partitions = []TopicPartition{{"orders", int32(i % 12)}}
		}
		s.Txns[i] = t
	}
	s.Sort()
	return s
}

func BenchmarkDiff100k(b *testing.B) {
	prev := flinkSnap(100_000, t0)
	next := &Snapshot{TakenAt: t0.Add(2 * time.Second), Txns: append([]Txn(nil), prev.Txns...)}
	// One id in a hundred moved on: open ones committed, idle ones began.
	for i := 0; i < len(next.Txns); i += 100 {
		t := &next.Txns[i]
		if t.State.Open() {
			t.State, t.StartUnixMs = CompleteCommit, 0
		} else {
			t.State, t.StartUnixMs = Ongoing, next.TakenAt.UnixMilli()
		}
	}
	if n := len(Diff(prev, next)); n != 1000 {
		b.Fatalf("%d events, want 1000", n)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		Diff(prev, next)
	}
}

func BenchmarkRows100k(b *testing.B) {
	s := flinkSnap(100_000, t0)
	h := NewHistory(1000)
	for _, q := range []Query{{}, {Sort: SortID}, {Text: "JOB-07"}, {Filter: FilterProblems}} {
		b.Run(fmt.Sprintf("sort=%s/filter=%s/text=%q", q.Sort, q.Filter, q.Text), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Rows(s, h, q, t0)
			}
		})
	}
}
