// Package kafkaadmin is the only package that talks to Kafka: it turns the cluster
// into model values and carries out the two abort actions.
package kafkaadmin

import (
	"context"
	"time"

	"github.com/txnscope/txnscope/model"
)

// Config says where the cluster is and how long to wait for it.
type Config struct {
	Bootstrap []string
	// Timeout bounds every request.
	Timeout time.Duration
}

// Client polls one cluster. Refresh and Execute may be called from different
// goroutines, but the ui never runs two Refreshes at once.
type Client struct {
	cfg Config
}

// New connects lazily: it fails only on bad configuration, never because the
// cluster is down.
func New(cfg Config) (*Client, error) {
	panic("TODO(kafkaadmin helper)")
}

// Refresh reads the whole cluster once. prev (may be nil) is the previous
// snapshot: idle ids whose state and producer id did not change keep their
// described fields from it instead of being described again. It returns an error
// only when the cluster as a whole could not be read; per-id and per-partition
// problems land in Txn.Err and Partition.Err.
func (c *Client) Refresh(ctx context.Context, prev *model.Snapshot) (*model.Snapshot, error) {
	panic("TODO")
}

// Execute re-reads the target's state, refuses (Result.Refused) if it changed
// since a was built (model.CheckForceTerminate / model.CheckAbortPartition), and
// otherwise sends the request once, never retrying silently.
func (c *Client) Execute(ctx context.Context, a model.Action) model.Result {
	panic("TODO")
}

// Close cancels everything in flight.
func (c *Client) Close() {}
