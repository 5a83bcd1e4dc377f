package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/internal/testutil/uitest"
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
	s := uitest.StartTerm(t, 160, 30, []string{asMain + "=1", "XDG_STATE_HOME=" + t.TempDir()}, append([]string{exe}, args...)...)
	s.WaitText([]string{"Type abort and press enter to send it"})
	if answer != "" {
		s.Text(answer)
	}
	s.Keys("Enter")
	code := -1
	fmt.Sscan(s.WaitExit(), &code)
	return code, s.Capture()
}

// TestTmuxForceTerminatePrompt: on a terminal and without --yes, force-terminate
// shows the request and its consequences and sends only when abort is typed.
func TestTmuxForceTerminatePrompt(t *testing.T) {
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
	if !strings.Contains(screen, "Ongoing since ") || !strings.Contains(screen, " ago), timeout 1m00s") {
		t.Errorf("the prompt does not show when the transaction started:\n%s", screen)
	}
	if b, err := os.ReadFile(auditLog); err != nil || len(b) != 0 {
		t.Errorf("a cancelled force-terminate: audit log %q (%v), want it created (before asking) and empty", b, err)
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
	if a := auditLines(t, auditLog); len(a) != 2 || a[0].Phase != "attempt" || a[1].Phase != "result" || a[0].Action != "force-terminate" {
		t.Errorf("audit lines: %+v", a)
	}
}
