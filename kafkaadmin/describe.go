package kafkaadmin

import (
	"context"
	"errors"
	"sort"
	"time"

	"github.com/txnscope/txnscope/model"
)

// Describe describes ids (rows a Poll left pending) on their coordinators: a
// progressive load calls it batch after batch, and model.Fill puts the answers
// into the snapshot. Every id comes back described, with its error, or in
// Gone. It fails as a whole when ctx ends or when no coordinator answered for
// any id (the cluster went away: the TUI shows it disconnected rather than
// every row broken); one coordinator that does not answer leaves its error on
// its ids.
func (c *Client) Describe(ctx context.Context, ids []string) (model.Descriptions, error) {
	ctx, cancel := c.scope(ctx)
	defer cancel()
	sorted := append([]string(nil), ids...)
	sort.Strings(sorted)
	desc := c.describeTxns(ctx, sorted)
	if err := ctx.Err(); err != nil {
		return model.Descriptions{}, err
	}
	out := model.Descriptions{At: time.Now(), Txns: make([]model.Txn, 0, len(sorted))}
	answered := false
	var why string
	for _, id := range sorted {
		d := desc[id]
		answered = answered || d.gone || d.txn.Described || d.denied != ""
		switch {
		case d.gone:
			out.Gone = append(out.Gone, id)
		case d.txn.Described:
			out.Txns = append(out.Txns, d.txn)
		default:
			out.Txns = append(out.Txns, model.Txn{ID: id, Err: d.err})
			why = d.err
		}
	}
	if !answered && len(sorted) > 0 {
		// Said as a failed refresh says it: on screen this is the cluster gone.
		return model.Descriptions{}, errors.New("cannot reach the cluster: DescribeTransactions: no coordinator answered: " + why)
	}
	return out, nil
}

// withinBudget picks the ids to describe now: all of them when budget < 0,
// none when it is 0 (a first poll), otherwise every open one (an open
// transaction is what txnscope watches: one left undescribed could move on to
// the next unseen) and at most budget of the others, in id order. later are
// the ones left for the progressive describe.
func withinBudget(ask []string, list map[string]listed, budget int) (now []string, later deferred) {
	switch {
	case budget < 0:
		return ask, deferred{}
	case budget == 0: // a first poll: 500,000 ids neither sorted nor put in a set
		return nil, deferred{all: true}
	}
	later = deferred{ids: make(map[string]bool)}
	left := budget
	sort.Strings(ask)
	for _, id := range ask {
		switch {
		case budget > 0 && list[id].state.Open():
			now = append(now, id)
		case left > 0:
			now = append(now, id)
			left--
		default:
			later.ids[id] = true
		}
	}
	return now, later
}

// deferred are the ids left pending for Describe: all of the ones asked, or
// those in ids.
type deferred struct {
	all bool
	ids map[string]bool
}

func (d deferred) has(id string) bool { return d.all || d.ids[id] }

// listedOnly is an id's row as ListTransactions gives it, pending its
// describe.
func listedOnly(id string, l listed) model.Txn {
	return model.Txn{ID: id, State: l.state, ProducerID: l.pid, Coordinator: l.coord, Pending: true}
}
