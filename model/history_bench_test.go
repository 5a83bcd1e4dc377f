package model_test

import (
	"runtime"
	"testing"

	"github.com/txnscope/txnscope/internal/testutil/uitest"
	"github.com/txnscope/txnscope/model"
)

// BenchmarkHistoryMemoryPerID reports the heap a History holds per id
// (B/id) after the Baseline of Flink's mix, measured after a GC. The
// snapshot is alive before and after: only what History adds counts.
func BenchmarkHistoryMemoryPerID(b *testing.B) {
	for _, n := range scales {
		b.Run(scaleName(n), func(b *testing.B) {
			s := uitest.Flink(n, uitest.T0)
			before := liveHeap()
			h := model.NewHistory(1)
			h.Baseline(s)
			after := liveHeap()
			runtime.KeepAlive(h)
			runtime.KeepAlive(s)
			for b.Loop() {
			}
			b.ReportMetric(float64(after-before)/float64(n), "B/id")
		})
	}
}

// BenchmarkHistoryBaseline is the work the first refresh does for History.
func BenchmarkHistoryBaseline(b *testing.B) {
	for _, n := range scales {
		b.Run(scaleName(n), func(b *testing.B) {
			s := uitest.Flink(n, uitest.T0)
			b.ReportAllocs()
			for b.Loop() {
				model.NewHistory(1).Baseline(s)
			}
		})
	}
}

// BenchmarkHistoryStats is what `snapshot` asks of History: the stats of
// every id of the snapshot its baseline came from, in id order.
func BenchmarkHistoryStats(b *testing.B) {
	for _, n := range scales {
		b.Run(scaleName(n), func(b *testing.B) {
			s := uitest.Flink(n, uitest.T0)
			h := model.NewHistory(1)
			h.Baseline(s)
			b.ReportAllocs()
			for b.Loop() {
				for i := range s.Txns {
					h.Stats(s.Txns[i].ID)
				}
			}
		})
	}
}

func liveHeap() int64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
