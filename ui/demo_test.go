package ui

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/txnscope/txnscope/internal/audit"
	"github.com/txnscope/txnscope/internal/testutil/uitest"
	"github.com/txnscope/txnscope/model"
)

// demoAdmin serves the fixture with ages that grow in real time.
type demoAdmin struct {
	base time.Time
}

func (d *demoAdmin) Refresh(ctx context.Context, prev *model.Snapshot) (*model.Snapshot, error) {
	s := uitest.Snapshot(d.base)
	s.TakenAt = time.Now()
	return s, nil
}

func (d *demoAdmin) Poll(ctx context.Context, prev *model.Snapshot) (*model.Snapshot, error) {
	return d.Refresh(ctx, prev)
}

func (d *demoAdmin) Describe(ctx context.Context, ids []model.TxnRef) (model.Descriptions, error) {
	return model.Descriptions{}, nil
}

func (d *demoAdmin) Ping(ctx context.Context) error { return nil }

func (d *demoAdmin) Replay(ctx context.Context, since time.Time, limit int) (model.Replayed, error) {
	return model.Replayed{}, errors.New("the cluster has no __transaction_state")
}

func (d *demoAdmin) Execute(ctx context.Context, a model.Action, rec model.Recorder) model.Result {
	return uitest.Record(rec, model.Result{Action: a, At: time.Now(), Sent: true, Sends: 1})
}

// TestInteractiveDemo runs the UI on the fixture in the real terminal, for a
// person to look at: go test -c -o /tmp/uitest ./ui && TXNSCOPE_UI_DEMO=1 /tmp/uitest -test.run InteractiveDemo
func TestInteractiveDemo(t *testing.T) {
	if os.Getenv("TXNSCOPE_UI_DEMO") == "" {
		t.Skip("set TXNSCOPE_UI_DEMO=1 to run the UI in this terminal")
	}
	m := New(Options{
		Admin: &demoAdmin{base: time.Now()}, Bootstrap: "127.0.0.1:9092",
		ReadOnly: os.Getenv("TXNSCOPE_UI_DEMO") == "ro", Audit: audit.New(filepath.Join(t.TempDir(), "audit.log")),
	})
	if _, err := tea.NewProgram(m).Run(); err != nil {
		t.Fatal(err)
	}
}
