package kafkaadmin

import (
	"context"

	"github.com/txnscope/txnscope/model"
)

// SetPollBudget lets a test on a small cluster see Poll's bound at work.
func SetPollBudget(c *Client, n int) { c.budget = n }

// ConfirmLogOwners lets a test hand Refresh's checks of the owners a log
// gave (then of the ones it left without) a snapshot as a stale log would
// have made it.
func ConfirmLogOwners(c *Client, ctx context.Context, s *model.Snapshot) {
	c.confirmLogOwners(ctx, s)
	c.vouchForOwners(ctx, s)
}
