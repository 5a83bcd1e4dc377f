package kafkaadmin

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/txnscope/txnscope/model"
)

// An abort is planned from what the cluster says now, re-checked while the
// operator decides, and re-checked once more by Execute just before it is
// sent (execute.go); the rules themselves are the model's.

// AbortSpec is what `abort` is given: a partition and either the start offset
// of the transaction to abort or its producer id, epoch and coordinator epoch.
type AbortSpec struct {
	model.TopicPartition
	// StartOffset is -1 when the producer is given instead.
	StartOffset      int64
	ProducerID       int64
	ProducerEpoch    int16
	CoordinatorEpoch int32
	// MinIdle is the idle rule (model.Action.MinIdle); zero takes the
	// brokers' transaction.max.timeout.ms (Kafka's default when it cannot be
	// read). WaiveIdle sets the rule aside: only when the operator says so.
	MinIdle   time.Duration
	WaiveIdle bool
}

// PlanAbort finds the open transaction the spec names on its partition and
// returns the abort Execute will re-check and send. By start offset, the
// producer, its epoch and coordinator epoch come from DescribeProducers, as
// kafka-transactions.sh does; by producer, the producer must have an open
// transaction there at that epoch and coordinator epoch (kafka-transactions.sh
// would send the marker blindly). A producer that wrote more recently than the
// idle rule allows is refused (model.ErrNotIdle).
func (c *Client) PlanAbort(ctx context.Context, s AbortSpec) (model.Action, error) {
	ctx, cancel := c.scope(ctx)
	defer cancel()
	p := s.TopicPartition
	meta, metaErr := c.topicMetadata(ctx, []string{p.Topic})
	if metaErr != "" {
		return model.Action{}, fmt.Errorf("%s-%d: %s", p.Topic, p.Partition, metaErr)
	}
	leader, msg := meta.leaderOf(p)
	if msg != "" || leader < 0 {
		return model.Action{}, fmt.Errorf("%s-%d has no reachable leader: %s", p.Topic, p.Partition, strings.TrimPrefix(msg, "metadata: "))
	}
	rows, err := c.DescribeProducers(ctx, p, -1)
	if err != nil {
		return model.Action{}, fmt.Errorf("could not read the producer state: %w", err)
	}
	pr, err := pickProducer(p, rows, s)
	if err != nil {
		return model.Action{}, err
	}
	minIdle := s.MinIdle
	switch {
	case s.WaiveIdle:
		minIdle = 0
	case minIdle <= 0:
		minIdle = model.DefaultMaxTxnTimeout
		if brokers, err := c.brokerIDs(ctx); err == nil {
			if ms, err := c.maxTxnTimeout(ctx, brokers); err == nil && ms > 0 {
				minIdle = time.Duration(ms) * time.Millisecond
			}
		}
	}
	part := model.Partition{TopicPartition: p, Leader: leader, Producers: rows}
	return model.PlanAbortPartition(part, pr, minIdle, time.Now())
}

// pickProducer is the row of DescribeProducers the spec names.
func pickProducer(p model.TopicPartition, rows []model.Producer, s AbortSpec) (model.Producer, error) {
	if s.StartOffset >= 0 {
		for _, pr := range rows {
			if pr.CurrentTxnStartOffset == s.StartOffset {
				return pr, nil
			}
		}
		return model.Producer{}, fmt.Errorf("could not find any open transaction starting at offset %d on %s-%d", s.StartOffset, p.Topic, p.Partition)
	}
	for _, pr := range rows {
		if pr.ProducerID != s.ProducerID {
			continue
		}
		switch {
		case pr.CurrentTxnStartOffset < 0:
			return model.Producer{}, fmt.Errorf("producer %d has no open transaction on %s-%d", s.ProducerID, p.Topic, p.Partition)
		case pr.ProducerEpoch != s.ProducerEpoch:
			return model.Producer{}, fmt.Errorf("producer %d is at epoch %d on %s-%d, not %d", s.ProducerID, pr.ProducerEpoch, p.Topic, p.Partition, s.ProducerEpoch)
		case pr.CoordinatorEpoch != s.CoordinatorEpoch:
			return model.Producer{}, fmt.Errorf("producer %d's coordinator epoch on %s-%d is %d, not %d", s.ProducerID, p.Topic, p.Partition, pr.CoordinatorEpoch, s.CoordinatorEpoch)
		}
		return pr, nil
	}
	return model.Producer{}, fmt.Errorf("producer %d has no open transaction on %s-%d", s.ProducerID, p.Topic, p.Partition)
}

// PlanForceTerminate describes the id and returns the force-terminate Execute
// will re-check and send. It refuses when nothing is open to abort: an
// InitProducerId then would only fence the live producer.
func (c *Client) PlanForceTerminate(ctx context.Context, id string) (model.Action, error) {
	d, err := c.DescribeTransaction(ctx, id)
	if err != nil {
		return model.Action{}, err
	}
	return model.PlanForceTerminate(d.Txn)
}

// unrecorded takes the evidence a look without a request reads: nothing
// goes out on it, so nothing is written.
type unrecorded struct{ model.Recorder }

func (unrecorded) Rests(model.CommitEvidence) {}

// Recheck re-reads a's target and says whether it is still the transaction a
// describes (nil) or what changed, without sending anything: for a prompt
// that waits on the operator.
func (c *Client) Recheck(ctx context.Context, a model.Action) error {
	ctx, cancel := c.scope(ctx)
	defer cancel()
	switch a.Kind {
	case model.ForceTerminate, model.Commit:
		fresh, found, err := c.rereadTxn(ctx, a.TransactionalID)
		if err != nil {
			return err
		}
		if err := model.SameTransaction(a, fresh, found); err != nil || !a.RestsOnFlink() {
			return err
		}
		_, err = c.reverify(ctx, a, unrecorded{}, fresh)
		return err
	}
	fresh, owner, err := c.rereadPartition(ctx, a)
	if err != nil {
		return err
	}
	return model.CheckAbortPartition(a, fresh, true, owner, time.Now())
}
