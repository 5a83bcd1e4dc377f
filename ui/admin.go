package ui

import (
	"context"
	"time"

	"github.com/txnscope/txnscope/model"
)

// Admin is what the ui needs from the cluster; *kafkaadmin.Client implements it
// and tests use a fake.
type Admin interface {
	// Poll reads the cluster once (kafkaadmin.Client.Poll): ids it had no
	// budget to describe, all of them on a first poll, come back listed only
	// (model.Txn.Pending).
	Poll(ctx context.Context, prev *model.Snapshot) (*model.Snapshot, error)
	// Describe describes pending ids, one batch of a progressive load; it
	// fails as a whole only when the cluster could not be asked at all.
	Describe(ctx context.Context, ids []model.TxnRef) (model.Descriptions, error)
	// Execute re-reads the target before every request and records each one
	// in rec before it goes out (kafkaadmin.Client.Execute).
	Execute(ctx context.Context, a model.Action, rec model.Recorder) model.Result
	// Ping asks the cluster one light question; nil means it answers. While
	// refreshes fail it is asked every interval, so it must be cheap.
	Ping(ctx context.Context) error
	// Replay reads the coordinators' log (__transaction_state) through and
	// returns the newest limit events it still holds at or after since,
	// oldest first (kafkaadmin.Client.Replay), from when every transition is
	// there, and the records it could not read. It fails in one line where
	// the log cannot be read (no READ, no topic).
	Replay(ctx context.Context, since time.Time, limit int) (model.Replayed, error)
}
