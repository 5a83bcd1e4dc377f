package demo

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// runReports publishes one round of reports per period without a
// transaction. ready is closed after the first round, so that the backfill
// opens its transaction behind records reports-loader can commit: a group
// that never read a partition has no committed offset to be stuck at.
func (d *Demo) runReports(ctx context.Context, ready chan<- struct{}) {
	// "daily-revenue" is the backfill's key too, so its partition keeps
	// getting committed records: reports-loader reads up to the backfill's
	// open transaction, and past it once the transaction is gone.
	names := [...]string{"daily-revenue", "daily-orders", "daily-returns"}
	period := 2 * d.opts.CheckpointInterval
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(d.bootstrap...),
		kgo.DisableClientMetrics(),
		kgo.RecordDeliveryTimeout(10*time.Second),
	)
	if err != nil {
		close(ready)
		d.stats.errors.Add(1)
		d.log.Printf("reports: %v", err)
		return
	}
	defer cl.Close()
	for round := 0; ; round++ {
		for _, name := range names {
			value := fmt.Sprintf(`{"report":%q,"round":%d}`, name, round)
			if err := produce(ctx, cl, "reports", name, value); err != nil && ctx.Err() == nil {
				d.stats.errors.Add(1)
				d.log.Printf("reports: publishing %s: %v", name, err)
			}
		}
		if round == 0 {
			close(ready)
		}
		if !sleep(ctx, period) {
			return
		}
	}
}
