package demo

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// newProducer makes a transactional client for one transactional id. kgo
// cannot switch ids on a live client, so each Flink-style id gets its own.
// Closing it never ends the open transaction, which is what lets a "crash"
// leave one behind.
func (d *Demo) newProducer(id string, timeout time.Duration) (*kgo.Client, error) {
	return kgo.NewClient(
		kgo.SeedBrokers(d.bootstrap...),
		kgo.TransactionalID(id),
		kgo.TransactionTimeout(timeout),
		kgo.DisableClientMetrics(),
		// A short-lived client should fail fast rather than retry for
		// minutes against a cluster that is shutting down.
		kgo.RetryTimeout(10*time.Second),
		kgo.RecordDeliveryTimeout(10*time.Second),
	)
}

func produce(ctx context.Context, cl *kgo.Client, topic, key, value string) error {
	r := &kgo.Record{Topic: topic, Key: []byte(key), Value: []byte(value)}
	return cl.ProduceSync(ctx, r).FirstErr()
}

// fenced reports whether err means another producer took over our
// transactional id (or the coordinator aborted us and bumped the epoch). kfake
// answers a stale producer's produce with INVALID_TXN_STATE once its
// partitions were dropped from the aborted transaction, where Kafka would say
// INVALID_PRODUCER_EPOCH.
func fenced(err error) bool {
	return errors.Is(err, kerr.ProducerFenced) ||
		errors.Is(err, kerr.InvalidProducerEpoch) ||
		errors.Is(err, kerr.InvalidTxnState) ||
		errors.Is(err, kerr.InvalidProducerIDMapping)
}
