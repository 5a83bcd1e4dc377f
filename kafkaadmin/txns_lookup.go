package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/model"
)

// The one-shot commands (txnscope list, describe, ...) ask exactly what
// kafka-transactions.sh asks, once, and return the raw answers.

// Listing is one row of ListTransactions.
type Listing struct {
	TransactionalID string
	Coordinator     int32
	ProducerID      int64
	State           model.State
}

// ListOptions filters ListTransactions on the brokers.
type ListOptions struct {
	// DurationFilterMs keeps transactions running longer than this many
	// milliseconds; negative keeps all (ListTransactions v1, Kafka 3.8+).
	DurationFilterMs int64
	// Pattern is a regular expression on the id, evaluated by the brokers
	// (ListTransactions v2, Kafka 4.1+); empty keeps all.
	Pattern string
}

// BrokerError is a broker that did not answer a request sent to every broker.
type BrokerError struct {
	Broker int32
	Err    error
}

func (e BrokerError) Error() string {
	if e.Broker < 0 { // kgo failed before it knew the brokers (a refused login, say)
		return errText(e.Err)
	}
	return fmt.Sprintf("broker %d: %s", e.Broker, errText(e.Err))
}
func (e BrokerError) Unwrap() error { return e.Err }

// ListTransactions asks every broker for the transactions it coordinates,
// sorted by id. When some brokers fail, it returns what the others listed and
// an error naming the failed ones.
func (c *Client) ListTransactions(ctx context.Context, o ListOptions) ([]Listing, error) {
	ctx, cancel := c.scope(ctx)
	defer cancel()
	dctx, dcancel := c.deadline(ctx)
	defer dcancel()
	req := kmsg.NewPtrListTransactionsRequest()
	req.DurationFilterMillis = o.DurationFilterMs
	if o.Pattern != "" {
		req.TransactionalIDPattern = kmsg.StringPtr(o.Pattern)
	}
	shards := c.kgo.RequestSharded(dctx, req)
	if len(shards) == 0 {
		return nil, errors.New("ListTransactions: no broker to ask")
	}
	seen := map[string]bool{}
	var out []Listing
	var errs []error
	for _, sh := range shards {
		b := sh.Meta.NodeID
		if sh.Err != nil {
			errs = append(errs, BrokerError{b, sh.Err})
			continue
		}
		resp := sh.Resp.(*kmsg.ListTransactionsResponse)
		// kgo silently drops fields a broker's version does not know: a
		// filter the broker never saw must not look like an empty result.
		switch v := resp.GetVersion(); {
		case o.DurationFilterMs >= 0 && v < 1:
			errs = append(errs, BrokerError{b, fmt.Errorf("the duration filter needs ListTransactions v1 (Kafka 3.8+), the broker speaks v%d", v)})
			continue
		case o.Pattern != "" && v < 2:
			errs = append(errs, BrokerError{b, fmt.Errorf("the transactional id pattern needs ListTransactions v2 (Kafka 4.1+), the broker speaks v%d", v)})
			continue
		}
		if e := kerr.ErrorForCode(resp.ErrorCode); e != nil {
			errs = append(errs, BrokerError{b, e})
			continue
		}
		for _, ts := range resp.TransactionStates {
			// Real Kafka lists each id once, on its coordinator; kfake on
			// every broker.
			if seen[ts.TransactionalID] {
				continue
			}
			seen[ts.TransactionalID] = true
			out = append(out, Listing{TransactionalID: ts.TransactionalID, Coordinator: b, ProducerID: ts.ProducerID, State: model.State(ts.TransactionState)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].TransactionalID < out[j].TransactionalID })
	return out, joinErrs("ListTransactions", errs)
}

// joinErrs makes one line out of several failures.
func joinErrs(what string, errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	sort.Strings(msgs)
	return fmt.Errorf("%s: %s", what, strings.Join(msgs, "; "))
}

// Description is one transactional id as DescribeTransactions reports it.
type Description struct {
	model.Txn
	// StartMs is the coordinator's start timestamp of the current (or last)
	// transaction in epoch milliseconds, -1 when it reports none. Txn.Start
	// is set only while a transaction is open; StartMs is what it said.
	StartMs int64
}

// ErrNotFound is the coordinator's TRANSACTIONAL_ID_NOT_FOUND.
var ErrNotFound = errors.New("TRANSACTIONAL_ID_NOT_FOUND: the transactional id could not be found")

// DescribeTransaction asks the id's coordinator about it.
func (c *Client) DescribeTransaction(ctx context.Context, id string) (Description, error) {
	ctx, cancel := c.scope(ctx)
	defer cancel()
	dctx, dcancel := c.deadline(ctx)
	defer dcancel()
	req := kmsg.NewPtrDescribeTransactionsRequest()
	req.TransactionalIDs = []string{id}
	for _, sh := range c.kgo.RequestSharded(dctx, req) {
		if sh.Err != nil {
			if d := describeFailed(sh.Err); d.denied != "" {
				return Description{}, fmt.Errorf("%s: %s", id, d.err)
			}
			// A failure on the way to the coordinator (a refused login, say)
			// reaches us without the broker's reason; a direct request has it.
			if _, err := c.brokerIDs(ctx); err != nil {
				return Description{}, whole(ctx, "cannot reach the cluster", err)
			}
			return Description{}, fmt.Errorf("describe %s: %s", id, errText(sh.Err))
		}
		for _, st := range sh.Resp.(*kmsg.DescribeTransactionsResponse).TransactionStates {
			if st.TransactionalID != id {
				continue
			}
			d := fromDescribe(st, sh.Meta.NodeID)
			switch {
			case d.gone:
				return Description{}, fmt.Errorf("describe %s: %w", id, ErrNotFound)
			case d.err != "":
				return Description{}, fmt.Errorf("%s: %s", id, d.err)
			}
			return Description{Txn: d.txn, StartMs: st.StartTimestamp}, nil
		}
	}
	return Description{}, fmt.Errorf("describe %s: no answer for this id", id)
}

// DescribeProducers lists the producer state of one partition, at its leader,
// or at the given broker (a replica) when broker >= 0. Rows are sorted by
// producer id.
func (c *Client) DescribeProducers(ctx context.Context, p model.TopicPartition, broker int32) ([]model.Producer, error) {
	ctx, cancel := c.scope(ctx)
	defer cancel()
	rows, errs := c.describeProducersOn(ctx, []tp{p}, broker)
	if msg := errs.get(p); msg != "" {
		return nil, fmt.Errorf("%s-%d: %s", p.Topic, p.Partition, msg)
	}
	r, ok := rows[p]
	if !ok {
		return nil, fmt.Errorf("%s-%d: no answer for this partition", p.Topic, p.Partition)
	}
	return r, nil
}

// describeProducersOn is DescribeProducers on the leaders (broker < 0, kgo
// routes each partition), or entirely on one broker.
func (c *Client) describeProducersOn(ctx context.Context, tps []tp, broker int32) (map[tp][]model.Producer, *partErrs) {
	var errs partErrs
	if broker < 0 {
		return c.producers(ctx, tps, &errs), &errs
	}
	ctx, cancel := c.deadline(ctx)
	defer cancel()
	req := kmsg.NewPtrDescribeProducersRequest()
	for topic, parts := range groupByTopic(tps) {
		rt := kmsg.NewDescribeProducersRequestTopic()
		rt.Topic = topic
		rt.Partitions = parts
		req.Topics = append(req.Topics, rt)
	}
	out := make(map[tp][]model.Producer, len(tps))
	what := fmt.Sprintf("producers on broker %d", broker)
	resp, err := c.kgo.Broker(int(broker)).Request(ctx, req)
	if err != nil {
		for _, p := range tps {
			errs.record(p, false, what, err)
		}
		return out, &errs
	}
	for _, rt := range resp.(*kmsg.DescribeProducersResponse).Topics {
		for _, rp := range rt.Partitions {
			p := tp{Topic: rt.Topic, Partition: rp.Partition}
			if e := kerr.ErrorForCode(rp.ErrorCode); e != nil {
				errs.record(p, false, what, e)
				continue
			}
			rows := make([]model.Producer, 0, len(rp.ActiveProducers))
			for _, ap := range rp.ActiveProducers {
				rows = append(rows, fromActiveProducer(ap))
			}
			sort.Slice(rows, func(i, j int) bool { return rows[i].ProducerID < rows[j].ProducerID })
			out[p] = rows
		}
	}
	return out, &errs
}

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

// Recheck re-reads a's target and says whether it is still the transaction a
// describes (nil) or what changed, without sending anything: for a prompt
// that waits on the operator.
func (c *Client) Recheck(ctx context.Context, a model.Action) error {
	ctx, cancel := c.scope(ctx)
	defer cancel()
	if a.Kind == model.ForceTerminate {
		fresh, found, err := c.rereadTxn(ctx, a.TransactionalID)
		if err != nil {
			return err
		}
		return model.CheckForceTerminate(a, fresh, found)
	}
	fresh, owner, err := c.rereadPartition(ctx, a)
	if err != nil {
		return err
	}
	return model.CheckAbortPartition(a, fresh, true, owner, time.Now())
}
