package cli

import (
	"fmt"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/txnscope/txnscope/model"
)

// BenchmarkSnapshotMemoryPerID is the heap a default snapshot needs per id
// (issue 37), in process: the coordinators' log of n Flink ids replayed as
// RefreshReplayed does (four records an id, every one within the hour, as
// benchtxns leaves them; 1 % left open), its rows taken from the replay,
// the history given its events, and the JSON written to io.Discard.
// peak-B/id is the most the heap held above where it started, divided by
// the ids; held-B/id what the rows and the history hold once printed.
//
//	go test -run '^$' -bench BenchmarkSnapshotMemoryPerID -benchtime 1x -count 3 ./internal/cli/
func BenchmarkSnapshotMemoryPerID(b *testing.B) {
	for _, n := range []int{100_000, 500_000, 2_000_000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			var peak, held uint64
			for b.Loop() {
				runtime.GC()
				base := liveBytes()
				stop := heapPeak()
				s, h := replayedSnapshot(n)
				if err := writeSnapshot(io.Discard, "json", s, h, model.Query{}, benchAt, nil); err != nil {
					b.Fatal(err)
				}
				peak = max(peak, stop())
				runtime.GC()
				held = max(held, liveBytes()-base)
				runtime.KeepAlive(s)
				runtime.KeepAlive(h)
			}
			b.ReportMetric(float64(peak)/float64(n), "peak-B/id")
			b.ReportMetric(float64(held)/float64(n), "held-B/id")
		})
	}
}

// replayedSnapshot is what RefreshReplayed and readSnapshot make of a log
// of n ids, the records made one at a time as a fetch hands them over.
func replayedSnapshot(n int) (*model.Snapshot, *model.History) {
	sinks := []string{"orders-enricher-v1", "payments-dedup-v3", "inventory-sync-v7", "clickstream-sessionizer-v2"}
	start := benchAt.Add(-50 * time.Minute)
	r := model.NewReplay(benchAt.Add(-time.Hour), replayLimit)
	offsets := make([]int64, 50)
	for i := range n {
		id := fmt.Sprintf("%s-%d-%d", sinks[i%len(sinks)], (i/len(sinks))%50, i/(50*len(sinks))+1)
		p := int32(i % 50)
		at := start.Add(time.Duration(i) * time.Millisecond).UnixMilli()
		states := []model.State{model.Empty, model.Ongoing, model.PrepareCommit, model.CompleteCommit}
		if i%100 == 0 {
			states = states[:2]
		}
		for k, st := range states {
			rec := model.TxnLogRecord{ID: id, ProducerID: int64(1000 + i), ProducerEpoch: int16(k / 3), TimeoutMs: 900000,
				State: st, StartMs: -1, LastUpdateMs: at + int64(k), PrevProducerID: -1, NextProducerID: -1,
				NextProducerEpoch: -1, ClientTxnVersion: 2, Partition: p, Offset: offsets[p]}
			if st != model.Empty {
				rec.StartMs = at
				rec.Partitions = []model.TopicPartition{{Topic: "orders", Partition: int32(i % 48)}}
			}
			offsets[p]++
			r.Add(rec)
		}
	}
	res := r.Result()
	s, _ := r.Snapshot(func(p int32) int32 { return p % 3 })
	s.TakenAt, s.Bootstrap = benchAt, "127.0.0.1:9092"
	s.Source = model.Source{Log: true, Since: res.Oldest, Window: benchAt.Add(-time.Hour)}
	h := model.NewHistory(1)
	h.Add(res.Events)
	return s, h
}

func liveBytes() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
