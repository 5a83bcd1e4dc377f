package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// tmuxPoll and tmuxPatience bound every wait on the screen: the program draws
// when it is ready, so the test polls for content instead of sleeping.
const (
	tmuxPoll     = 200 * time.Millisecond
	tmuxPatience = 30 * time.Second
)

// tmuxSession is the real program running in a detached tmux session on a
// private tmux server, so nothing of a developer's own tmux is touched.
type tmuxSession struct {
	t      *testing.T
	socket string
	target string
	last   string // the last capture, for failure messages
}

func (s *tmuxSession) tmux(args ...string) (string, error) {
	cmd := exec.Command("tmux", append([]string{"-L", s.socket}, args...)...)
	// A test run from inside tmux must still talk to the private server only.
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "TMUX=") })
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("tmux %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

func (s *tmuxSession) must(args ...string) string {
	s.t.Helper()
	out, err := s.tmux(args...)
	if err != nil {
		s.t.Fatal(err)
	}
	return out
}

// keys sends tmux key names (Enter, Escape, ?) one after the other.
func (s *tmuxSession) keys(keys ...string) {
	s.t.Helper()
	s.must(append([]string{"send-keys", "-t", s.target}, keys...)...)
}

// text types s literally.
func (s *tmuxSession) text(str string) {
	s.t.Helper()
	s.must("send-keys", "-t", s.target, "-l", str)
}

func (s *tmuxSession) capture() string {
	s.t.Helper()
	s.last = s.must("capture-pane", "-p", "-t", s.target)
	return s.last
}

// waitScreen polls the pane until ok accepts it and returns that screen.
func (s *tmuxSession) waitScreen(what string, ok func(screen string) bool) string {
	s.t.Helper()
	deadline := time.Now().Add(tmuxPatience)
	for {
		if scr := s.capture(); ok(scr) {
			return scr
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("after %s the screen does not show %s; last capture:\n%s", tmuxPatience, what, s.last)
		}
		time.Sleep(tmuxPoll)
	}
}

// waitText waits until the screen contains every one of texts and none of absent.
func (s *tmuxSession) waitText(texts []string, absent ...string) string {
	s.t.Helper()
	what := fmt.Sprintf("%q", texts)
	if len(absent) > 0 {
		what += fmt.Sprintf(" without %q", absent)
	}
	return s.waitScreen(what, func(scr string) bool {
		for _, x := range texts {
			if !strings.Contains(scr, x) {
				return false
			}
		}
		for _, x := range absent {
			if strings.Contains(scr, x) {
				return false
			}
		}
		return true
	})
}

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
		if len(f) == 0 {
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
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux is not installed; CI must run this test")
		}
		t.Skip("tmux is not installed")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	dir := t.TempDir()
	conf := filepath.Join(dir, "tmux.conf")
	// No status line, so the pane is the whole window; the pane stays after
	// the program ends, so a failure can still show the screen.
	if err := os.WriteFile(conf, []byte("set -g status off\nset -g remain-on-exit on\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &tmuxSession{t: t, socket: fmt.Sprintf("txnscope-test-%d-%d", os.Getpid(), time.Now().UnixNano()), target: "demo"}

	quote := func(v string) string { return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'" }
	// The shell around the program records its exit status. tmux's own
	// #{pane_dead_status} is not dependable: on Debian's tmux 3.3a a pane's
	// SIGCHLD can arrive while libutempter has SIGCHLD reset to its default
	// (it forks its helper when the pane's terminal closes), and then tmux
	// never reaps the program and never learns its status.
	exitFile := filepath.Join(dir, "exit-status")
	program := strings.Join([]string{
		"env -u TMUX TERM=xterm-256color",
		asMain + "=1",
		"XDG_STATE_HOME=" + quote(state),
		quote(exe), "demo;",
		"echo $? >", quote(exitFile + ".tmp"), "&& mv", quote(exitFile + ".tmp"), quote(exitFile),
	}, " ")
	var socketPath string
	t.Cleanup(func() {
		s.tmux("kill-server")
		if socketPath != "" {
			os.Remove(socketPath) // tmux leaves it behind
		}
	})
	s.must("-f", conf, "new-session", "-d", "-x", "120", "-y", "35", "-s", s.target, program)
	socketPath = strings.TrimSpace(s.must("display-message", "-p", "#{socket_path}"))
	auditLog := filepath.Join(state, "txnscope", "audit.log")

	s.waitText([]string{"orders-enricher-v1", "Ongoing", "● connected"})

	// Help, generated from the keymap; ? and esc both close it.
	help := []string{"txnscope keys", "filter by id", "show all / open / problems", "force-terminate the transaction", "quit"}
	for _, closeKey := range []string{"?", "Escape"} {
		s.keys("?")
		s.waitText(help, "TRANSACTIONAL ID")
		s.keys(closeKey)
		s.waitText([]string{"TRANSACTIONAL ID"}, "txnscope keys")
	}

	// f: open transactions only.
	s.keys("f")
	s.waitScreen("show open only with open rows only", func(scr string) bool {
		states, _ := listRows(scr)
		return strings.Contains(scr, "show open only") && len(states) > 0 && !slices.ContainsFunc(states, func(st string) bool { return !isOpen(st) })
	})

	// /reports: the long transaction alone.
	s.keys("/")
	s.waitText([]string{"part of a transactional.id"})
	s.text("reports")
	s.keys("Enter")
	s.waitScreen("only reports-backfill-0-1, Ongoing, under filter /reports", func(scr string) bool {
		states, ids := listRows(scr)
		return strings.Contains(scr, "filter /reports") && slices.Equal(ids, []string{"reports-backfill-0-1"}) && slices.Equal(states, []string{"Ongoing"})
	})

	// enter: its detail, with the partition whose LSO this transaction pins.
	s.keys("Enter")
	s.waitScreen("the detail of reports-backfill-0-1 with reports-0 pinned by this txn", func(scr string) bool {
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
	s.keys("Escape")
	s.waitText([]string{"TRANSACTIONAL ID", "reports-backfill-0-1", "filter /reports"}, "PARTITIONS")

	// a, then esc: the dialog closes and nothing is sent or logged.
	s.keys("a")
	s.waitText([]string{"FORCE-TERMINATE reports-backfill-0-1", "will send", "InitProducerId", "Type abort and press enter"})
	s.keys("Escape")
	s.waitText([]string{"abort cancelled; nothing was sent", "reports-backfill-0-1"}, "FORCE-TERMINATE")
	if _, err := os.Stat(auditLog); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a cancelled abort touched the audit log %s: %v", auditLog, err)
	}
	// The state directory is the one given: the demo writes its log there.
	if _, err := os.Stat(filepath.Join(state, "txnscope", "demo.log")); err != nil {
		t.Errorf("demo log: %v", err)
	}

	// Too small a terminal says so; back to a good size, the list returns.
	s.must("resize-window", "-t", s.target, "-x", "70", "-y", "18")
	s.waitText([]string{"terminal too small (need 80×20, have 70×18)"}, "TRANSACTIONAL ID")
	s.must("resize-window", "-t", s.target, "-x", "120", "-y", "35")
	s.waitText([]string{"TRANSACTIONAL ID", "reports-backfill-0-1"}, "terminal too small")

	// q quits: the program ends, cleanly.
	s.keys("q")
	s.waitScreen("the program gone after q", func(string) bool {
		_, err := os.Stat(exitFile)
		return err == nil
	})
	if b, err := os.ReadFile(exitFile); err != nil || strings.TrimSpace(string(b)) != "0" {
		t.Errorf("the program's exit status is %q (%v), want 0; screen:\n%s", b, err, s.capture())
	}
	// It left the alternate screen: the terminal is the shell's again.
	s.waitText(nil, "TRANSACTIONAL ID", "txnscope")
	if _, err := os.Stat(auditLog); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the audit log %s exists after a session without aborts: %v", auditLog, err)
	}
}
