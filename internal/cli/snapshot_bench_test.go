package cli

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/txnscope/txnscope/model"
)

var benchAt = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// flinkScale is n ids as a week of Flink checkpoints leaves them (issue 11):
// 50 subtasks of four sinks, one id per checkpoint, 99 % CompleteCommit and
// 1 % Ongoing on 48 partitions, each with its producers. Deterministic.
func flinkScale(n int) (*model.Snapshot, *model.History) {
	sinks := []string{"orders-enricher-v1", "payments-dedup-v3", "inventory-sync-v7", "clickstream-sessionizer-v2"}
	s := &model.Snapshot{TakenAt: benchAt, Bootstrap: "127.0.0.1:9092", BrokerMaxTimeoutMs: 900000, Txns: make([]model.Txn, n)}
	parts := make(map[model.TopicPartition]*model.Partition)
	for i := range s.Txns {
		t := model.Txn{
			ID:    fmt.Sprintf("%s-%d-%d", sinks[i%len(sinks)], (i/len(sinks))%50, i/(50*len(sinks))+1),
			State: model.CompleteCommit, ProducerID: int64(1000 + i), ProducerEpoch: int16(i % 7),
			Coordinator: int32(i % 3), TimeoutMs: 60000, Described: true,
		}
		if i%100 == 0 {
			t.State = model.Ongoing
			t.SetStart(benchAt.Add(-time.Duration(i%90) * time.Second))
			tp := model.TopicPartition{Topic: "orders", Partition: int32(i % 48)}
			t.Partitions = []model.TopicPartition{tp}
			p := parts[tp]
			if p == nil {
				p = &model.Partition{TopicPartition: tp, Leader: int32(i % 3), HighWatermark: int64(i), LastStableOffset: int64(i / 2)}
				parts[tp] = p
			}
			p.Producers = append(p.Producers, model.Producer{ProducerID: t.ProducerID, ProducerEpoch: t.ProducerEpoch,
				LastSequence: int32(i % 1000), LastWriteMs: model.WriteMs(t.StartTime()), CurrentTxnStartOffset: int64(i / 2)})
		}
		s.Txns[i] = t
	}
	for _, p := range parts {
		s.Partitions = append(s.Partitions, *p)
	}
	// The map's order is random; the document's must not be.
	slices.SortFunc(s.Partitions, func(a, b model.Partition) int { return cmp.Compare(a.Partition, b.Partition) })
	s.Sort()
	h := model.NewHistory(1)
	h.Baseline(s)
	return s, h
}

var (
	scaleMu    sync.Mutex
	scaleCache = map[int]struct {
		s *model.Snapshot
		h *model.History
	}{}
)

func cachedScale(n int) (*model.Snapshot, *model.History) {
	scaleMu.Lock()
	defer scaleMu.Unlock()
	c, ok := scaleCache[n]
	if !ok {
		c.s, c.h = flinkScale(n)
		scaleCache[n] = c
	}
	return c.s, c.h
}

// heapPeak samples the live heap (objects, garbage not yet swept included:
// what the process holds) every millisecond until stop is called, which
// returns the highest sample above the level at the start.
func heapPeak() (stop func() uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	base := read()
	done, out := make(chan struct{}), make(chan uint64)
	go func() {
		peak := base
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				out <- max(peak, read()) - base
				return
			case <-tick.C:
				peak = max(peak, read())
			}
		}
	}()
	return func() uint64 { close(done); return <-out }
}

// BenchmarkSnapshotOutput prints a snapshot as the snapshot command does, to
// io.Discard and to a file. peak-heap-MB is the most the heap grew during one
// print; cpu-ms/op the process's CPU per print (GC included); out-MB the size
// of the document.
func BenchmarkSnapshotOutput(b *testing.B) {
	for _, n := range []int{100_000, 500_000} {
		for _, output := range []string{"table", "json"} {
			for _, sink := range []string{"discard", "file"} {
				b.Run(fmt.Sprintf("%s/%dk/%s", output, n/1000, sink), func(b *testing.B) {
					s, h := cachedScale(n)
					var w io.Writer = io.Discard
					var f *os.File
					if sink == "file" {
						var err error
						if f, err = os.Create(filepath.Join(b.TempDir(), "out")); err != nil {
							b.Fatal(err)
						}
						defer f.Close()
						w = f
					}
					var peak uint64
					var cpu time.Duration
					b.ReportAllocs()
					b.ResetTimer()
					for range b.N {
						b.StopTimer()
						if f != nil {
							if err := f.Truncate(0); err != nil {
								b.Fatal(err)
							}
							if _, err := f.Seek(0, io.SeekStart); err != nil {
								b.Fatal(err)
							}
						}
						runtime.GC()
						stop := heapPeak()
						c0 := cpuTime()
						b.StartTimer()
						if err := writeSnapshot(w, output, s, h, model.Query{}, benchAt, nil); err != nil {
							b.Fatal(err)
						}
						b.StopTimer()
						cpu += cpuTime() - c0
						peak = max(peak, stop())
						b.StartTimer()
					}
					b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
					b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
					if f != nil {
						if fi, err := f.Stat(); err == nil {
							b.ReportMetric(float64(fi.Size())/(1<<20), "out-MB")
						}
					}
				})
			}
		}
	}
}
