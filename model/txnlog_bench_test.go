package model

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

// What following the log costs in process at Flink's sizes: the start-up
// read of every id's four records, and a steady refresh (1 % of the ids
// change, one in ten of them new) made into a snapshot.
//
//	go test -run '^$' -bench 'BenchmarkTxnLog' -benchmem -count 6 ./model/
//
// BenchmarkTxnLogStartUp's peak-B/id is the most the heap held above where it
// started during the read, per id, sampled every millisecond (garbage not yet
// collected included, as the process's memory sees it); "expected" is the
// TUI's read, told the listing's count (Expect).
func BenchmarkTxnLogStartUp(b *testing.B) {
	for _, n := range []int{100_000, 500_000} {
		for _, expect := range []bool{false, true} {
			name := fmt.Sprint(n)
			if expect {
				name += "/expected"
			}
			b.Run(name, func(b *testing.B) {
				recs := flinkLog(n, 0)
				b.ReportAllocs()
				var peak uint64
				for b.Loop() {
					runtime.GC()
					stop := heapPeak()
					l := NewTxnLog()
					if expect {
						l.Expect(n)
					}
					for _, r := range recs {
						l.Apply(r, false, benchNow)
					}
					l.Snapshot(func(p int32) int32 { return p % 3 })
					peak = max(peak, stop())
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/id")
				b.ReportMetric(float64(peak)/float64(n), "peak-B/id")
			})
		}
	}
}

// heapPeak samples the heap's objects every millisecond until stop, which
// returns the most they grew.
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

func BenchmarkTxnLogRefresh(b *testing.B) {
	for _, n := range []int{100_000, 500_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			l := NewTxnLog()
			for _, r := range flinkLog(n, 0) {
				l.Apply(r, false, benchNow)
			}
			l.Snapshot(func(p int32) int32 { return p % 3 })
			round := 0
			b.ReportAllocs()
			for b.Loop() {
				round++
				for i := range n / 100 {
					r := rec(CompleteCommit, 1, 100, 101)
					if i%10 == 0 {
						r.ID = fmt.Sprintf("new-%d-%d", round, i) // a new checkpoint's id
					} else {
						r.ID = fmt.Sprintf("flink-%07d", (round*7919+i*104729)%n)
					}
					r.Partition = int32(i % 50)
					l.Apply(r, true, benchNow)
				}
				l.Take(benchNow)
				l.Snapshot(func(p int32) int32 { return p % 3 })
			}
		})
	}
}

var benchNow = time.Unix(1000, 0)

// flinkLog is n committed ids' records, as the log holds them uncompacted.
func flinkLog(n int, from int) []TxnLogRecord {
	out := make([]TxnLogRecord, 0, 4*n)
	for i := from; i < from+n; i++ {
		id := fmt.Sprintf("flink-%07d", i)
		for _, st := range []State{Empty, Ongoing, PrepareCommit, CompleteCommit} {
			r := rec(st, 0, 100, 100)
			r.ID, r.Partition = id, int32(i%50)
			if st == Ongoing || st == PrepareCommit {
				r.Partitions = []TopicPartition{{Topic: "orders", Partition: int32(i % 12)}}
			}
			out = append(out, r)
		}
	}
	return out
}

// BenchmarkTxnLogReplay is a snapshot's read of the log (Replay, its rows
// and the newest 100,000 events kept) when every id was written within the
// window, as benchtxns leaves them: four records an id.
func BenchmarkTxnLogReplay(b *testing.B) {
	for _, n := range []int{100_000, 500_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			recs := flinkLog(n, 0)
			next := map[int32]int64{}
			for i := range recs {
				recs[i].LastUpdateMs = benchNow.Add(-time.Duration(len(recs)-i) * time.Millisecond).UnixMilli()
				recs[i].Offset = next[recs[i].Partition]
				next[recs[i].Partition]++
			}
			replay := func(b *testing.B, presume time.Time) {
				b.ReportAllocs()
				for b.Loop() {
					r := NewReplay(benchNow.Add(-time.Hour), 100000)
					r.Presume(presume)
					for _, x := range recs {
						r.Add(x)
					}
					r.Result()
					if !r.Presumed() {
						b.Fatal("the presumed time did not hold")
					}
					r.Snapshot(func(p int32) int32 { return p % 3 })
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(recs)), "ns/record")
			}
			b.Run("all", func(b *testing.B) { replay(b, time.Time{}) })
			// As kafkaadmin presumes: the time after which the log holds
			// eight records for each event kept.
			b.Run("presumed", func(b *testing.B) {
				replay(b, time.UnixMilli(recs[max(len(recs)-8*100000, 0)].LastUpdateMs))
			})
		})
	}
}
