package kafkaadmin_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/model"
)

// BenchmarkRefresh measures a steady-state refresh (with the previous
// snapshot) on kfake with n idle transactional ids and a few open
// transactions; cold-ms is the first refresh, which describes every id.
func BenchmarkRefresh(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("ids=%d", n), func(b *testing.B) {
			_, boot := kafkatest.NewCluster(b)
			ids := make([]string, n)
			for i := range ids {
				ids[i] = fmt.Sprintf("bench-job-%d-%d", i%50, i)
			}
			kafkatest.InitIDs(b, boot, time.Minute, ids...)
			for i := range 4 {
				kafkatest.OpenTxn(b, boot, fmt.Sprintf("bench-open-%d-1", i), "orders", 10*time.Minute)
			}
			a := newAdmin(b, boot)
			ctx := context.Background()

			start := time.Now()
			prev, err := a.Refresh(ctx, nil)
			if err != nil {
				b.Fatal(err)
			}
			cold := time.Since(start)
			if len(prev.Txns) != n+4 {
				b.Fatalf("%d ids, want %d", len(prev.Txns), n+4)
			}

			for b.Loop() {
				var s *model.Snapshot
				s, err = a.Refresh(ctx, prev)
				if err != nil {
					b.Fatal(err)
				}
				prev = s
			}
			b.ReportMetric(float64(cold.Microseconds())/1000, "cold-ms")
		})
	}
}

// BenchmarkFirstSnapshot compares the TUI's first poll (every id listed,
// none described) with a first Refresh (every id described) on the same
// kfake cluster: first-poll-ms is when the first frame can have rows.
func BenchmarkFirstSnapshot(b *testing.B) {
	const n = 10000 // kfake spends O(ids) per request: keep it at 10k
	_, boot := kafkatest.NewCluster(b)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("bench-job-%d-%d", i%50, i)
	}
	kafkatest.InitIDs(b, boot, time.Minute, ids...)
	a := newAdmin(b, boot)
	ctx := context.Background()
	var poll, full time.Duration
	for b.Loop() {
		start := time.Now()
		s, err := a.Poll(ctx, nil)
		if err != nil || model.PendingCount(s) != n {
			b.Fatalf("Poll: %v", err)
		}
		poll += time.Since(start)
		start = time.Now()
		if _, err := a.Refresh(ctx, nil); err != nil {
			b.Fatal(err)
		}
		full += time.Since(start)
	}
	b.ReportMetric(float64(poll.Microseconds())/float64(b.N)/1000, "first-poll-ms")
	b.ReportMetric(float64(full.Microseconds())/float64(b.N)/1000, "first-refresh-ms")
}
