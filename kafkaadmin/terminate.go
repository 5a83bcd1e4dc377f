package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/model"
)

// maxInitAttempts bounds the InitProducerId requests of one force-terminate:
// answers that say the coordinator did nothing yet are retried, each after a
// re-read, within the timeout.
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
	var r model.Result
	for try := 1; ; try++ {
		fresh, found, err := c.rereadTxn(ctx, a.TransactionalID)
		switch {
		case err != nil && try == 1:
			return refused("refused: %s", err)
		case err != nil:
			r.Err += fmt.Sprintf("; it could not be re-read afterwards (%s), so it was not retried", err)
			return r
		case try > 1 && model.Aborting(a, fresh):
			return model.Result{Sent: true, Sends: r.Sends, After: fmt.Sprintf(
				"the coordinator answered %s and is aborting it: now %s at epoch %d", r.ErrorCode, fresh.State, fresh.ProducerEpoch)}
		case try > 1 && r.ErrorCode == kerr.ConcurrentTransactions.Message && abortingNewer(a, fresh):
			// The coordinator answers the fence of whatever transaction is
			// open when the request lands: the one shown ended while the
			// request was on its way, and the next one was fenced.
			r.Unknown = true
			r.Err = fmt.Sprintf("the coordinator answered %s and is aborting a newer transaction of %s (started at %s; the one shown started at %s), "+
				"now %s at epoch %d: the one shown ended while the request was on its way, and this request most likely aborted the newer one and fenced its producer",
				r.ErrorCode, a.TransactionalID, clockMs(fresh.Start), clockMs(a.Start), fresh.State, fresh.ProducerEpoch)
			return r
		}
		if err := model.CheckForceTerminate(a, fresh, found); err != nil {
			if try == 1 {
				return model.Result{Refused: true, Err: err.Error()}
			}
			r.Err += "; then it was re-read: " + trimRefused(err) + "; so it was not retried"
			return r
		}

		r.ErrorCode, r.Err = "", ""
		resp, next := c.send(ctx, rec, try, fresh.Coordinator, c.initRequest(a, fresh), r)
		r = next
		if resp == nil {
			return r
		}
		ke := kerr.ErrorForCode(resp.(*kmsg.InitProducerIDResponse).ErrorCode)
		if ke == nil {
			return c.afterTerminate(ctx, a, r)
		}
		if answered(&r, ke) {
			return r
		}
		switch {
		case errors.Is(ke, kerr.ConcurrentTransactions):
			r.Err = "the transaction is ending (being committed or aborted)"
		case errors.Is(ke, kerr.CoordinatorLoadInProgress), errors.Is(ke, kerr.NotCoordinator), errors.Is(ke, kerr.CoordinatorNotAvailable):
			// Refused before the coordinator did anything: the re-read finds
			// the coordinator again.
		default:
			return r
		}
		if try >= maxInitAttempts || time.Since(start) >= c.cfg.Timeout {
			r.Err += fmt.Sprintf("; gave up after %d requests", r.Sends)
			return r
		}
		if !sleep(ctx, time.Duration(try)*100*time.Millisecond) {
			r.Err += "; interrupted before it was re-read"
			return r
		}
	}
}

func trimRefused(err error) string {
	s := err.Error()
	const p = "refused: "
	if len(s) > len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return s
}

// rereadTxn describes id at its coordinator. fresh.Start is the coordinator's
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
	fresh.Start = d.start
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
	if max := c.knownMaxTimeoutMs(); max > 0 && int64(req.TransactionTimeoutMillis) > max {
		req.TransactionTimeoutMillis = int32(max)
	}
	return req
}

// afterTerminate says what the id looks like once the coordinator accepted
// the request: its state and epoch, as evidence rather than a guess at the
// outcome. Kafka answers a request that fences an open transaction with
// CONCURRENT_TRANSACTIONS, never with success: the very transaction still
// open after a success means the answer cannot be trusted.
func (c *Client) afterTerminate(ctx context.Context, a model.Action, r model.Result) model.Result {
	if ctx.Err() != nil {
		return r
	}
	fresh, found, err := c.rereadTxn(ctx, a.TransactionalID)
	switch {
	case err != nil:
		r.After = "could not re-read it afterwards: " + err.Error()
	case !found:
		r.After = "it is no longer known to its coordinator"
	case model.CheckForceTerminate(a, fresh, found) == nil:
		r.Unknown = true
		r.Err = fmt.Sprintf("the coordinator answered without an error, yet the transaction is still %s at epoch %d as it was", fresh.State, fresh.ProducerEpoch)
	default:
		r.After = fmt.Sprintf("now %s at epoch %d", fresh.State, fresh.ProducerEpoch)
	}
	return r
}

// abortingNewer reports whether fresh shows a transaction of a's producer
// that started after the one a was planned on being aborted, at a higher
// epoch: what a fence that landed after a turnover leaves.
func abortingNewer(a model.Action, fresh model.Txn) bool {
	switch fresh.State {
	case model.PrepareEpochFence, model.PrepareAbort, model.CompleteAbort:
	default:
		return false
	}
	return fresh.ProducerID == a.ProducerID && fresh.ProducerEpoch > a.ProducerEpoch && fresh.Start.After(a.Start)
}

func clockMs(t time.Time) string { return t.Format("15:04:05.000") }
