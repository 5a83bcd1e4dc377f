package kafkaadmin

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/txnscope/txnscope/model"
)

// A refresh does not ask again a broker that let one of its requests run
// out the timeout: one silent node of three (SIGSTOP: its sockets accept,
// nothing answers) made every step that asks it wait out --timeout in turn
// (the listing, the describes, the partitions' offsets: about 3× --timeout
// a refresh, TestCluster3PausedBroker). What it would have answered is then
// missing from the refresh as if it had timed out again, and said so.

type silentKey struct{}

type silentNodes struct {
	mu    sync.Mutex
	nodes map[int32]error
}

// withSilentNodes gives ctx, one refresh's, its own memory of silent brokers.
func withSilentNodes(ctx context.Context) context.Context {
	return context.WithValue(ctx, silentKey{}, &silentNodes{nodes: map[int32]error{}})
}

// errSilent is why a request was not sent: the broker did not answer an
// earlier one of the same refresh. It is a deadline error, so that it reads
// and counts as one.
type errSilent struct{}

func (errSilent) Error() string {
	return "no answer within the timeout (earlier in this refresh)"
}
func (errSilent) Unwrap() error { return context.DeadlineExceeded }

// silentErr is non-nil when this refresh already waited out broker b.
func silentErr(ctx context.Context, b int32) error {
	h, _ := ctx.Value(silentKey{}).(*silentNodes)
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.nodes[b]
}

// anySilent reports whether this refresh has waited out any broker.
func anySilent(ctx context.Context) bool {
	h, _ := ctx.Value(silentKey{}).(*silentNodes)
	if h == nil {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.nodes) > 0
}

// noteSilent remembers b when its request, under req (the request's own
// deadline, from deadline) within ctx, ran out of time, or failed with err
// for want of a connection, and the refresh itself did not end. A
// connection that died under a request is a broker that hangs as often as
// one that went away: kgo cuts a connection when a request on it times out,
// failing the others in flight on it early, so they would not wait it out.
func noteSilent(ctx, req context.Context, b int32, err error) {
	h, _ := ctx.Value(silentKey{}).(*silentNodes)
	// b < 0: kgo found no broker for a shard (it names none).
	if h == nil || b < 0 || ctx.Err() != nil {
		return
	}
	var why error
	switch {
	case errors.Is(req.Err(), context.DeadlineExceeded):
		why = errSilent{}
	case connFailed(err):
		why = errCut{cause: err}
	default:
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.nodes[b] == nil {
		h.nodes[b] = why
	}
}

// connFailed reports an error of the connection, not of Kafka or of a
// context.
func connFailed(err error) bool {
	var ke *kerr.Error
	return err != nil && !errors.As(err, &ke) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// errCut is errSilent for a broker whose connection failed earlier in the
// refresh; cause is how it failed, for a refresh that fails as a whole.
type errCut struct{ cause error }

func (errCut) Error() string {
	return "no answer (its connection failed earlier in this refresh)"
}
func (errCut) Unwrap() error { return context.DeadlineExceeded }

// noteSilentShards is noteSilent for each shard of a sharded request.
func noteSilentShards(ctx, req context.Context, shards []kgo.ResponseShard) {
	for _, sh := range shards {
		if sh.Err != nil {
			noteSilent(ctx, req, sh.Meta.NodeID, sh.Err)
		}
	}
}

// goneFor is how long a broker that left the metadata is still named: a
// node stopped or fenced by the controller (hung past its session timeout)
// is what a rolling restart or a hang looks like from here, and a broker
// removed for good stops being reported after it.
const goneFor = 10 * time.Minute

// brokersGone records brokers, this refresh's metadata, and returns the
// brokers seen within goneFor that it lacks.
func (c *Client) brokersGone(brokers []int32, now time.Time) map[int32]error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[int32]time.Time{}
	}
	for _, b := range brokers {
		c.seen[b] = now
	}
	var out map[int32]error
	for b, at := range c.seen {
		switch {
		case now.Sub(at) > goneFor:
			delete(c.seen, b)
		case at != now:
			if out == nil {
				out = map[int32]error{}
			}
			out[b] = errGone
		}
	}
	return out
}

var errGone = errors.New("not in the cluster's metadata (stopped, or fenced by the controller)")

// silentBrokers are the brokers this refresh waited out, and the ones whose
// listing failed, sorted by id.
func silentBrokers(ctx context.Context, failed map[int32]error) []model.BrokerError {
	why := map[int32]string{}
	for b, err := range failed {
		why[b] = errText(err)
	}
	if h, _ := ctx.Value(silentKey{}).(*silentNodes); h != nil {
		h.mu.Lock()
		for b, err := range h.nodes {
			if _, ok := why[b]; ok {
				continue
			}
			why[b] = errText(context.DeadlineExceeded)
			if errors.As(err, new(errCut)) {
				why[b] = "its connection failed"
			}
		}
		h.mu.Unlock()
	}
	out := make([]model.BrokerError, 0, len(why))
	for b, w := range why {
		out = append(out, model.BrokerError{ID: b, Err: w})
	}
	slices.SortFunc(out, func(a, b model.BrokerError) int { return int(a.ID - b.ID) })
	return out
}
