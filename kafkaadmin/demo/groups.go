package demo

import (
	"context"

	"github.com/twmb/franz-go/pkg/kgo"
)

// consumer is a downstream service reading a topic with
// isolation.level=read_committed in a consumer group: what txnscope's groups
// view is about. It commits what it was given, so its committed offset stops
// at the LSO of a partition an open transaction pins.
type consumer struct {
	group string
	topic string
}

func consumers() []consumer {
	return []consumer{
		// Waits behind reports-backfill-0-1 for as long as it stays open.
		{"reports-loader", "reports"},
		// Keeps up: orders-enricher-v1 commits every checkpoint.
		{"orders-indexer", "orders-enriched"},
		// Waits behind inventory-sync-v7's crashed transactions until the
		// coordinator aborts them, then moves on once the job is back.
		{"inventory-projector", "inventory"},
	}
}

func (d *Demo) startConsumers(ctx context.Context) {
	for _, c := range consumers() {
		d.goRun(ctx, func(ctx context.Context) { d.runConsumer(ctx, c) })
	}
}

// runConsumer polls until ctx ends. Records are dropped: only the committed
// offsets matter to txnscope.
func (d *Demo) runConsumer(ctx context.Context, c consumer) {
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(d.bootstrap...),
		kgo.ConsumerGroup(c.group),
		kgo.ConsumeTopics(c.topic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		// Committing about once a checkpoint keeps the committed offset
		// (what txnscope reads) close to what the group has read.
		kgo.AutoCommitInterval(d.opts.CheckpointInterval),
		kgo.DisableClientMetrics(),
	)
	if err != nil {
		d.stats.errors.Add(1)
		d.log.Printf("%s: %v", c.group, err)
		return
	}
	// Close leaves the group after committing what was polled.
	defer cl.Close()
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return
		}
		fs.EachError(func(topic string, p int32, err error) {
			d.stats.errors.Add(1)
			d.log.Printf("%s: fetching %s/%d: %v", c.group, topic, p, err)
		})
		d.stats.consumed.Add(int64(fs.NumRecords()))
	}
}
