package ui

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/txnscope/txnscope/internal/audit"
	"github.com/txnscope/txnscope/internal/testutil/uitest"
)

// TestProgram runs the UI in a real Bubble Tea program (its own goroutines,
// timers and renderer) against the fake cluster: list → abort → confirm →
// outcome. The same steps against kfake live with main's end-to-end tests.
func TestProgram(t *testing.T) {
	admin := &uitest.Admin{}
	admin.Push(uitest.Snapshot(time.Now()))
	log := filepath.Join(t.TempDir(), "audit.log")
	m := New(Options{Admin: admin, Bootstrap: "127.0.0.1:9092", Refresh: 50 * time.Millisecond, Audit: audit.New(log)})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 35))
	wait := func(s string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(s)) },
			teatest.WithDuration(5*time.Second))
	}
	wait("crashed-job-0-7")
	tm.Send(tea.KeyPressMsg{Code: 'a', Text: "a"})
	wait("FORCE-TERMINATE")
	tm.Type("abort")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	wait("accepted")
	tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)

	if got := admin.Executed(); len(got) != 1 || got[0].TransactionalID != "crashed-job-0-7" {
		t.Errorf("executed %+v, want one force-terminate of crashed-job-0-7", got)
	}
	if !strings.Contains(final.status, "accepted") {
		t.Errorf("status %q", final.status)
	}
	if admin.Refreshes() < 2 {
		t.Errorf("the program refreshed %d times", admin.Refreshes())
	}
	if final.ctx.Err() == nil {
		t.Errorf("quitting did not cancel the context")
	}
}
