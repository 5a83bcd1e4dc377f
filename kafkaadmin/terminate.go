package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"strings"
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
	// transaction, it was open there at these offsets (it cannot have ended
	// and come back), so its marker and anything newer follow them.
	marks := c.noteMarks(ctx, a)
	var r model.Result
	for try := 1; ; try++ {
		fresh, end, done := c.beforeInit(ctx, a, rec, marks, r, try, start)
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
		next, again := c.afterInit(ctx, a, marks, r, ke, try)
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
func (c *Client) beforeInit(ctx context.Context, a model.Action, rec model.Recorder, marks []mark, r model.Result, try int, start time.Time) (fresh model.Txn, end model.Result, done bool) {
	fresh, found, err := c.rereadTxn(ctx, a.TransactionalID)
	// Both answers may come after the fence took effect: CONCURRENT_TRANSACTIONS
	// is the fence's own answer, and a coordinator that resigns as it writes
	// the fence answers NOT_COORDINATOR, and the new one aborts whatever is
	// open once it has loaded it (seen on three brokers, TestCluster3ForceTerminate…).
	fenced := try > 1 && (r.ErrorCode == kerr.ConcurrentTransactions.Message || r.ErrorCode == kerr.NotCoordinator.Message)
	switch {
	case err != nil && try == 1:
		return fresh, refused("refused: %s", err), true
	case err != nil && fenced:
		return fresh, c.afterFence(ctx, a, marks, r, fmt.Sprintf("it could not be re-read afterwards (%s)", err), model.Txn{}, false), true
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
		// way, and the next one was fenced. The log tells how the one shown
		// ended.
		v := evidence{a: a, trails: c.readTrails(ctx, marks), fresh: fresh, found: true}.judge(true)
		r.Unknown = true
		r.Err = fmt.Sprintf("the coordinator answered %s; %s", r.ErrorCode, v.text)
		return fresh, r, true
	}
	if err := model.SameTransaction(a, fresh, found); err != nil {
		switch {
		case try == 1:
			return fresh, model.Result{Refused: true, Err: err.Error()}, true
		case fenced:
			return fresh, c.afterFence(ctx, a, marks, r, "then it was re-read: "+trimRefused(err), fresh, found), true
		}
		r.Err += "; then it was re-read: " + trimRefused(err) + "; so it was not retried"
		return fresh, r, true
	}
	if try > maxInitAttempts || try > 1 && time.Since(start) >= c.cfg.Timeout {
		r.Err += fmt.Sprintf("; gave up after %d requests, the transaction still open as it was", r.Sends)
		return fresh, r, true
	}
	if a.RestsOnFlink() {
		// A resolve's abort rests on its checkpoint never having completed.
		fresh, err = c.reverify(ctx, a, rec, fresh)
		switch {
		case err != nil && try == 1:
			return fresh, model.Result{Refused: true, Err: "refused: " + trimRefused(err), JobWide: jobWide(err)}, true
		case err != nil:
			r.Err += "; then it was re-read: " + trimRefused(err) + "; so it was not retried"
			r.JobWide = jobWide(err)
			return fresh, r, true
		}
	}
	return fresh, r, false
}

// afterInit judges the coordinator's answer ke to InitProducerId number try:
// again is set when the answer says the coordinator did nothing yet (or is
// fencing, which the next re-read tells), after a pause; otherwise r is how
// the force-terminate ends.
func (c *Client) afterInit(ctx context.Context, a model.Action, marks []mark, r model.Result, ke error, try int) (_ model.Result, again bool) {
	if ke == nil {
		return c.afterTerminate(ctx, a, marks, r), false
	}
	if answered(&r, ke) {
		return r, false
	}
	switch {
	case errors.Is(ke, kerr.ConcurrentTransactions):
		r.Err = "the transaction is ending (being committed or aborted)"
	case errors.Is(ke, kerr.NotCoordinator):
		// Refused, or the coordinator resigned as it wrote the fence: the
		// re-read (at the new coordinator) and the logs tell which.
		r.Err = "the coordinator moved as it answered: the fence may have been written"
	case errors.Is(ke, kerr.CoordinatorLoadInProgress), errors.Is(ke, kerr.CoordinatorNotAvailable):
		// Refused before the coordinator did anything: the re-read finds
		// the coordinator again.
	default:
		return r, false
	}
	if !sleep(ctx, time.Duration(try)*100*time.Millisecond) {
		r.Err += "; interrupted before it was re-read"
		if errors.Is(ke, kerr.ConcurrentTransactions) || errors.Is(ke, kerr.NotCoordinator) {
			r.Unknown = true
		}
		return r, false
	}
	return r, true
}

// afterFence concludes an attempt whose last request was answered
// CONCURRENT_TRANSACTIONS — the answer of the fence itself as well as of a
// transaction already ending — when the re-read (fresh, when found) no
// longer shows the transaction open as it was, nor being aborted at the next
// epoch (a restarted producer initialized the id again, say). The logs of its
// partitions tell what became of it and of anything newer (evidence.go);
// never a failure that did nothing without proof.
func (c *Client) afterFence(ctx context.Context, a model.Action, marks []mark, r model.Result, seen string, fresh model.Txn, found bool) model.Result {
	r.Err += "; " + seen
	v := evidence{a: a, trails: c.readTrails(ctx, marks), fresh: fresh, found: found}.judge(true)
	if v.aborted {
		return model.Result{Sent: true, Sends: r.Sends, Request: r.Request,
			After: "the coordinator answered " + r.ErrorCode + "; " + seen + "; " + v.text}
	}
	r.Unknown = v.unknown
	r.Err += "; " + v.text + "; not retried"
	return r
}

func trimRefused(err error) string { return strings.TrimPrefix(err.Error(), "refused: ") }

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
// open when it arrived; kfake aborts the open one inline and answers without
// an error. So the answer alone says nothing: the logs of the partitions of
// the one shown, from the marks noted before the re-check, tell whether it
// had ended on the way and whether a newer transaction was aborted
// (evidence.go). The very transaction still open means the answer cannot be
// trusted.
func (c *Client) afterTerminate(ctx context.Context, a model.Action, marks []mark, r model.Result) model.Result {
	if ctx.Err() != nil {
		r.Unknown, r.Err = true, "interrupted before the outcome could be read"
		return r
	}
	fresh, found, err := c.rereadTxn(ctx, a.TransactionalID)
	now := "it is no longer known to its coordinator"
	switch {
	case err != nil:
		now = "it could not be re-read afterwards: " + err.Error()
	case found && model.SameTransaction(a, fresh, found) == nil:
		r.Unknown = true
		r.Err = fmt.Sprintf("the coordinator answered without an error, yet the transaction is still %s at epoch %d as it was", fresh.State, fresh.ProducerEpoch)
		return r
	case found:
		now = fmt.Sprintf("now %s at epoch %d", fresh.State, fresh.ProducerEpoch)
	}
	v := evidence{a: a, trails: c.readTrails(ctx, marks), fresh: fresh, found: found && err == nil}.judge(false)
	switch {
	case v.aborted:
		r.After = v.text + "; the producer is fenced; " + now
	case v.unknown:
		r.Unknown = true
		r.Err = "the coordinator answered without an error: " + v.text + "; " + now
	default:
		r.Err = v.text + "; " + now
	}
	return r
}
