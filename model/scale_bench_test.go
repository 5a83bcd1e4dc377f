package model_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/testutil/uitest"
	"github.com/txnscope/txnscope/model"
)

// The benchmarks of issue 11: what one refresh costs in model at 100k and
// 500k ids of Flink's mix (uitest.Flink).
var scales = []int{100_000, 500_000}

func scaleName(n int) string { return fmt.Sprintf("%dk", n/1000) }

// BenchmarkSnapshotTxn is one refresh's lookups into the previous snapshot:
// every listed id, in the listing's (random) order, with strings of its own.
func BenchmarkSnapshotTxn(b *testing.B) {
	for _, n := range scales {
		b.Run(scaleName(n), func(b *testing.B) {
			s := uitest.Flink(n, uitest.T0)
			ids := make([]string, n)
			for i, t := range s.Txns {
				ids[i] = strings.Clone(t.ID)
			}
			rand.New(rand.NewPCG(1, 2)).Shuffle(n, func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
			s.Txn(ids[0]) // any index is built by the refresh that made s
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				for _, id := range ids {
					if _, ok := s.Txn(id); !ok {
						b.Fatal(id)
					}
				}
			}
		})
	}
}

// BenchmarkSort is Snapshot.Sort as a refresh calls it: first on ids in the
// listing's order (shuffled, and with a prefix longer than a sort key),
// then again on the sorted snapshot.
func BenchmarkSort(b *testing.B) {
	for _, n := range scales {
		s := uitest.Flink(n, uitest.T0)
		shuffled := append([]model.Txn(nil), s.Txns...)
		rand.New(rand.NewPCG(3, 4)).Shuffle(n, func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		long := append([]model.Txn(nil), shuffled...) // ids past a sort key's 28 bytes
		for i := range long {
			long[i].ID = "orders-enricher-sink-with-a-long-name-" + long[i].ID
		}
		for _, from := range []struct {
			name string
			rows []model.Txn
		}{{"shuffled", shuffled}, {"long", long}} {
			b.Run(scaleName(n)+"/"+from.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					b.StopTimer()
					copy(s.Txns, from.rows)
					b.StartTimer()
					s.Sort()
				}
			})
		}
		b.Run(scaleName(n)+"/sorted", func(b *testing.B) {
			s.Sort()
			b.ReportAllocs()
			for b.Loop() {
				s.Sort()
			}
		})
	}
}

func BenchmarkDiffScale(b *testing.B) {
	for _, n := range scales {
		b.Run(scaleName(n), func(b *testing.B) {
			prev := uitest.Flink(n, uitest.T0)
			next := uitest.FlinkNext(prev, uitest.T0.Add(2*time.Second))
			if got := len(model.Diff(prev, next)); got != n/100 {
				b.Fatalf("%d events, want %d", got, n/100)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				model.Diff(prev, next)
			}
		})
	}
}

func BenchmarkRowsScale(b *testing.B) {
	for _, n := range scales {
		s := uitest.Flink(n, uitest.T0)
		h := model.NewHistory(1000)
		h.Baseline(s)
		for _, q := range []struct {
			name string
			q    model.Query
		}{{"default", model.Query{}}, {"open", model.Query{Filter: model.FilterOpen}}, {"text", model.Query{Text: "PAYMENTS-DEDUP-SINK-3"}}} {
			b.Run(scaleName(n)+"/"+q.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					model.Rows(s, h, q.q, uitest.T0)
				}
			})
		}
	}
}
