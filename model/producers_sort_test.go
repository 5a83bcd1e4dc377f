package model

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// ProducerOrder orders ids as a stable comparison sort does, whatever they
// are: random 63-bit ones (kfake), ones from a block (Kafka hands them out
// so), negative ones, repeats, sorted and reversed.
func TestProducerOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	gens := map[string]func(i, n int) int64{
		"random":    func(int, int) int64 { return r.Int64() },
		"block":     func(int, int) int64 { return 1_000_000 + r.Int64N(50_000) },
		"signed":    func(int, int) int64 { return r.Int64() - r.Int64N(2)*math.MaxInt64 },
		"repeats":   func(int, int) int64 { return r.Int64N(5) - 2 },
		"sorted":    func(i, _ int) int64 { return int64(i) * 3 },
		"reversed":  func(i, n int) int64 { return int64(n-i) << 20 },
		"high bits": func(int, int) int64 { return r.Int64N(4) << 60 },
		"extremes":  func(i, _ int) int64 { return []int64{math.MaxInt64, -1, math.MinInt64, 0}[i%4] },
		"one digit": func(int, int) int64 { return 7 << 16 },
	}
	for name, gen := range gens {
		for _, n := range []int{0, 1, 2, radixFrom - 1, radixFrom, 1000, 41_000} {
			ids := make([]int64, n)
			for i := range ids {
				ids[i] = gen(i, n)
			}
			want := make([]int32, n)
			for i := range want {
				want[i] = int32(i)
			}
			slices.SortStableFunc(want, func(a, b int32) int { return cmp.Compare(ids[a], ids[b]) })
			if got := ProducerOrder(ids); !slices.Equal(got, want) {
				t.Fatalf("%s, %d ids: not the stable order", name, n)
			}
		}
	}
}

// Building 41,000 rows in order (a pinned partition after 500,000 Flink
// ids), against building them, then sorting them as before.
func BenchmarkProducerRows(b *testing.B) {
	r := rand.New(rand.NewPCG(23, 24))
	ids := make([]int64, 41_000)
	for i := range ids {
		ids[i] = r.Int64N(1 << 40)
	}
	b.Run("radix order", func(b *testing.B) {
		for b.Loop() {
			rows := make([]Producer, len(ids))
			for k, i := range ProducerOrder(ids) {
				rows[k] = Producer{ProducerID: ids[i]}
			}
		}
	})
	b.Run("comparison sort", func(b *testing.B) {
		for b.Loop() {
			rows := make([]Producer, len(ids))
			for i, id := range ids {
				rows[i] = Producer{ProducerID: id}
			}
			slices.SortFunc(rows, func(a, b Producer) int { return cmp.Compare(a.ProducerID, b.ProducerID) })
		}
	})
}
