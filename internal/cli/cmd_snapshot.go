package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/txnscope/txnscope/internal/escape"
	"github.com/txnscope/txnscope/internal/summary"
	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
	"github.com/txnscope/txnscope/views"
)

// snapshot reads the cluster once and prints it, as the UI would show it.
const cmdSnapshot command = "snapshot"

func runSnapshot(ctx context.Context, c config, std Stdio) error {
	stdout, stderr := std.Out, std.Err
	warnInsecure(c, stderr)
	cl, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: c.bootstrap, Timeout: c.timeout, Security: c.security})
	if err != nil {
		return usageError{err.Error()}
	}
	defer cl.Close()
	s, err := cl.Refresh(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", summary.List(c.bootstrap, ",", "bootstrap servers"), err)
	}
	// JSON carries it as "hidden"; the table has no place for it.
	if s.Hidden != "" && c.output != "json" {
		fmt.Fprintf(stderr, "txnscope: note: %s\n", escape.Line(s.Hidden))
	}
	// One poll sees no events; the baseline counts each id's latest outcome, the
	// only one the coordinator keeps.
	h := model.NewHistory(1)
	h.Baseline(s)
	now := s.TakenAt
	if now.IsZero() {
		now = time.Now()
	}
	q := model.Query{CheckpointInterval: c.checkpointInterval}
	if err := writeSnapshot(stdout, c.output, s, h, q, now); err != nil {
		return fmt.Errorf("writing the snapshot: %w", err)
	}
	return nil
}

// writeSnapshot prints s as output ("json" or the table).
func writeSnapshot(w io.Writer, output string, s *model.Snapshot, h *model.History, q model.Query, now time.Time) error {
	if output == "json" {
		return writeJSON(w, model.ExportQuery(s, h, q, now))
	}
	return views.PlainTableQuery(w, s, h, q, now)
}
