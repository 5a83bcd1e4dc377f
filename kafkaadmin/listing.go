package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// listing is every id the brokers listed, in the order they listed them
// (broker after broker), duplicates included: kfake lists every id on every
// broker. A refresh pairs it with the previous snapshot in that order
// (pairWithPrev), which a broker keeps from one listing to the next.
type listing struct {
	ids []string // views into one block per response: what outlives the refresh is copied, not to hold the block
	ls  []listed
}

func (l *listing) len() int { return len(l.ids) }

// listAll asks every broker of known for the transactions it coordinates
// (only those of pids when not nil), all at once. failed maps the brokers
// that did not answer to why; err is set only when none answered. 500,000
// ids come in one slice, with no string allocated per id (listResp).
func (c *Client) listAll(ctx context.Context, pids []int64, known []int32) (out listing, failed map[int32]error, err error) {
	rctx, cancel := c.deadline(ctx)
	defer cancel()
	resps := make([]*listResp, len(known))
	errs := make([]error, len(known))
	var wg sync.WaitGroup
	for i, b := range known {
		wg.Go(func() {
			if errs[i] = silentErr(ctx, b); errs[i] != nil {
				return
			}
			req := &listReq{kmsg.NewPtrListTransactionsRequest()}
			req.ProducerIDFilters = pids
			r, err := c.kgo.Broker(int(b)).RetriableRequest(rctx, req)
			noteSilent(ctx, rctx, b, err)
			if err == nil {
				resps[i] = r.(*listResp)
				err = kerr.ErrorForCode(resps[i].ErrorCode)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	failed = make(map[int32]error)
	var lastErr error
	for i, b := range known {
		if errs[i] != nil {
			failed[b], lastErr = errs[i], errs[i]
			continue
		}
		got := resps[i].got
		for k := range got.ls {
			got.ls[k].coord = b
		}
		if out.len() == 0 { // one broker's answer, or the first: no copy
			out = got
			continue
		}
		out.ids, out.ls = append(out.ids, got.ids...), append(out.ls, got.ls...)
	}
	if len(known) == 0 {
		return listing{}, nil, errors.New("ListTransactions: no broker to ask")
	}
	if len(failed) == len(known) {
		if ctxErr := rctx.Err(); ctxErr != nil && lastErr == nil {
			lastErr = ctxErr
		}
		return listing{}, failed, fmt.Errorf("ListTransactions failed on every broker: %w", lastErr)
	}
	return out, failed, nil
}

// listReq is a ListTransactionsRequest whose response is a listResp.
type listReq struct {
	*kmsg.ListTransactionsRequest
}

func (r *listReq) ResponseKind() kmsg.Response {
	resp := &listResp{}
	resp.Default()
	resp.Version = r.Version
	return resp
}

// listResp is a ListTransactions response read by readListing: its
// TransactionStates stay empty, the ids are in got.
type listResp struct {
	kmsg.ListTransactionsResponse
	got listing
}

func (r *listResp) ReadFrom(src []byte) error {
	got, throttle, code, err := readListing(src)
	if err != nil {
		return err
	}
	r.got, r.ThrottleMillis, r.ErrorCode = got, throttle, code
	return nil
}
