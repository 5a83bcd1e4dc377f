package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/internal/testutil/uitest"
)

// The tests of this file run the real program in a terminal (tmux) against a
// kfake cluster whose hooks hold the abort's request, and send it the signals
// an operator's session sends: SIGHUP (the SSH connection dropped), SIGTERM
// (a supervisor), while the request is in flight or while the confirmation
// waits. Each asks: did the process exit, is the terminal the shell's again,
// and is every request on record, with its outcome.

// initHook counts the InitProducerId requests kfake receives from now on and,
// when holding, keeps each one until release (the request is in flight).
type initHook struct {
	n       atomic.Int64
	release chan struct{}
	once    sync.Once
}

func hookInits(t *testing.T, c *kfake.Cluster, hold bool) *initHook {
	h := &initHook{release: make(chan struct{})}
	// Registered after the cluster's own cleanup, so it runs first: a held
	// request must not keep the cluster from closing.
	t.Cleanup(h.let)
	c.ControlKey(int16(kmsg.InitProducerID), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		h.n.Add(1)
		if hold {
			c.SleepControl(func() { <-h.release })
		}
		return nil, nil, false
	})
	return h
}

// let lets held requests through.
func (h *initHook) let() { h.once.Do(func() { close(h.release) }) }

// waitHeld waits until n requests reached the cluster.
func (h *initHook) waitHeld(t *testing.T, n int64) {
	t.Helper()
	deadline := time.Now().Add(uitest.TermPatience)
	for h.n.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d InitProducerId requests reached the cluster, want %d", h.n.Load(), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// inTerm runs the real program with args in a 160×40 terminal; its state
// directory is the test's own and the race runtime does not linger on exit.
func inTerm(t *testing.T, args ...string) (*uitest.Term, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := []string{asMain + "=1", "XDG_STATE_HOME=" + t.TempDir(),
		"GORACE=" + strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0")}
	return uitest.StartTerm(t, 160, 40, env, append([]string{exe}, args...)...), exe
}

// programPID is the program's process id. The pane runs a shell that waits
// for the program (to record its exit status), so #{pane_pid} is that shell
// and the program is its child.
func programPID(t *testing.T, s *uitest.Term, exe string) int {
	t.Helper()
	shell := strings.TrimSpace(s.Must("display-message", "-p", "#{pane_pid}"))
	b, err := os.ReadFile(fmt.Sprintf("/proc/%s/task/%s/children", shell, shell))
	if err != nil {
		t.Fatalf("children of the pane's shell %s: %v", shell, err)
	}
	want, err := os.Stat(exe)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Fields(string(b)) {
		got, err := os.Stat("/proc/" + f + "/exe")
		if err == nil && os.SameFile(got, want) {
			pid, _ := strconv.Atoi(f)
			return pid
		}
	}
	t.Fatalf("the pane's shell %s has no child running %s (children %q)", shell, exe, b)
	return 0
}

func sendSignal(t *testing.T, pid int, sig syscall.Signal) {
	t.Helper()
	if err := syscall.Kill(pid, sig); err != nil {
		t.Fatalf("kill -%d %d: %v", sig, pid, err)
	}
}

// restored fails unless the pane left the alternate screen: the terminal
// shows the shell's screen again, not txnscope's last frame.
func restored(t *testing.T, s *uitest.Term) {
	t.Helper()
	if alt := strings.TrimSpace(s.Must("display-message", "-p", "#{alternate_on}")); alt != "0" {
		t.Errorf("the terminal is still in the alternate screen (#{alternate_on} %s):\n%s", alt, s.Capture())
	}
	if scr := s.Capture(); strings.Contains(scr, "TRANSACTIONAL ID") || strings.Contains(scr, "FORCE-TERMINATE") {
		t.Errorf("txnscope's screen is still showing:\n%s", scr)
	}
}

// stuckTxn is a kfake cluster with one open transaction, id, on orders-0.
func stuckTxn(t *testing.T, id string) (*kfake.Cluster, string, *kgo.Client) {
	t.Helper()
	c, bs := kafkatest.NewCluster(t)
	p := kafkatest.OpenTxn(t, bs, id, "orders", time.Minute)
	return c, strings.Join(bs, ","), p
}

// openDialog starts the TUI on boot, waits for id's row and opens its
// force-terminate dialog.
func openDialog(t *testing.T, boot, id, auditLog string) (*uitest.Term, string) {
	t.Helper()
	s, exe := inTerm(t, "-b", boot, "--refresh", "500ms", "--audit-log", auditLog)
	s.WaitText([]string{"TRANSACTIONAL ID", id, "Ongoing", "● connected"})
	waitDescribed(s, id)
	s.Keys("a")
	s.WaitText([]string{"FORCE-TERMINATE " + id, "Ongoing since", "Type abort and press enter"})
	return s, exe
}

// interrupted fails unless the audit log holds exactly one attempt line and
// one result line of the same attempt, whose outcome is unknown because a
// signal interrupted the request in flight.
func interrupted(t *testing.T, path string) {
	t.Helper()
	a := auditLines(t, path)
	if len(a) != 2 || a[0].Phase != "attempt" || a[0].Try != 1 || a[1].Phase != "result" || a[0].Attempt != a[1].Attempt {
		t.Fatalf("audit log: want the attempt line then its result line, got %+v", a)
	}
	t.Logf("audit result line: %s: %s", a[1].Outcome, a[1].Result)
	if a[1].Outcome != "unknown" || !strings.Contains(a[1].Result, "interrupted while the request") ||
		a[1].Sends == nil || *a[1].Sends != 1 {
		t.Errorf("result line: outcome %q, sends %v, result %q: want unknown, 1, interrupted while in flight", a[1].Outcome, a[1].Sends, a[1].Result)
	}
}

func exitCode(t *testing.T, s *uitest.Term) int {
	t.Helper()
	code, err := strconv.Atoi(s.WaitExit())
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// TestTmuxSignalInFlightTUI: abort typed and confirmed in the TUI, the
// request held by the coordinator, then SIGHUP (or SIGTERM): the process
// exits of itself (not killed by the signal: status 0), leaves the alternate
// screen, and the audit log holds the attempt and its result, unknown
// because interrupted. Exactly one request reached the cluster.
func TestTmuxSignalInFlightTUI(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			const id = "orders-sink-0-7"
			c, boot, _ := stuckTxn(t, id)
			hook := hookInits(t, c, true)
			auditLog := filepath.Join(t.TempDir(), "audit.log")
			s, exe := openDialog(t, boot, id, auditLog)
			s.Text("abort")
			s.Keys("Enter")
			hook.waitHeld(t, 1)
			sendSignal(t, programPID(t, s, exe), sig)

			if code := exitCode(t, s); code != 0 {
				t.Errorf("exit status %d after %s, want 0 (handled, not killed by it)", code, sig)
			}
			restored(t, s)
			interrupted(t, auditLog)
			hook.let()
			if n := hook.n.Load(); n != 1 {
				t.Errorf("%d InitProducerId requests, want 1", n)
			}
		})
	}
}

// TestTmuxSignalInFlightPrompt: the same for the one-shot force-terminate
// prompt: abort typed, the request held, then SIGHUP or SIGTERM. The program
// says the outcome is unknown and exits 1; the audit log has both lines.
func TestTmuxSignalInFlightPrompt(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			const id = "orders-sink-1-7"
			c, boot, _ := stuckTxn(t, id)
			hook := hookInits(t, c, true)
			auditLog := filepath.Join(t.TempDir(), "audit.log")
			s, exe := inTerm(t, "force-terminate", "-b", boot, "--transactional-id", id, "--audit-log", auditLog)
			s.WaitText([]string{"Force-terminate " + id, "Ongoing since", "Type abort and press enter"})
			s.Text("abort")
			s.Keys("Enter")
			hook.waitHeld(t, 1)
			sendSignal(t, programPID(t, s, exe), sig)

			if code := exitCode(t, s); code != 1 {
				t.Errorf("exit status %d after %s, want 1 (handled: the outcome is unknown)", code, sig)
			}
			if scr := s.Capture(); !strings.Contains(scr, "unknown outcome, re-check: interrupted while the request") {
				t.Errorf("the program does not say the outcome is unknown:\n%s", scr)
			}
			restored(t, s)
			interrupted(t, auditLog)
			hook.let()
			if n := hook.n.Load(); n != 1 {
				t.Errorf("%d InitProducerId requests, want 1", n)
			}
		})
	}
}

// TestTmuxSignalWhileConfirming: SIGHUP while the dialog or the prompt waits
// and nothing was typed: nothing is sent, the audit log is there (opened
// before asking) and empty, the terminal restored.
func TestTmuxSignalWhileConfirming(t *testing.T) {
	t.Parallel()
	for _, ui := range []string{"dialog", "prompt"} {
		t.Run(ui, func(t *testing.T) {
			t.Parallel()
			id := "orders-sink-2-" + ui
			c, boot, p := stuckTxn(t, id)
			hook := hookInits(t, c, false)
			auditLog := filepath.Join(t.TempDir(), "audit.log")
			var s *uitest.Term
			var exe string
			if ui == "dialog" {
				s, exe = openDialog(t, boot, id, auditLog)
			} else {
				s, exe = inTerm(t, "force-terminate", "-b", boot, "--transactional-id", id, "--audit-log", auditLog)
				s.WaitText([]string{"Type abort and press enter"})
			}
			sendSignal(t, programPID(t, s, exe), syscall.SIGHUP)

			code := exitCode(t, s)
			if ui == "dialog" && code != 0 || ui == "prompt" && code != 1 {
				t.Errorf("exit status %d", code)
			}
			if ui == "prompt" && !strings.Contains(s.Capture(), "not confirmed; nothing sent") {
				t.Errorf("the prompt does not say nothing was sent:\n%s", s.Capture())
			}
			restored(t, s)
			if b, err := os.ReadFile(auditLog); err != nil || len(b) != 0 {
				t.Errorf("audit log %q (%v): want it created and empty", b, err)
			}
			if n := hook.n.Load(); n != 0 {
				t.Errorf("%d InitProducerId requests, want none", n)
			}
			kafkatest.End(t, p, true) // the transaction was left alone
		})
	}
}

// flat is a screen's dialog text on one line: the box's borders gone, the
// wrapped lines joined, so that a sentence can be looked for whole.
func flat(screen string) string {
	var parts []string
	for _, l := range strings.Split(screen, "\n") {
		i, j := strings.Index(l, "│"), strings.LastIndex(l, "│")
		if i < 0 || j <= i {
			continue
		}
		parts = append(parts, strings.TrimSpace(l[i+len("│"):j]))
	}
	return strings.Join(strings.Fields(strings.Join(parts, " ")), " ")
}

// turnOver commits p's transaction and begins the next one on orders-0.
func turnOver(t *testing.T, p *kgo.Client) {
	t.Helper()
	kafkatest.End(t, p, true)
	time.Sleep(5 * time.Millisecond) // start times are in milliseconds
	kafkatest.Begin(t, p)
	kafkatest.Produce(t, p, "orders", 0, 1)
}

// TestTmuxLiveWarningDialog: while the dialog is open, the producer commits
// the transaction shown and begins the next one (same producer id, epoch,
// state and partition under transaction version 1). The next refresh warns
// in the dialog before anything is typed; typing abort then is refused by the
// executor, nothing is sent, and the new transaction commits.
func TestTmuxLiveWarningDialog(t *testing.T) {
	t.Parallel()
	const id = "streams-app-0_3"
	c, boot, p := stuckTxn(t, id)
	hook := hookInits(t, c, false)
	auditLog := filepath.Join(t.TempDir(), "audit.log")
	s, _ := openDialog(t, boot, id, auditLog)
	if strings.Contains(flat(s.Capture()), "The latest refresh says") {
		t.Fatalf("a warning before anything changed:\n%s", s.Capture())
	}
	turnOver(t, p)
	const warn = "The latest refresh says: refused: this is a newer transaction of " + id
	s.Wait("the live warning", func(scr string) bool { return strings.Contains(flat(scr), warn) })
	s.Text("abort")
	s.Keys("Enter")
	// The live warning says "refused" already: the done phase is what
	// says the executor answered (and wrote the audit log first).
	s.Wait("the refusal", func(scr string) bool {
		return strings.Contains(flat(scr), "refused: this is a newer transaction of "+id) && strings.Contains(scr, "enter or esc closes")
	})
	if n := hook.n.Load(); n != 0 {
		t.Errorf("%d InitProducerId requests, want none", n)
	}
	a := auditLines(t, auditLog)
	if len(a) != 1 || a[0].Phase != "result" || a[0].Outcome != "refused" || !strings.Contains(a[0].Result, "newer transaction") {
		t.Errorf("audit log: want one refused result line and no attempt, got %+v", a)
	}
	kafkatest.End(t, p, true)
	s.Keys("Escape") // apart from q: ESC q together reads as alt+q
	s.WaitText(nil, "FORCE-TERMINATE")
	s.Keys("q")
	if code := exitCode(t, s); code != 0 {
		t.Errorf("exit status %d", code)
	}
}

// TestTmuxLiveWarningPrompt: the same while the one-shot prompt waits: the
// prompt re-reads every 2 s and prints a warning before anything is typed.
func TestTmuxLiveWarningPrompt(t *testing.T) {
	t.Parallel()
	const id = "streams-app-0_4"
	c, boot, p := stuckTxn(t, id)
	hook := hookInits(t, c, false)
	auditLog := filepath.Join(t.TempDir(), "audit.log")
	s, _ := inTerm(t, "force-terminate", "-b", boot, "--transactional-id", id, "--audit-log", auditLog)
	s.WaitText([]string{"Force-terminate " + id, "Type abort and press enter"})
	turnOver(t, p)
	s.WaitText([]string{"! refused: this is a newer transaction of " + id, "! Typing abort now will be refused"})
	s.Text("abort")
	s.Keys("Enter")
	if code := exitCode(t, s); code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	if scr := strings.ReplaceAll(s.Capture(), "\n", ""); !strings.Contains(scr, "txnscope: force-terminate "+id+": refused: this is a newer transaction") {
		t.Errorf("the refusal is not shown:\n%s", s.Capture())
	}
	if n := hook.n.Load(); n != 0 {
		t.Errorf("%d InitProducerId requests, want none", n)
	}
	if a := auditLines(t, auditLog); len(a) != 1 || a[0].Outcome != "refused" {
		t.Errorf("audit log: %+v", a)
	}
	kafkatest.End(t, p, true)
}

// unwritableLogs are audit log paths that cannot be written, even as root: a
// device that is always full, a directory, and a path under a regular file.
func unwritableLogs(t *testing.T) map[string]string {
	dir := t.TempDir()
	file := filepath.Join(dir, "plain")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return map[string]string{"dev-full": "/dev/full", "directory": dir, "under-a-file": filepath.Join(file, "audit.log")}
}

// TestTmuxAuditLogUnwritableTUI: with an audit log that cannot be written,
// a in the TUI opens no dialog and says why; typing abort and enter then
// sends nothing.
func TestTmuxAuditLogUnwritableTUI(t *testing.T) {
	t.Parallel()
	for name, path := range unwritableLogs(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			id := "orders-sink-3-" + name
			c, boot, p := stuckTxn(t, id)
			hook := hookInits(t, c, false)
			s, _ := inTerm(t, "-b", boot, "--refresh", "500ms", "--audit-log", path)
			s.WaitText([]string{"TRANSACTIONAL ID", id, "Ongoing", "● connected"})
			waitDescribed(s, id)
			s.Keys("a")
			s.WaitText([]string{"cannot abort: audit log: "}, "FORCE-TERMINATE")
			s.Text("abort")
			s.Keys("Enter", "Escape")
			time.Sleep(time.Second) // a refresh or two
			if scr := s.Capture(); strings.Contains(scr, "FORCE-TERMINATE") {
				t.Errorf("a dialog opened:\n%s", scr)
			}
			if n := hook.n.Load(); n != 0 {
				t.Errorf("%d InitProducerId requests, want none", n)
			}
			s.Keys("q")
			if code := exitCode(t, s); code != 0 {
				t.Errorf("exit status %d", code)
			}
			kafkatest.End(t, p, true)
		})
	}
}

// TestAuditLogUnwritableCLI: force-terminate with an audit log that cannot
// be written refuses before anything is sent: exit 1, one line on stderr,
// and -o json prints nothing that could say ok.
func TestAuditLogUnwritableCLI(t *testing.T) {
	quickExit(t)
	const id = "orders-sink-4-0"
	c, boot, p := stuckTxn(t, id)
	hook := hookInits(t, c, false)
	for name, path := range unwritableLogs(t) {
		for _, o := range []string{"table", "json"} {
			r := runProgram(t, "force-terminate", "-b", boot, "--transactional-id", id, "--yes", "-o", o, "--audit-log", path)
			if r.code != 1 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "force-terminate refused, nothing sent: audit log: ") {
				t.Errorf("%s, -o %s: exit %d, stderr %q", name, o, r.code, r.stderr)
			}
			if o == "table" && r.stdout != "" || o == "json" && !refusedDoc(r.stdout) {
				t.Errorf("%s, -o %s: stdout %q", name, o, r.stdout)
			}
		}
	}
	if n := hook.n.Load(); n != 0 {
		t.Errorf("%d InitProducerId requests, want none", n)
	}
	kafkatest.End(t, p, true)
}

// descendant finds the process running exe under pid (any depth).
func descendant(pid string, exe os.FileInfo) int {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%s/task/%s/children", pid, pid))
	for _, f := range strings.Fields(string(b)) {
		if got, err := os.Stat("/proc/" + f + "/exe"); err == nil && os.SameFile(got, exe) {
			n, _ := strconv.Atoi(f)
			return n
		}
		if n := descendant(f, exe); n != 0 {
			return n
		}
	}
	return 0
}

// TestTmuxSessionDropInFlight: what an SSH session that drops does to the
// program. It runs as a job of an interactive bash (a login session); the
// request is held in flight; then the terminal goes away (the tmux server is
// killed, which closes the pty as sshd does). bash forwards SIGHUP to its
// jobs and exits, and the kernel then sends SIGHUP once more to the
// foreground process group: two SIGHUPs within a millisecond. The attempt
// must still end with its result line (outcome unknown) in the audit log.
func TestTmuxSessionDropInFlight(t *testing.T) {
	t.Parallel()
	const id = "orders-sink-5-7"
	c, boot, _ := stuckTxn(t, id)
	hook := hookInits(t, c, true)
	auditLog := filepath.Join(t.TempDir(), "audit.log")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s := uitest.StartTerm(t, 160, 40, []string{asMain + "=1", "XDG_STATE_HOME=" + t.TempDir(), "PS1=$ ",
		"GORACE=" + strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0")}, "bash", "--norc", "--noprofile", "-i")
	s.Text(fmt.Sprintf("%q -b %q --refresh 500ms --audit-log %q", exe, boot, auditLog))
	s.Keys("Enter")
	s.WaitText([]string{"TRANSACTIONAL ID", id, "Ongoing", "● connected"})
	waitDescribed(s, id)
	s.Keys("a")
	s.WaitText([]string{"FORCE-TERMINATE " + id, "Type abort and press enter"})
	s.Text("abort")
	s.Keys("Enter")
	hook.waitHeld(t, 1)
	fi, err := os.Stat(exe)
	if err != nil {
		t.Fatal(err)
	}
	pid := descendant(strings.TrimSpace(s.Must("display-message", "-p", "#{pane_pid}")), fi)
	if pid == 0 {
		t.Fatal("the program's process was not found under the pane")
	}
	if _, err := s.Tmux("kill-server"); err != nil {
		t.Logf("kill-server: %v", err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still running 20 s after its terminal went away", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	interrupted(t, auditLog)
	hook.let()
	if n := hook.n.Load(); n != 1 {
		t.Errorf("%d InitProducerId requests, want 1", n)
	}
}

// TestSignalInFlightJSON: force-terminate --yes -o json, SIGHUP while the
// request is held: the JSON says unknown and never ok, the exit status is 1,
// and the audit log has the attempt and its result.
func TestSignalInFlightJSON(t *testing.T) {
	quickExit(t)
	const id = "orders-sink-6-7"
	c, boot, _ := stuckTxn(t, id)
	hook := hookInits(t, c, true)
	auditLog := filepath.Join(t.TempDir(), "audit.log")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := txnscope(t, ctx, "force-terminate", "-b", boot, "--transactional-id", id, "--yes", "-o", "json", "--audit-log", auditLog)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	hook.waitHeld(t, 1)
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Errorf("exit %v, want status 1; stderr %q", err, stderr.String())
	}
	var out struct {
		OK, Unknown, Sent bool
		Sends             int
		Attempt           string
	}
	if err := json.Unmarshal([]byte(stdout.String()), &out); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, stdout.String())
	}
	if out.OK || !out.Unknown || !out.Sent || out.Sends != 1 {
		t.Errorf("JSON %s", stdout.String())
	}
	interrupted(t, auditLog)
	if a := auditLines(t, auditLog); a[0].Attempt != out.Attempt {
		t.Errorf("the JSON's attempt %q is not the audit log's %q", out.Attempt, a[0].Attempt)
	}
	hook.let()
}

// waitDescribed waits until id's row shows its age against its timeout: a
// refresh described it (a listed row is described in batches, and a on a row
// not yet described only says so).
func waitDescribed(s *uitest.Term, id string) {
	s.Wait(id+" described", func(scr string) bool {
		for _, l := range strings.Split(scr, "\n") {
			if strings.Contains(l, id) && strings.Contains(l, "Ongoing") && strings.Contains(l, "%") {
				return true
			}
		}
		return false
	})
}
