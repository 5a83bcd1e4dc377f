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

// Execute carries out a, the one way the TUI and the command line abort or
// commit anything: just before every request it sends (a retry included) it re-reads
// the target and refuses unless it is still the very transaction a describes
// (model.SameTransaction, model.CheckAbortPartition), then appends the
// attempt to rec and sends. Nothing is ever sent without a record; a request
// whose answer was lost is reported as an unknown outcome, never resent.
func (c *Client) Execute(ctx context.Context, a model.Action, rec model.Recorder) model.Result {
	ctx, cancel := c.scope(ctx)
	defer cancel()
	var r model.Result
	switch {
	case rec == nil:
		r = refused("refused: there is no audit log to record it in; nothing sent")
	case a.Kind == model.ForceTerminate:
		r = c.forceTerminate(ctx, a, rec)
	case a.Kind == model.AbortPartition:
		r = c.abortPartition(ctx, a, rec)
	case a.Kind == model.Commit:
		r = c.commit(ctx, a, rec)
	default:
		r = refused("refused: unknown action %q", a.Kind)
	}
	r.Action = a
	r.At = time.Now()
	if rec != nil {
		r.Attempt = rec.ID()
		if err := rec.Done(r); err != nil {
			r.AuditErr = err.Error()
		}
	}
	return r
}

func refused(format string, args ...any) model.Result {
	return model.Result{Refused: true, Err: fmt.Sprintf(format, args...)}
}

// send appends attempt number try to rec, as wire describes it, then issues
// req once to broker, without any retry (kgo's own retries could send it
// twice). Nothing goes out when the record cannot be written or ctx is
// already done. The result is r updated with what happened to this request;
// resp is nil unless the broker answered.
func (c *Client) send(ctx context.Context, rec model.Recorder, try int, broker int32, req kmsg.Request, wire string, r model.Result) (kmsg.Response, model.Result) {
	if err := ctx.Err(); err != nil {
		if r.Sends == 0 {
			return nil, refused("refused: interrupted before sending; nothing sent")
		}
		r.Err = "interrupted before retrying; nothing more was sent"
		return nil, r
	}
	if err := rec.Sending(try, wire); err != nil {
		if r.Sends == 0 {
			return nil, refused("refused: %s; nothing sent", err)
		}
		r.Err = fmt.Sprintf("%s; the retry was not sent", err)
		return nil, r
	}
	r.Request = wire
	rctx, cancel := c.deadline(ctx)
	defer cancel()
	resp, err := c.kgo.Broker(int(broker)).Request(rctx, req)
	if err == nil {
		r.Sent, r.Sends = true, r.Sends+1
		return resp, r
	}
	if dialFailed(err) {
		r.Err = fmt.Sprintf("could not connect to broker %d, nothing sent: %s", broker, err)
		return nil, r
	}
	// Anything later (a timeout, a dropped connection, a signal) may or may
	// not have reached the broker.
	r.Sent, r.Sends, r.Unknown = true, r.Sends+1, true
	r.ErrorCode = ""
	switch {
	case ctx.Err() != nil:
		r.Err = fmt.Sprintf("interrupted while the request to broker %d was in flight", broker)
	default:
		r.Err = fmt.Sprintf("broker %d: %s", broker, errText(err))
	}
	return nil, r
}

// answered records the broker's error code in r; it reports whether the
// answer leaves the outcome open: a broker answers REQUEST_TIMED_OUT (or, for
// markers, NOT_ENOUGH_REPLICAS_AFTER_APPEND) after it may already have acted.
func answered(r *model.Result, ke error) bool {
	var e *kerr.Error
	if errors.As(ke, &e) {
		r.ErrorCode, r.Err = e.Message, e.Description
	} else {
		r.ErrorCode, r.Err = "", ke.Error()
	}
	r.Unknown = errors.Is(ke, kerr.RequestTimedOut) || errors.Is(ke, kerr.NotEnoughReplicasAfterAppend)
	return r.Unknown
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

// ownerOf returns the transaction the coordinators list for a producer id
// (nil when none does). Any coordinator not answering is an error: the owner
// might be the one we could not ask. hidden: ACLs refused the load probes,
// so no owner listed proves nothing.
func (c *Client) ownerOf(ctx context.Context, pid int64) (_ *model.Txn, hidden bool, err error) {
	list, hidden, err := c.listOwnersSeen(ctx, []int64{pid})
	if err != nil {
		return nil, false, err
	}
	var ids []string
	for id, l := range list {
		if l.pid == pid {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil, hidden, nil
	}
	var owner *model.Txn
	for id, d := range c.describeChunk(ctx, ids) {
		switch {
		case d.gone:
			continue
		case d.denied != "":
			return nil, false, fmt.Errorf("%s to re-read %s, which lists producer %d: %s (%s)", model.NoPermission, id, pid, d.denied, needDescribe)
		case d.err != "":
			return nil, false, fmt.Errorf("%s: %s", id, d.err)
		case d.txn.ProducerID != pid:
			continue
		}
		if owner == nil || d.txn.State.Open() {
			t := d.txn
			owner = &t
		}
	}
	return owner, hidden, nil
}

// ownerMayBeHidden asks afresh whether ACLs hide transactional ids from us.
func (c *Client) ownerMayBeHidden(ctx context.Context) (bool, error) {
	brokers, err := c.brokerIDs(ctx)
	if err != nil {
		return false, err
	}
	return c.idsHidden(ctx, brokers)
}
