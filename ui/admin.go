package ui

import (
	"context"

	"github.com/txnscope/txnscope/model"
)

// Admin is what the ui needs from the cluster; *kafkaadmin.Client implements it
// and tests use a fake.
type Admin interface {
	Refresh(ctx context.Context, prev *model.Snapshot) (*model.Snapshot, error)
	Execute(ctx context.Context, a model.Action) model.Result
}
