package kafkaadmin_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/model"
)

// BenchmarkRefreshPartitions measures a steady-state refresh on kfake (3
// brokers, over TCP) with n partitions, four of them pinned by open
// transactions and 20 consumer groups with commits on them; listoffsets/op
// is how many ListOffsets requests one refresh sends.
func BenchmarkRefreshPartitions(b *testing.B) {
	for _, n := range []int{100, 1000, 5000} {
		b.Run(fmt.Sprintf("partitions=%d", n), func(b *testing.B) {
			c, boot := kafkatest.NewCluster(b)
			adm := admClient(b, boot)
			topics := n / 100
			for i := range topics {
				createTopic(b, adm, fmt.Sprintf("t%02d", i), 100)
			}
			for i := range 4 {
				kafkatest.OpenTxn(b, boot, fmt.Sprintf("bench-open-%d-1", i), "t00", 10*time.Minute)
			}
			for g := range 20 {
				commitGroup(b, adm, fmt.Sprintf("group-%02d", g), "t00", 0, int64(g))
			}
			reqs := countKinds(c, kmsg.ListOffsets)
			a := newAdmin(b, boot)
			ctx := context.Background()
			prev, err := a.Refresh(ctx, nil)
			if err != nil {
				b.Fatal(err)
			}
			if prev.Scanned != n || len(prev.Partitions) != 1 || len(prev.GroupCommits) != 20 {
				b.Fatalf("scanned %d, %d partitions kept, %d group commits; want %d, 1, 20",
					prev.Scanned, len(prev.Partitions), len(prev.GroupCommits), n)
			}
			reqs.take(kmsg.ListOffsets)
			for b.Loop() {
				var s *model.Snapshot
				s, err = a.Refresh(ctx, prev)
				if err != nil {
					b.Fatal(err)
				}
				prev = s
			}
			b.ReportMetric(float64(reqs.take(kmsg.ListOffsets))/float64(b.N), "listoffsets/op")
		})
	}
}
