package ui

import (
	"context"

	"github.com/txnscope/txnscope/model"
)

// Admin is what the ui needs from the cluster; *kafkaadmin.Client implements it
// and tests use a fake.
type Admin interface {
	Refresh(ctx context.Context, prev *model.Snapshot) (*model.Snapshot, error)
	// Execute re-reads the target before every request and records each one
	// in rec before it goes out (kafkaadmin.Client.Execute).
	Execute(ctx context.Context, a model.Action, rec model.Recorder) model.Result
	// Ping asks the cluster one light question; nil means it answers. While
	// refreshes fail it is asked every interval, so it must be cheap.
	Ping(ctx context.Context) error
}
