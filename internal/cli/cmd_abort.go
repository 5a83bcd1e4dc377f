package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// abort is kafka-transactions.sh abort: one open transaction on one
// partition, by its start offset or by its producer (action.go runs it).
const cmdAbort command = "abort"

func checkAbort(_ *config, given func(string) bool) error {
	if !given("topic") || !given("partition") {
		return usagef("abort needs --topic and --partition")
	}
	byProducer := given("producer-id") || given("producer-epoch") || given("coordinator-epoch")
	switch {
	case given("start-offset") && byProducer:
		return usagef("give either --start-offset or --producer-id, --producer-epoch and --coordinator-epoch, not both")
	case given("start-offset"):
	case !byProducer:
		return usagef("abort needs --start-offset, or --producer-id, --producer-epoch and --coordinator-epoch")
	case !given("producer-id"):
		return usagef("missing --producer-id")
	case !given("producer-epoch"):
		return usagef("missing --producer-epoch")
	case !given("coordinator-epoch"):
		return usagef("missing --coordinator-epoch")
	}
	return nil
}

func runAbort(ctx context.Context, cl *kafkaadmin.Client, c config, o out, std Stdio) error {
	return runAction(ctx, cl, c, o, std, planAbort)
}

func planAbort(ctx context.Context, cl *kafkaadmin.Client, c config) (model.Action, error) {
	s := kafkaadmin.AbortSpec{TopicPartition: model.TopicPartition{Topic: c.one.topic, Partition: c.one.partition},
		StartOffset: c.one.startOffset, ProducerID: c.one.producerID, ProducerEpoch: c.one.producerEpoch,
		CoordinatorEpoch: c.one.coordinatorEpoch}
	if c.one.hasMaxTxnTimeout {
		s.MinIdle = time.Duration(c.one.maxTxnTimeoutMin) * time.Minute
		s.WaiveIdle = c.one.maxTxnTimeoutMin == 0
	}
	a, err := cl.PlanAbort(ctx, s)
	if errors.Is(err, model.ErrNotIdle) {
		err = fmt.Errorf("%w; to send it regardless, pass --max-transaction-timeout 0", err)
	}
	return a, err
}
