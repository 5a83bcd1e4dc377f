package kafkaadmin

import (
	"context"
	"errors"
	"math"
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

// describeNow says whether a row that needs a describe gets it in this
// refresh: always when budget < 0, never when it is 0 (a first poll), only
// the open ones when it is openOnly (a first poll of a million ids), else
// when it is open (an open transaction is what txnscope watches: one left
// undescribed could move on to the next unseen) or within the budget of
// others left, in id order. The rest stay pending, for the progressive
// describe.
func describeNow(open bool, budget int, left *int) bool {
	switch {
	case budget == openOnly:
		if !open || *left <= 0 {
			return false
		}
		*left--
		return true
	case budget < 0:
		return true
	case budget == 0:
		return false
	case open:
		return true
	case *left > 0:
		*left--
		return true
	}
	return false
}

// openOnly is the budget of a first poll that lists holdRowsAt ids or
// more: it describes the open ids (the first openAtMost of them), the rows
// the list shows first, and no other. The UI's describe of them instead
// filled a copy of every row, 200 MB at 2,000,000 ids, while the
// coordinators' log was first read beside it.
const (
	openOnly   = math.MinInt
	openAtMost = 50000
)

// listedOnly is an id's row as ListTransactions gives it, pending its
// describe.
func listedOnly(id string, l listed) model.Txn {
	return model.Txn{ID: id, State: l.state, ProducerID: l.pid, Coordinator: l.coord, Pending: true}
}
