package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/internal/testutil/uitest"
)

// tuiOnKfake runs the real program's TUI on bootstrap in a terminal (tmux) of
// width×height; env goes in front of it (TERM=dumb, say), pre before the
// program itself (env -u TERM, say).
func tuiOnKfake(t *testing.T, width, height int, env, pre []string, args ...string) *uitest.Term {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env = append([]string{asMain + "=1", "XDG_STATE_HOME=" + t.TempDir()}, env...)
	argv := append(append(pre, exe), args...)
	return uitest.StartTerm(t, width, height, env, argv...)
}

// rowWith is the list row holding every one of parts, or "": a line under
// the column titles (the header above names ids too).
func rowWith(screen string, parts ...string) string {
	_, rows, ok := strings.Cut(screen, "TRANSACTIONAL ID")
	if !ok {
		return ""
	}
	for _, l := range strings.Split(rows, "\n")[1:] {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(l, p)
		}
		if all {
			return l
		}
	}
	return ""
}

// TestTmuxTooSmallActsOnNothing: with the terminal too small, a, abort and
// enter (which at full size open and confirm a force-terminate) send nothing:
// back at full size there is no dialog, the transaction is still Ongoing and
// the audit log is empty.
func TestTmuxTooSmallActsOnNothing(t *testing.T) {
	quickExit(t)
	_, bs := kafkatest.NewCluster(t)
	b := strings.Join(bs, ",")
	kafkatest.OpenTxn(t, bs, "stuck-0-1", "orders", time.Minute)
	auditLog := filepath.Join(t.TempDir(), "audit.log")
	s := tuiOnKfake(t, 70, 18, nil, nil, "-b", b, "--refresh", "500ms", "--audit-log", auditLog)

	s.WaitText([]string{"terminal too small (need 80×20, have 70×18)"})
	// Let the list load where it can be seen: one row, under the cursor.
	s.Resize(120, 35)
	s.Wait("stuck-0-1 Ongoing", func(scr string) bool { return rowWith(scr, "stuck-0-1", "Ongoing") != "" })
	s.Resize(70, 18)
	s.WaitText([]string{"terminal too small"}, "stuck-0-1")
	s.Keys("a")
	s.Text("abort")
	s.Keys("Enter")
	s.Resize(120, 35)
	scr := s.WaitText([]string{"TRANSACTIONAL ID", "stuck-0-1"}, "terminal too small")
	if strings.Contains(scr, "FORCE-TERMINATE") || strings.Contains(scr, "sent") {
		t.Errorf("keys typed behind the too-small message acted:\n%s", scr)
	}
	if r := runProgram(t, "describe", "-b", b, "--transactional-id", "stuck-0-1"); !strings.Contains(r.stdout, "Ongoing") {
		t.Errorf("after the keys: %s %s", r.stdout, r.stderr)
	}
	if a, err := os.ReadFile(auditLog); err == nil && len(a) > 0 {
		t.Errorf("the audit log has lines: %s", a)
	}
	// The same key at full size does open the dialog: what was tested above is the gate.
	s.Keys("a")
	s.WaitText([]string{"FORCE-TERMINATE stuck-0-1"})
	s.Keys("Escape")
	s.WaitText([]string{"nothing was sent"})
	s.Keys("q")
	if code := s.WaitExit(); code != "0" {
		t.Errorf("exit status %s", code)
	}

}

// TestTmuxCursorWithoutColour: under TERM=dumb, and with no TERM at all,
// every attribute is stripped; the selected row still shows, marked >, and
// moves with j.
func TestTmuxCursorWithoutColour(t *testing.T) {
	quickExit(t)
	_, bs := kafkatest.NewCluster(t)
	b := strings.Join(bs, ",")
	kafkatest.OpenTxn(t, bs, "first-0-1", "orders", time.Minute)
	kafkatest.OpenTxn(t, bs, "second-0-1", "orders", time.Minute)
	for _, c := range []struct {
		name     string
		env, pre []string
	}{
		{"TERM=dumb", []string{"TERM=dumb"}, nil},
		{"no TERM", nil, []string{"env", "-u", "TERM"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := tuiOnKfake(t, 120, 35, c.env, c.pre, "-b", b, "--refresh", "500ms", "--read-only")
			// s sorts by id: first-0-1 on top, under the cursor.
			s.WaitText([]string{"first-0-1", "second-0-1"})
			s.Keys("s", "s")
			marked := func(sel, other string) func(string) bool {
				return func(scr string) bool {
					return strings.Contains(scr, "sort id") && strings.HasPrefix(rowWith(scr, sel, "Ongoing"), ">") &&
						strings.HasPrefix(rowWith(scr, other, "Ongoing"), " ")
				}
			}
			s.Wait("first-0-1 marked >", marked("first-0-1", "second-0-1"))
			s.Keys("j")
			s.Wait("second-0-1 marked >", marked("second-0-1", "first-0-1"))
			s.Keys("q")
			if code := s.WaitExit(); code != "0" {
				t.Errorf("exit status %s", code)
			}
		})
	}
}

// TestTmuxHostileID: a producer whose transactional id sets the window title,
// clears the screen and forges a row shows written out on one row, with its
// state; the window title is txnscope's, the header stays on screen.
func TestTmuxHostileID(t *testing.T) {
	quickExit(t)
	_, bs := kafkatest.NewCluster(t)
	b := strings.Join(bs, ",")
	const id = "job-\x1b]0;pwned\x07-\x1b[2J-x\r\nforged-row"
	kafkatest.OpenTxn(t, bs, id, "orders", time.Minute)
	s := tuiOnKfake(t, 160, 30, nil, nil, "-b", b, "--refresh", "500ms", "--read-only")
	shown := `job-\x1b]0;pwned\x07-\x1b[2J-x\r\nforged-row`
	scr := s.Wait("the id written out on its row", func(scr string) bool { return rowWith(scr, shown, "Ongoing") != "" })
	if !strings.HasPrefix(scr, "txnscope") || !strings.Contains(scr, "TRANSACTIONAL ID") {
		t.Errorf("the header or the column titles are gone:\n%s", scr)
	}
	if rowWith(scr, "forged-row") != rowWith(scr, shown, "Ongoing") {
		t.Errorf("the id takes more than its row:\n%s", scr)
	}
	// Seconds later (the row redrawn on every refresh), still so.
	scr = s.Wait("the row 3s old", func(scr string) bool { return rowWith(scr, shown, "Ongoing", " 3s ") != "" })
	if !strings.HasPrefix(scr, "txnscope") || !strings.Contains(scr, "TRANSACTIONAL ID") {
		t.Errorf("after a few refreshes:\n%s", scr)
	}
	if title := s.Must("display-message", "-p", "-t", "term", "#{pane_title}"); strings.Contains(title, "pwned") {
		t.Errorf("the window title was set by the id: %q", title)
	}
	s.Keys("q")
	if code := s.WaitExit(); code != "0" {
		t.Errorf("exit status %s", code)
	}

	// The one-shot commands print to the same terminal.
	for _, args := range [][]string{{"list"}, {"describe", "--transactional-id", id}} {
		s := tuiOnKfake(t, 160, 10, nil, nil, append(args, "-b", b)...)
		if code := s.WaitExit(); code != "0" {
			t.Errorf("%s: exit status %s", args[0], code)
		}
		// All of it, scrollback included, wrapped lines joined.
		scr := s.Must("capture-pane", "-p", "-J", "-S", "-", "-t", "term")
		var lines []string
		for _, l := range strings.Split(scr, "\n") {
			if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "Pane is dead") {
				lines = append(lines, l)
			}
		}
		if len(lines) != 2 || !strings.Contains(lines[0], "TransactionalId") || !strings.Contains(lines[1], shown) ||
			!strings.Contains(lines[1], "Ongoing") {
			t.Errorf("%s: want the header and one row with the id written out:\n%s", args[0], scr)
		}
		if title := s.Must("display-message", "-p", "-t", "term", "#{pane_title}"); strings.Contains(title, "pwned") {
			t.Errorf("%s set the window title: %q", args[0], title)
		}
	}
}
