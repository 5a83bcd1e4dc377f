package uitest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Every wait on a Term's screen polls at TermPoll for at most TermPatience: the
// program draws when it is ready, so tests wait for content, never sleep.
const (
	TermPoll     = 200 * time.Millisecond
	TermPatience = 30 * time.Second
)

// Term is a program running in a detached session of a private tmux server, so
// nothing of a developer's own tmux is touched. The server is killed when the
// test ends.
type Term struct {
	t        *testing.T
	socket   string
	target   string
	exitFile string
	last     string // the last capture, for failure messages
}

// StartTerm runs argv (with env in front of it) in a width×height pane. Without
// tmux the test is skipped, or fails under CI=true.
func StartTerm(t *testing.T, width, height int, env []string, argv ...string) *Term {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux is not installed; CI must run the terminal tests")
		}
		t.Skip("tmux is not installed")
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "tmux.conf")
	// No status line, so the pane is the whole window; the pane stays after the
	// program ends, so a failure can still show the screen.
	if err := os.WriteFile(conf, []byte("set -g status off\nset -g remain-on-exit on\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &Term{t: t, socket: fmt.Sprintf("txnscope-test-%d-%08x", os.Getpid(), rand.Uint32()), target: "term",
		exitFile: filepath.Join(dir, "exit-status")}

	quote := func(v string) string { return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'" }
	words := []string{"env -u TMUX TERM=xterm-256color"}
	for _, e := range env {
		words = append(words, quote(e))
	}
	for _, a := range argv {
		words = append(words, quote(a))
	}
	// The shell around the program records its exit status. tmux's own
	// #{pane_dead_status} is not dependable: on Debian's tmux 3.3a a pane's
	// SIGCHLD can arrive while libutempter has SIGCHLD reset to its default (it
	// forks its helper when the pane's terminal closes), and then tmux never
	// reaps the program and never learns its status.
	program := strings.Join(words, " ") + "; echo $? > " + quote(s.exitFile+".tmp") +
		" && mv " + quote(s.exitFile+".tmp") + " " + quote(s.exitFile)

	var socketPath string
	t.Cleanup(func() {
		_, _ = s.Tmux("kill-server")
		if socketPath != "" {
			os.Remove(socketPath) // tmux leaves it behind
		}
	})
	s.Must("-f", conf, "new-session", "-d", "-x", fmt.Sprint(width), "-y", fmt.Sprint(height), "-s", s.target, program)
	socketPath = strings.TrimSpace(s.Must("display-message", "-p", "#{socket_path}"))
	return s
}

// Tmux runs a tmux command on the private server.
func (s *Term) Tmux(args ...string) (string, error) {
	cmd := exec.Command("tmux", append([]string{"-L", s.socket}, args...)...)
	// A test run from inside tmux must still talk to the private server only.
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "TMUX=") })
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("tmux %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// Must is Tmux that fails the test on error.
func (s *Term) Must(args ...string) string {
	s.t.Helper()
	out, err := s.Tmux(args...)
	if err != nil {
		s.t.Fatal(err)
	}
	return out
}

// Keys sends tmux key names (Enter, Escape, ?) one after the other.
func (s *Term) Keys(keys ...string) {
	s.t.Helper()
	s.Must(append([]string{"send-keys", "-t", s.target}, keys...)...)
}

// Text types str literally.
func (s *Term) Text(str string) {
	s.t.Helper()
	s.Must("send-keys", "-t", s.target, "-l", str)
}

// Resize changes the window's size.
func (s *Term) Resize(width, height int) {
	s.t.Helper()
	s.Must("resize-window", "-t", s.target, "-x", fmt.Sprint(width), "-y", fmt.Sprint(height))
}

// Capture returns the screen as text.
func (s *Term) Capture() string {
	s.t.Helper()
	s.last = s.Must("capture-pane", "-p", "-t", s.target)
	return s.last
}

// Wait polls the screen until ok accepts it and returns that screen.
func (s *Term) Wait(what string, ok func(screen string) bool) string {
	s.t.Helper()
	return s.WaitFor(TermPatience, what, ok)
}

// WaitFor is Wait with its own patience, for what the program shows only
// after a while (the demo's shared prefix needs takeovers in two rounds).
func (s *Term) WaitFor(patience time.Duration, what string, ok func(screen string) bool) string {
	s.t.Helper()
	deadline := time.Now().Add(patience)
	for {
		if scr := s.Capture(); ok(scr) {
			return scr
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("after %s the screen does not show %s; last capture:\n%s", patience, what, s.last)
		}
		time.Sleep(TermPoll)
	}
}

// WaitText waits until the screen contains every one of texts and none of absent.
func (s *Term) WaitText(texts []string, absent ...string) string {
	s.t.Helper()
	what := fmt.Sprintf("%q", texts)
	if len(absent) > 0 {
		what += fmt.Sprintf(" without %q", absent)
	}
	return s.Wait(what, func(scr string) bool {
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

// WaitExit waits for the program to end and returns its exit status.
func (s *Term) WaitExit() string {
	s.t.Helper()
	s.Wait("the program gone", func(string) bool {
		_, err := os.Stat(s.exitFile)
		return err == nil
	})
	b, err := os.ReadFile(s.exitFile)
	if err != nil {
		s.t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}
