package kafkaadmin

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/txnscope/txnscope/model"
)

// Describe describes ids (rows a Poll left pending) on their coordinators (the
// brokers that listed them, when they still are): a
// progressive load calls it batch after batch, and model.Fill puts the answers
// into the snapshot. Every id comes back described, with its error, or in
// Gone. It fails as a whole when ctx ends or when no coordinator answered for
// any id (the cluster went away: the TUI shows it disconnected rather than
// every row broken); one coordinator that does not answer leaves its error on
// its ids.
func (c *Client) Describe(ctx context.Context, ids []model.TxnRef) (model.Descriptions, error) {
	ctx, cancel := c.scope(ctx)
	defer cancel()
	refs := make([]txnRef, len(ids))
	for i, r := range ids {
		refs[i] = txnRef{id: r.ID, coord: r.Coordinator}
	}
	slices.SortFunc(refs, func(a, b txnRef) int { return strings.Compare(a.id, b.id) })
	desc := c.describeTxns(ctx, refs)
	if err := ctx.Err(); err != nil {
		return model.Descriptions{}, err
	}
	out := model.Descriptions{At: time.Now(), Txns: make([]model.Txn, 0, len(refs))}
	answered := false
	var why string
	for i, r := range refs {
		if i > 0 && refs[i-1].id == r.id {
			continue
		}
		id := r.id
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
	if !answered && len(refs) > 0 {
		// Said as a failed refresh says it: on screen this is the cluster gone.
		return model.Descriptions{}, errors.New("cannot reach the cluster: DescribeTransactions: no coordinator answered: " + why)
	}
	return out, nil
}

// choose marks the rows that need a describe (needsDescribe) and picks
// those to describe now, as positions in rows: all of them when budget < 0,
// none when it is 0 (a first poll), otherwise every open one (an open
// transaction is what txnscope watches: one left undescribed could move on to
// the next unseen) and at most budget of the others, in id order. The rest
// are marked later, for the progressive describe.
func choose(rows []row, budget int) (now []int) {
	left := budget
	for i := range rows {
		r := &rows[i]
		if r.asked = needsDescribe(r.l, r.prev, budget < 0); !r.asked {
			continue
		}
		switch {
		case budget < 0:
			now = append(now, i)
		case budget > 0 && r.l.state.Open():
			now = append(now, i)
		case left > 0:
			now = append(now, i)
			left--
		default:
			r.later = true
		}
	}
	return now
}

// listedOnly is an id's row as ListTransactions gives it, pending its
// describe.
func listedOnly(id string, l listed) model.Txn {
	return model.Txn{ID: id, State: l.state, ProducerID: l.pid, Coordinator: l.coord, Pending: true}
}
