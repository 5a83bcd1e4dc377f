package kafkaadmin

import (
	"context"
	"time"

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

// ReplayPresuming is Replay, saying whether it read the log again because
// what it presumed of the newest events did not hold; per is how many
// records it counts on for each event (presumePer).
func ReplayPresuming(c *Client, ctx context.Context, since time.Time, limit int, per int64) (model.Replayed, bool, error) {
	defer func(n int64) { presumePer = n }(presumePer)
	presumePer = per
	_, r, again, err := c.replayLog(ctx, nil, since, limit)
	return r, again, err
}
