package cli

import (
	"context"
	"time"

	"github.com/txnscope/txnscope/internal/flinkrest"
	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// readFlink reads every --flink JobManager once, each within --timeout,
// and every --flink-checkpoints directory (nil without either).
func readFlink(ctx context.Context, c config) *model.FlinkView {
	if len(c.flink.Clients) == 0 && len(c.flink.Retained) == 0 {
		return nil
	}
	return flinkrest.Read(ctx, c.flink, c.timeout)
}

// flinkReader reads Flink afresh, for the re-check before every request.
func flinkReader(c config) model.ReadFlink {
	return func(ctx context.Context) *model.FlinkView { return readFlink(ctx, c) }
}

// reading is what commit and resolve plan on: the cluster refreshed and
// Flink read beside it (not after it).
func reading(ctx context.Context, cl *kafkaadmin.Client, c config) (model.Reading, error) {
	flink := make(chan *model.FlinkView, 1)
	go func() { flink <- readFlink(ctx, c) }()
	s, err := cl.Refresh(ctx, nil)
	view := <-flink
	return model.Reading{Snap: s, Flink: view, Now: time.Now()}, err
}
