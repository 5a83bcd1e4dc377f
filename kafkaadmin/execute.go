package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/model"
)

// maxInitAttempts bounds the retries of InitProducerId on answers that mean the
// coordinator did nothing yet (as kafka-transactions.sh retries them too).
const maxInitAttempts = 10

// defaultTxnTimeoutMs is sent when the coordinator did not report the id's timeout.
const defaultTxnTimeoutMs = 60000

// Execute re-reads the target's state, refuses (Result.Refused) if it changed
// since a was built (model.CheckForceTerminate / model.CheckAbortPartition), and
// otherwise sends the request once, never retrying silently.
func (c *Client) Execute(ctx context.Context, a model.Action) model.Result {
	ctx, cancel := c.scope(ctx)
	defer cancel()
	var r model.Result
	switch a.Kind {
	case model.ForceTerminate:
		r = c.forceTerminate(ctx, a)
	case model.AbortPartition:
		r = c.abortPartition(ctx, a)
	default:
		r = refused("refused: unknown action %q", a.Kind)
	}
	r.Action = a
	r.At = time.Now()
	return r
}

func refused(format string, args ...any) model.Result {
	return model.Result{Refused: true, Err: fmt.Sprintf(format, args...)}
}

// forceTerminate sends InitProducerId for the id to its coordinator, which
// aborts the open transaction and bumps the epoch (Kafka 4.1's
// forceTerminateTransaction does the same).
func (c *Client) forceTerminate(ctx context.Context, a model.Action) model.Result {
	id := a.TransactionalID
	if id == "" {
		return refused("refused: no transactional.id given")
	}
	d := c.describeChunk(ctx, []string{id})[id]
	switch {
	case d.denied != "":
		return refused("refused: %s to re-read %s: %s (%s)", model.NoPermission, id, d.denied, needDescribe)
	case d.err != "":
		return refused("refused: could not re-read %s: %s", id, d.err)
	}
	if err := model.CheckForceTerminate(a, d.txn, !d.gone); err != nil {
		return model.Result{Refused: true, Err: err.Error()}
	}
	req := kmsg.NewPtrInitProducerIDRequest()
	req.TransactionalID = kmsg.StringPtr(id)
	req.ProducerID = -1
	req.ProducerEpoch = -1
	// Sending the id's own timeout keeps its configuration as it was.
	req.TransactionTimeoutMillis = d.txn.TimeoutMs
	if req.TransactionTimeoutMillis <= 0 {
		req.TransactionTimeoutMillis = defaultTxnTimeoutMs
	}
	// A timeout above transaction.max.timeout.ms would be refused outright.
	if max := c.knownMaxTimeoutMs(); max > 0 && int64(req.TransactionTimeoutMillis) > max {
		req.TransactionTimeoutMillis = int32(max)
	}
	return c.initProducerID(ctx, id, d.txn.Coordinator, req)
}

// initProducerID sends req straight to the coordinator (kgo's own retries
// could send it twice). CONCURRENT_TRANSACTIONS and COORDINATOR_LOAD_IN_PROGRESS
// mean nothing happened yet and are retried, bounded; NOT_COORDINATOR too,
// after looking the coordinator up again.
func (c *Client) initProducerID(ctx context.Context, id string, coord int32, req *kmsg.InitProducerIDRequest) model.Result {
	start := time.Now()
	var res model.Result
	for attempt := 1; ; attempt++ {
		resp, err := c.sendOnce(ctx, coord, req)
		if err != nil {
			return failedSend(res, coord, err)
		}
		res.Sent = true
		ke := kerr.ErrorForCode(resp.(*kmsg.InitProducerIDResponse).ErrorCode)
		if ke == nil {
			return model.Result{Sent: true}
		}
		res.ErrorCode, res.Err = codeOf(ke)
		if mayHaveApplied(ke) {
			res.Unknown = true
			return res
		}
		again := errors.Is(ke, kerr.ConcurrentTransactions) || errors.Is(ke, kerr.CoordinatorLoadInProgress)
		moved := errors.Is(ke, kerr.NotCoordinator) || errors.Is(ke, kerr.CoordinatorNotAvailable)
		if !(again || moved) || attempt >= maxInitAttempts || time.Since(start) >= c.cfg.Timeout {
			return res
		}
		if moved {
			if nc, ok := c.findCoordinator(ctx, id); ok {
				coord = nc
			}
		}
		if !sleep(ctx, time.Duration(attempt)*100*time.Millisecond) {
			return res
		}
	}
}

// mayHaveApplied reports whether an answered error leaves the outcome open:
// a broker answers REQUEST_TIMED_OUT (or, for markers,
// NOT_ENOUGH_REPLICAS_AFTER_APPEND) after it may already have acted.
func mayHaveApplied(ke error) bool {
	return errors.Is(ke, kerr.RequestTimedOut) || errors.Is(ke, kerr.NotEnoughReplicasAfterAppend)
}

// sendOnce issues one request to one broker, without any retry.
func (c *Client) sendOnce(ctx context.Context, broker int32, req kmsg.Request) (kmsg.Response, error) {
	ctx, cancel := c.deadline(ctx)
	defer cancel()
	return c.kgo.Broker(int(broker)).Request(ctx, req)
}

// failedSend classifies a request error: a failed dial means nothing left this
// machine; anything later (timeout, dropped connection) may or may not have
// taken effect.
func failedSend(res model.Result, broker int32, err error) model.Result {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		res.Err = fmt.Sprintf("could not connect to broker %d, nothing sent: %s", broker, err)
		return res
	}
	return model.Result{Sent: true, Unknown: true, Err: fmt.Sprintf("broker %d: %s", broker, errText(err))}
}

func codeOf(ke error) (code, text string) {
	var e *kerr.Error
	if errors.As(ke, &e) {
		return e.Message, e.Description
	}
	return "", ke.Error()
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func (c *Client) findCoordinator(ctx context.Context, id string) (int32, bool) {
	ctx, cancel := c.deadline(ctx)
	defer cancel()
	r, ok := kadm.NewClient(c.kgo).FindTxnCoordinators(ctx, id)[id]
	if !ok || r.Err != nil {
		return 0, false
	}
	return r.NodeID, true
}

// abortPartition writes an ABORT marker for one producer on one partition, at
// its leader (what kafka-transactions.sh abort does): for a transaction the
// coordinator no longer accounts for.
func (c *Client) abortPartition(ctx context.Context, a model.Action) model.Result {
	p := a.TopicPartition
	meta, metaErr := c.topicMetadata(ctx, []string{p.Topic})
	if metaErr != "" {
		return refused("refused: could not re-read %s-%d: %s", p.Topic, p.Partition, metaErr)
	}
	if d := meta[p.Topic].denied; d != nil {
		return refused("refused: %s to re-read %s-%d: %s (Metadata needs DESCRIBE on the topic)", model.NoPermission, p.Topic, p.Partition, errText(d))
	}
	leader, msg := meta.leaderOf(p)
	if msg != "" || leader < 0 {
		return refused("refused: %s-%d has no reachable leader: %s", p.Topic, p.Partition, msg)
	}
	var errs partErrs
	rows, ok := c.producers(ctx, []tp{p}, &errs)[p]
	switch {
	case errs.denied[p].producers:
		return refused("refused: %s to re-read the producers of %s-%d: %s (%s)", model.NoPermission, p.Topic, p.Partition, errs.denied[p].why, needProducers)
	case !ok:
		return refused("refused: could not re-read %s-%d: %s", p.Topic, p.Partition, errs.get(p))
	}
	fresh := model.Partition{TopicPartition: p, Leader: leader, HighWatermark: -1, LastStableOffset: -1, Producers: rows}
	owner, err := c.ownerOf(ctx, a.ProducerID)
	switch {
	case err != nil && model.Denied(err.Error()):
		return refused("refused: %s", err)
	case err != nil:
		return refused("refused: could not ask the coordinators about producer %d: %s", a.ProducerID, err)
	case owner == nil:
		// No visible id owns it: that settles nothing if ACLs hide ids.
		hidden, err := c.ownerMayBeHidden(ctx)
		if err != nil {
			return refused("refused: could not tell whether ACLs hide producer %d's transactional id from you: %s", a.ProducerID, errText(err))
		}
		fresh.OwnersHidden = hidden
	}
	if err := model.CheckAbortPartition(a, fresh, true, owner); err != nil {
		return model.Result{Refused: true, Err: err.Error()}
	}

	req := kmsg.NewPtrWriteTxnMarkersRequest()
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID = a.ProducerID
	m.ProducerEpoch = a.ProducerEpoch
	m.Committed = false
	m.CoordinatorEpoch = max(a.CoordinatorEpoch, 0) // as kafka-transactions.sh sends it
	mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	mt.Topic = p.Topic
	mt.Partitions = []int32{p.Partition}
	m.Topics = append(m.Topics, mt)
	req.Markers = append(req.Markers, m)

	resp, err := c.sendOnce(ctx, leader, req)
	if err != nil {
		return failedSend(model.Result{}, leader, err)
	}
	for _, rm := range resp.(*kmsg.WriteTxnMarkersResponse).Markers {
		for _, rt := range rm.Topics {
			for _, rp := range rt.Partitions {
				if rm.ProducerID != a.ProducerID || rt.Topic != p.Topic || rp.Partition != p.Partition {
					continue
				}
				if ke := kerr.ErrorForCode(rp.ErrorCode); ke != nil {
					code, text := codeOf(ke)
					return model.Result{Sent: true, ErrorCode: code, Err: text, Unknown: mayHaveApplied(ke)}
				}
				return model.Result{Sent: true}
			}
		}
	}
	return model.Result{Sent: true, Unknown: true, Err: fmt.Sprintf("broker %d answered without a result for %s-%d", leader, p.Topic, p.Partition)}
}

// ownerOf returns the transaction the coordinators list for a producer id
// (nil when none does). Any coordinator not answering is an error: the owner
// might be the one we could not ask.
func (c *Client) ownerOf(ctx context.Context, pid int64) (*model.Txn, error) {
	list, err := c.listOwners(ctx, []int64{pid})
	if err != nil {
		return nil, err
	}
	var ids []string
	for id, l := range list {
		if l.pid == pid {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	var owner *model.Txn
	for id, d := range c.describeChunk(ctx, ids) {
		switch {
		case d.gone:
			continue
		case d.denied != "":
			return nil, fmt.Errorf("%s to re-read %s, which lists producer %d: %s (%s)", model.NoPermission, id, pid, d.denied, needDescribe)
		case d.err != "":
			return nil, fmt.Errorf("%s: %s", id, d.err)
		case d.txn.ProducerID != pid:
			continue
		}
		if owner == nil || d.txn.State.Open() {
			t := d.txn
			owner = &t
		}
	}
	return owner, nil
}

// ownerMayBeHidden asks afresh whether ACLs hide transactional ids from us.
func (c *Client) ownerMayBeHidden(ctx context.Context) (bool, error) {
	brokers, err := c.brokerIDs(ctx)
	if err != nil {
		return false, err
	}
	return c.idsHidden(ctx, brokers)
}
