package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/model"
)

// maxInitAttempts bounds the InitProducerId requests of one force-terminate:
// answers that say the coordinator did nothing yet are retried, each after a
// re-read, within the timeout; the last is followed by a re-read too, so that
// giving up never leaves a fence unaccounted for.
const maxInitAttempts = 10

// defaultTxnTimeoutMs is sent when the coordinator did not report the id's timeout.
const defaultTxnTimeoutMs = 60000

// forceTerminate sends InitProducerId for the id to its coordinator, which
// fences the producer and aborts its open transaction (Kafka 4.1's
// forceTerminateTransaction does the same).
//
// Kafka answers the request that fences an Ongoing transaction with
// CONCURRENT_TRANSACTIONS (the abort is under way), and answers the same code
// when the transaction is already committing: kafka-transactions.sh retries
// blindly, which then fences the producer's next transaction. Here every
// retry is preceded by a re-read: the transaction seen being aborted ends the
// attempt successfully, the very same transaction still open is retried, and
// anything else stops it.
func (c *Client) forceTerminate(ctx context.Context, a model.Action, rec model.Recorder) model.Result {
	if a.TransactionalID == "" {
		return refused("refused: no transactional.id given")
	}
	start := time.Now()
	// Read before the re-check: if the re-check then still shows the
	// transaction, this is where it began (it cannot have ended and come back).
	anchor := c.firstOffset(ctx, a)
	var r model.Result
	for try := 1; ; try++ {
		fresh, end, done := c.beforeInit(ctx, a, anchor, r, try, start)
		if done {
			return end
		}
		r.ErrorCode, r.Err = "", ""
		req := c.initRequest(a, fresh)
		if f := c.followed.Load(); f != nil {
			// Before it goes: the log may show the abort before the answer.
			f.terminated(a.TransactionalID, fresh.ProducerID, fresh.ProducerEpoch)
		}
		resp, next := c.send(ctx, rec, try, fresh.Coordinator, req, a.WireTo(fresh.Coordinator, req.TransactionTimeoutMillis), r)
		r = next
		if resp == nil {
			return r
		}
		ke := kerr.ErrorForCode(resp.(*kmsg.InitProducerIDResponse).ErrorCode)
		next, again := c.afterInit(ctx, a, anchor, r, ke, try)
		if !again {
			return next
		}
		r = next
	}
}

// beforeInit re-reads the transaction before InitProducerId number try (r is
// what the previous one came to) and returns it when the request may go.
// Otherwise done is set and end is how the force-terminate ends: refused on
// the first try, and after a request, judged by what the re-read shows.
func (c *Client) beforeInit(ctx context.Context, a model.Action, anchor *ending, r model.Result, try int, start time.Time) (fresh model.Txn, end model.Result, done bool) {
	fresh, found, err := c.rereadTxn(ctx, a.TransactionalID)
	fenced := try > 1 && r.ErrorCode == kerr.ConcurrentTransactions.Message
	switch {
	case err != nil && try == 1:
		return fresh, refused("refused: %s", err), true
	case err != nil && fenced:
		return fresh, c.afterFence(ctx, a, anchor, r, fmt.Sprintf("it could not be re-read afterwards (%s)", err)), true
	case err != nil:
		r.Err += fmt.Sprintf("; it could not be re-read afterwards (%s), so it was not retried", err)
		return fresh, r, true
	case fenced && model.Aborting(a, fresh):
		// Only a fence answers so and then shows this very transaction
		// aborting; after an answer that did nothing it would be someone
		// else's abort.
		return fresh, model.Result{Sent: true, Sends: r.Sends, Request: r.Request, After: fmt.Sprintf(
			"the coordinator answered %s and is aborting it: now %s at epoch %d", r.ErrorCode, fresh.State, fresh.ProducerEpoch)}, true
	case fenced && model.AbortingNewer(a, fresh):
		// The coordinator fences whatever transaction is open when the
		// request lands: the one shown ended while the request was on its
		// way, and the next one was fenced.
		r.Unknown = true
		r.Err = fmt.Sprintf("the coordinator answered %s and is aborting a newer transaction of %s (started at %s; the one shown started at %s), "+
			"now %s at epoch %d: the one shown ended while the request was on its way, and this request most likely aborted the newer one and fenced its producer",
			r.ErrorCode, a.TransactionalID, model.ClockMs(fresh.StartTime()), model.ClockMs(a.Start), fresh.State, fresh.ProducerEpoch)
		return fresh, r, true
	}
	if err := model.CheckForceTerminate(a, fresh, found); err != nil {
		switch {
		case try == 1:
			return fresh, model.Result{Refused: true, Err: err.Error()}, true
		case fenced:
			return fresh, c.afterFence(ctx, a, anchor, r, "then it was re-read: "+trimRefused(err)), true
		}
		r.Err += "; then it was re-read: " + trimRefused(err) + "; so it was not retried"
		return fresh, r, true
	}
	if try > maxInitAttempts || try > 1 && time.Since(start) >= c.cfg.Timeout {
		r.Err += fmt.Sprintf("; gave up after %d requests, the transaction still open as it was", r.Sends)
		return fresh, r, true
	}
	return fresh, r, false
}

// afterInit judges the coordinator's answer ke to InitProducerId number try:
// again is set when the answer says the coordinator did nothing yet (or is
// fencing, which the next re-read tells), after a pause; otherwise r is how
// the force-terminate ends.
func (c *Client) afterInit(ctx context.Context, a model.Action, anchor *ending, r model.Result, ke error, try int) (_ model.Result, again bool) {
	if ke == nil {
		return c.afterTerminate(ctx, a, anchor, r), false
	}
	if answered(&r, ke) {
		return r, false
	}
	switch {
	case errors.Is(ke, kerr.ConcurrentTransactions):
		r.Err = "the transaction is ending (being committed or aborted)"
	case errors.Is(ke, kerr.CoordinatorLoadInProgress), errors.Is(ke, kerr.NotCoordinator), errors.Is(ke, kerr.CoordinatorNotAvailable):
		// Refused before the coordinator did anything: the re-read finds
		// the coordinator again.
	default:
		return r, false
	}
	if !sleep(ctx, time.Duration(try)*100*time.Millisecond) {
		r.Err += "; interrupted before it was re-read"
		if errors.Is(ke, kerr.ConcurrentTransactions) {
			r.Unknown = true
		}
		return r, false
	}
	return r, true
}

// afterFence concludes an attempt whose last request was answered
// CONCURRENT_TRANSACTIONS — the answer of the fence itself as well as of a
// transaction already ending — when the re-read no longer shows the
// transaction open as it was, nor being aborted at the next epoch (a
// restarted producer initialized the id again, say). Its own marker tells
// what became of it; without one the outcome is unknown, never a failure
// that did nothing.
func (c *Client) afterFence(ctx context.Context, a model.Action, anchor *ending, r model.Result, seen string) model.Result {
	r.Err += "; " + seen
	switch c.markerOf(ctx, anchor) {
	case model.CompleteAbort:
		return model.Result{Sent: true, Sends: r.Sends, Request: r.Request,
			After: "the coordinator answered " + r.ErrorCode + "; " + seen + "; its ABORT marker is in the log"}
	case model.CompleteCommit:
		r.Err += "; its COMMIT marker is in the log: nothing was aborted; not retried"
	default:
		r.Unknown = true
		r.Err += "; whether this request aborted it could not be read from the log; not retried"
	}
	return r
}

func trimRefused(err error) string { return strings.TrimPrefix(err.Error(), "refused: ") }

// rereadTxn describes id at its coordinator. fresh.StartTime() is the coordinator's
// start timestamp whatever the state, so that a transaction being aborted is
// still recognised.
func (c *Client) rereadTxn(ctx context.Context, id string) (fresh model.Txn, found bool, err error) {
	d := c.describeChunk(ctx, []string{id})[id]
	switch {
	case d.denied != "":
		return model.Txn{}, false, fmt.Errorf("%s to re-read %s: %s (%s)", model.NoPermission, id, d.denied, needDescribe)
	case d.err != "":
		return model.Txn{}, false, fmt.Errorf("could not re-read %s: %s", id, d.err)
	case d.gone:
		return model.Txn{}, false, nil
	}
	fresh = d.txn
	fresh.SetStart(d.start)
	return fresh, true, nil
}

func (c *Client) initRequest(a model.Action, fresh model.Txn) *kmsg.InitProducerIDRequest {
	req := kmsg.NewPtrInitProducerIDRequest()
	req.TransactionalID = kmsg.StringPtr(a.TransactionalID)
	req.ProducerID = -1
	req.ProducerEpoch = -1
	// Sending the id's own timeout keeps its configuration as it was.
	req.TransactionTimeoutMillis = fresh.TimeoutMs
	if req.TransactionTimeoutMillis <= 0 {
		req.TransactionTimeoutMillis = defaultTxnTimeoutMs
	}
	// A timeout above transaction.max.timeout.ms would be refused outright.
	if ceiling := c.knownMaxTimeoutMs(); ceiling > 0 && int64(req.TransactionTimeoutMillis) > ceiling {
		req.TransactionTimeoutMillis = int32(ceiling)
	}
	return req
}

// afterTerminate tells what a request answered without an error did. Kafka
// answers the InitProducerId that fences an open transaction with
// CONCURRENT_TRANSACTIONS, and without an error only when no transaction was
// open when it arrived: the one shown had ended on the way, and the request
// only fenced its producer. Whether it had committed or aborted is read from
// its marker (kfake, which fences inline and answers without an error, leaves
// an ABORT there). The very transaction still open means the answer cannot
// be trusted.
func (c *Client) afterTerminate(ctx context.Context, a model.Action, anchor *ending, r model.Result) model.Result {
	if ctx.Err() != nil {
		r.Unknown, r.Err = true, "interrupted before the outcome could be read"
		return r
	}
	fresh, found, err := c.rereadTxn(ctx, a.TransactionalID)
	now := "it is no longer known to its coordinator"
	switch {
	case err != nil:
		now = "it could not be re-read afterwards: " + err.Error()
	case found && model.CheckForceTerminate(a, fresh, found) == nil:
		r.Unknown = true
		r.Err = fmt.Sprintf("the coordinator answered without an error, yet the transaction is still %s at epoch %d as it was", fresh.State, fresh.ProducerEpoch)
		return r
	case found:
		now = fmt.Sprintf("now %s at epoch %d", fresh.State, fresh.ProducerEpoch)
	}
	switch c.markerOf(ctx, anchor) {
	case model.CompleteAbort:
		r.After = "its ABORT marker is in the log; the producer is fenced; " + now
	case model.CompleteCommit:
		r.Err = "it had committed before the request arrived (its COMMIT marker is in the log): nothing was aborted, " +
			"but the request fenced its producer; " + now
	default:
		r.Unknown = true
		r.Err = "the coordinator answered without CONCURRENT_TRANSACTIONS, as Kafka does only when no transaction is open: " +
			"the one shown may have ended just before, and then only its producer was fenced; its COMMIT or ABORT marker could not be read; " + now
	}
	return r
}

// firstOffset finds where a's transaction began on one of its partitions
// (DescribeProducers), to read its marker once it ended; nil when none can
// be read.
func (c *Client) firstOffset(ctx context.Context, a model.Action) *ending {
	if len(a.Partitions) == 0 {
		return nil
	}
	var errs partErrs
	rows := c.producers(ctx, a.Partitions, &errs)
	for _, p := range a.Partitions {
		for _, pr := range rows[p] {
			if pr.ProducerID == a.ProducerID && pr.CurrentTxnStartOffset >= 0 {
				return &ending{id: a.TransactionalID, pid: a.ProducerID, epoch: a.ProducerEpoch, at: p, start: pr.CurrentTxnStartOffset}
			}
		}
	}
	return nil
}

// markerOf reads the marker that ended the transaction at e: CompleteCommit,
// CompleteAbort, or "" when it cannot be told.
func (c *Client) markerOf(ctx context.Context, e *ending) model.State {
	if e == nil {
		return ""
	}
	meta, msg := c.topicMetadata(ctx, []string{e.at.Topic})
	if msg != "" {
		return ""
	}
	leader, msg := meta.leaderOf(e.at)
	if msg != "" || leader < 0 {
		return ""
	}
	var budget atomic.Int64
	budget.Store(markerRefreshBytes)
	return c.readOutcome(ctx, *e, leader, meta[e.at.Topic].id, &budget)
}
