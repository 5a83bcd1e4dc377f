package demo

import (
	"context"
	"time"
)

// startWorkloads starts the scenarios txnscope is meant to explain, the
// reporting service beside the backfill, and the consumer groups waiting on
// them.
func (d *Demo) startWorkloads(ctx context.Context) {
	o := d.opts
	healthy := healthyTimeout(o)

	// A healthy job, committing every checkpoint.
	d.startJob(ctx, job{
		name:     "clicks-sessionizer-v2",
		prefix:   "clicks-sessionizer-v2",
		topic:    "sessions",
		subtasks: []int{0, 1, 2, 3},
		timeout:  healthy,
	})
	// The first of two jobs sharing a prefix. Someone started a second copy
	// of it without changing its transactionalIdPrefix: its subtask 0 and the
	// first job's subtask 0 keep taking the same ids from each other.
	d.startJob(ctx, job{
		name:     "orders-enricher-v1",
		prefix:   "orders-enricher-v1",
		topic:    "orders-enriched",
		subtasks: []int{0, 1, 2, 3},
		timeout:  healthy,
		shared:   []int{0},
		fenced:   &d.stats.fenced,
	})
	d.startJob(ctx, job{
		name:     "orders-enricher-v1 (duplicate)",
		prefix:   "orders-enricher-v1",
		topic:    "orders-enriched",
		subtasks: []int{0},
		timeout:  healthy,
		shared:   []int{0},
		fenced:   &d.stats.fencedDup,
	})
	// A job with one subtask behind: subtask 2 commits three checkpoints
	// late and fails every third checkpoint.
	d.startJob(ctx, job{
		name:       "payments-dedup-v3",
		prefix:     "payments-dedup-v3",
		topic:      "payments",
		subtasks:   []int{0, 1, 2},
		timeout:    healthy,
		slow:       []int{2},
		commitLag:  3,
		abortEvery: 3,
	})
	// A job that crashes with its transactions open and comes back a few
	// checkpoints later: what the crash left open lingers until the
	// coordinator aborts it at its timeout, and the crash comes again a
	// while after that.
	d.startJob(ctx, job{
		name:     "inventory-sync-v7",
		prefix:   "inventory-sync-v7",
		topic:    "inventory",
		subtasks: []int{0, 1},
		timeout:  o.CrashTimeout,
		crash:    crashPlanFor(o),
	})
	// A Kafka Streams app of two instances, two threads each.
	d.startStreams(ctx)
	reports := make(chan struct{})
	d.goRun(ctx, func(ctx context.Context) { d.runReports(ctx, reports) })
	d.goRun(ctx, func(ctx context.Context) { d.runBackfill(ctx, reports) })
	d.startConsumers(ctx)
	d.goRun(ctx, d.trimLogs)
}

// healthyTimeout is the transaction timeout of the jobs that do not crash.
// Flink's rule of thumb: transaction.timeout.ms well above the checkpoint
// interval, so healthy jobs sit far from their gauge's end.
func healthyTimeout(o Options) time.Duration { return 30 * o.CheckpointInterval }

// crashPlanFor crashes inventory-sync-v7 on checkpoint 3, then every 4/3 of
// its timeout, so that the lingering transactions of one crash are aborted
// a while before the next crash; it restarts 3 checkpoints after each crash,
// well within the timeout, so the restarted job commits while they linger.
func crashPlanFor(o Options) crashPlan {
	return crashPlan{first: 3, every: max(int64(o.CrashTimeout*4/3/o.CheckpointInterval), 1), restart: 3}
}
