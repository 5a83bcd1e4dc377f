package demo

import (
	"context"
)

// startWorkloads starts the five scenarios txnscope is meant to explain, the
// reporting service beside the backfill, and the consumer groups waiting on
// them.
func (d *Demo) startWorkloads(ctx context.Context) {
	o := d.opts
	interval := o.CheckpointInterval
	// Flink's rule of thumb: transaction.timeout.ms well above the
	// checkpoint interval, so healthy jobs sit far from their gauge's end.
	healthy := 30 * interval

	// A healthy job, committing every checkpoint.
	d.startJob(ctx, job{
		name:     "orders-enricher-v1",
		prefix:   "orders-enricher-v1",
		topic:    "orders-enriched",
		subtasks: []int{0, 1, 2, 3},
		timeout:  healthy,
		shared:   []int{0},
		fenced:   &d.stats.fenced,
	})
	// Someone started a second copy of the job without changing its
	// transactionalIdPrefix: its subtask 0 and the first job's subtask 0
	// keep taking the same ids from each other.
	d.startJob(ctx, job{
		name:     "orders-enricher-v1 (duplicate)",
		prefix:   "orders-enricher-v1",
		topic:    "orders-enriched",
		subtasks: []int{0},
		timeout:  healthy,
		shared:   []int{0},
		fenced:   &d.stats.fencedDup,
	})
	// A job whose every third checkpoint fails.
	d.startJob(ctx, job{
		name:       "payments-dedup-v3",
		prefix:     "payments-dedup-v3",
		topic:      "payments",
		subtasks:   []int{0, 1},
		timeout:    healthy,
		abortEvery: 3,
	})
	// A job that crashes a few checkpoints after each start, leaving
	// transactions the coordinator aborts at their timeout.
	d.startJob(ctx, job{
		name:         "inventory-sync-v7",
		prefix:       "inventory-sync-v7",
		topic:        "inventory",
		subtasks:     []int{0, 1},
		timeout:      o.CrashTimeout,
		crashAfter:   3,
		restartAfter: o.CrashTimeout * 3 / 2,
	})
	reports := make(chan struct{})
	d.goRun(ctx, func(ctx context.Context) { d.runReports(ctx, reports) })
	d.goRun(ctx, func(ctx context.Context) { d.runBackfill(ctx, reports) })
	d.startConsumers(ctx)
	d.goRun(ctx, d.trimLogs)
}
