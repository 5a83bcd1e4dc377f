package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/kafkaadmin/kafkatest"
)

// promptIn runs the real program with args in a terminal (tmux), waits for
// its confirmation prompt, types answer and enter, and returns the exit status
// and the screen.
func promptIn(t *testing.T, answer string, args ...string) (int, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "tmux.conf")
	if err := os.WriteFile(conf, []byte("set -g status off\nset -g remain-on-exit on\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &tmuxSession{t: t, socket: fmt.Sprintf("txnscope-prompt-%d-%d", os.Getpid(), time.Now().UnixNano()), target: "prompt"}
	quote := func(v string) string { return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'" }
	exitFile := filepath.Join(dir, "exit-status")
	parts := []string{"env -u TMUX TERM=xterm-256color", asMain + "=1", "XDG_STATE_HOME=" + quote(dir), quote(exe)}
	for _, a := range args {
		parts = append(parts, quote(a))
	}
	parts = append(parts, "; echo $? >", quote(exitFile+".tmp"), "&& mv", quote(exitFile+".tmp"), quote(exitFile))
	var socketPath string
	t.Cleanup(func() {
		s.tmux("kill-server")
		if socketPath != "" {
			os.Remove(socketPath)
		}
	})
	s.must("-f", conf, "new-session", "-d", "-x", "160", "-y", "30", "-s", s.target, strings.Join(parts, " "))
	socketPath = strings.TrimSpace(s.must("display-message", "-p", "#{socket_path}"))
	s.waitText([]string{"Type abort and press enter to send it"})
	if answer != "" {
		s.text(answer)
	}
	s.keys("Enter")
	s.waitScreen("the program gone", func(string) bool {
		_, err := os.Stat(exitFile)
		return err == nil
	})
	b, err := os.ReadFile(exitFile)
	if err != nil {
		t.Fatal(err)
	}
	code := -1
	fmt.Sscan(strings.TrimSpace(string(b)), &code)
	return code, s.capture()
}

// TestTmuxForceTerminatePrompt: on a terminal and without --yes, force-terminate
// shows the request and its consequences and sends only when abort is typed.
func TestTmuxForceTerminatePrompt(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux is not installed; CI must run this test")
		}
		t.Skip("tmux is not installed")
	}
	quickExit(t) // the tmux client passes it on to the pane
	_, bs := kafkatest.NewCluster(t)
	b := strings.Join(bs, ",")
	kafkatest.OpenTxn(t, bs, "stuck-0-1", "orders", time.Minute)
	auditLog := filepath.Join(t.TempDir(), "audit.log")
	args := []string{"force-terminate", "-b", b, "--transactional-id", "stuck-0-1", "--audit-log", auditLog}

	code, screen := promptIn(t, "yes", args...)
	if code != 1 || !strings.Contains(screen, "not confirmed; nothing sent") || !strings.Contains(screen, "InitProducerId") ||
		!strings.Contains(screen, "fenced") {
		t.Errorf("answered yes: exit %d, screen:\n%s", code, screen)
	}
	if _, err := os.Stat(auditLog); !os.IsNotExist(err) {
		t.Errorf("a cancelled force-terminate touched the audit log: %v", err)
	}
	if r := runProgram(t, "describe", "-b", b, "--transactional-id", "stuck-0-1"); !strings.Contains(r.stdout, "Ongoing") {
		t.Errorf("after the cancel: %s", r.stdout)
	}

	code, screen = promptIn(t, "abort", args...)
	if code != 0 || !strings.Contains(screen, "force-terminate stuck-0-1: sent; the broker accepted it") {
		t.Errorf("answered abort: exit %d, screen:\n%s", code, screen)
	}
	r := runProgram(t, "describe", "-b", b, "--transactional-id", "stuck-0-1", "-o", "json")
	var d map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil || d["state"] == "Ongoing" {
		t.Errorf("after force-terminate: %v %s", err, r.stdout)
	}
	if a := auditLines(t, auditLog); len(a) != 1 || a[0].Action != "force-terminate" {
		t.Errorf("audit lines: %+v", a)
	}
}
