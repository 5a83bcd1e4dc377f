package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/internal/testutil/uitest"
)

// listRows returns the state of each transaction row on a list screen: the
// lines under the column header, up to the first blank line.
func listRows(screen string) (states []string, ids []string) {
	known := []string{"Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Empty", "PrepareEpochFence"}
	lines := strings.Split(screen, "\n")
	start := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, "TRANSACTIONAL ID") })
	if start < 0 {
		return nil, nil
	}
	for _, l := range lines[start+1:] {
		f := strings.Fields(l)
		if len(f) == 0 || f[0] == "sort" { // the rows end blank, or at the status line when they fill the list
			break
		}
		i := slices.IndexFunc(f, func(x string) bool { return slices.Contains(known, x) })
		if i < 1 {
			return append(states, "unparsed: "+l), ids
		}
		states, ids = append(states, f[i]), append(ids, f[i-1])
	}
	return states, ids
}

func isOpen(state string) bool {
	switch state {
	case "Ongoing", "PrepareCommit", "PrepareAbort", "PrepareEpochFence":
		return true
	}
	return false
}

// TestTmuxDemo runs `txnscope demo` in a real terminal (tmux) and drives it
// the way an operator would, reading the screen after every key: help, the
// open-only view, the filter, the detail of the transaction pinning an LSO, a
// cancelled abort (nothing sent, nothing logged), a terminal too small, quit.
func TestTmuxDemo(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	s := uitest.StartTerm(t, 120, 35, []string{asMain + "=1", "XDG_STATE_HOME=" + state}, exe, "demo")
	auditLog := filepath.Join(state, "txnscope", "audit.log")

	s.WaitText([]string{"orders-enricher-v1", "Ongoing", "● connected"})
	// kfake keeps no coordinators' log: the history comes from polls, and
	// the header says so (and why, where it fits).
	s.WaitText([]string{"history: polls"})
	// h replays the log: there is none, and the pane says why in one line.
	s.Keys("h")
	s.WaitText([]string{"cannot replay: the cluster has no __transaction_state"})
	s.Keys("Escape")
	s.WaitText([]string{"TRANSACTIONAL ID"}, "cannot replay")

	// Help, generated from the keymap; ? and esc both close it.
	help := []string{"txnscope keys", "filter by id", "show all / open / problems", "force-terminate the transaction", "quit"}
	for _, closeKey := range []string{"?", "Escape"} {
		s.Keys("?")
		s.WaitText(help, "TRANSACTIONAL ID")
		s.Keys(closeKey)
		s.WaitText([]string{"TRANSACTIONAL ID"}, "txnscope keys")
	}

	// f: open transactions only.
	s.Keys("f")
	s.Wait("show open only with open rows only", func(scr string) bool {
		states, _ := listRows(scr)
		return strings.Contains(scr, "show open only") && len(states) > 0 && !slices.ContainsFunc(states, func(st string) bool { return !isOpen(st) })
	})

	// /reports: the long transaction alone.
	s.Keys("/")
	s.WaitText([]string{"part of a transactional.id"})
	s.Text("reports")
	s.Keys("Enter")
	s.Wait("only reports-backfill-0-1, Ongoing, under filter /reports", func(scr string) bool {
		states, ids := listRows(scr)
		return strings.Contains(scr, "filter /reports") && slices.Equal(ids, []string{"reports-backfill-0-1"}) && slices.Equal(states, []string{"Ongoing"})
	})

	// enter: its detail, with the partition whose LSO this transaction pins.
	s.Keys("Enter")
	s.Wait("the detail of reports-backfill-0-1 with reports-0 pinned by this txn", func(scr string) bool {
		if !strings.Contains(scr, " reports-backfill-0-1  Ongoing") || !strings.Contains(scr, "PARTITIONS (1)") {
			return false
		}
		for _, l := range strings.Split(scr, "\n") {
			if strings.Contains(l, "reports-") && strings.HasSuffix(strings.TrimSpace(l), "this txn") {
				return true
			}
		}
		return false
	})
	s.Keys("Escape")
	s.WaitText([]string{"TRANSACTIONAL ID", "reports-backfill-0-1", "filter /reports"}, "PARTITIONS")

	// a, then esc: the dialog, which shows when the transaction started,
	// closes and nothing is sent or logged; the audit log was opened (and
	// created) before the dialog could confirm anything.
	s.Keys("a")
	s.WaitText([]string{"FORCE-TERMINATE reports-backfill-0-1", "Ongoing since", " ago), timeout",
		"will send", "InitProducerId", "Type abort and press enter"})
	s.Keys("Escape")
	s.WaitText([]string{"abort cancelled; nothing was sent", "reports-backfill-0-1"}, "FORCE-TERMINATE")
	if b, err := os.ReadFile(auditLog); err != nil || len(b) != 0 {
		t.Errorf("a cancelled abort: audit log %s holds %q (%v), want it created and empty", auditLog, b, err)
	}
	// The state directory is the one given: the demo writes its log there.
	if _, err := os.Stat(filepath.Join(state, "txnscope", "demo.log")); err != nil {
		t.Errorf("demo log: %v", err)
	}

	// Too small a terminal says so; back to a good size, the list returns.
	s.Resize(70, 18)
	s.WaitText([]string{"terminal too small (need 80×20, have 70×18)"}, "TRANSACTIONAL ID")
	s.Resize(120, 35)
	s.WaitText([]string{"TRANSACTIONAL ID", "reports-backfill-0-1"}, "terminal too small")

	// q quits: the program ends, cleanly.
	s.Keys("q")
	if code := s.WaitExit(); code != "0" {
		t.Errorf("the program's exit status is %s, want 0; screen:\n%s", code, s.Capture())
	}
	// It left the alternate screen: the terminal is the shell's again.
	s.WaitText(nil, "TRANSACTIONAL ID", "txnscope")
	if b, err := os.ReadFile(auditLog); err != nil || len(b) != 0 {
		t.Errorf("the audit log %s after a session without aborts: %q (%v)", auditLog, b, err)
	}
}
