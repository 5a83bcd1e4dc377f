package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/audit"
	"github.com/txnscope/txnscope/model"
)

// The real txnscope binary in a real terminal (tmux) against the real broker, driven the way
// an operator would, reading the screen after every step. Like the repository's e2e_tmux_test.go:
// a private tmux server per test, the exit status written to a file by the shell around the
// program, bounded polling of capture-pane, and the server always killed.

const (
	tuiPoll     = 200 * time.Millisecond
	tuiPatience = 30 * time.Second
	tuiRefresh  = "500ms"
)

// tuiTerm is txnscope running in a detached session of a private tmux server.
type tuiTerm struct {
	t        *testing.T
	socket   string
	target   string
	exitFile string
	last     string // the last capture, for failure messages
}

// startTUI builds txnscope and opens it on bootstrap in a 160×40 tmux pane; extra flags
// follow the defaults (--refresh 500ms, an audit log and state directory of the test's own).
func startTUI(ctx context.Context, t *testing.T, bootstrap string, flags ...string) *tuiTerm {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if isCI() {
			t.Fatal("tmux is not installed; CI must run the TUI tests")
		}
		t.Skip("tmux is not installed")
	}
	requireLoopback(t, bootstrap)
	bin := buildTxnscope(ctx, t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "tmux.conf")
	// No status line, so the pane is the whole window; the pane stays after the program
	// ends, so a failure can still show the screen.
	if err := os.WriteFile(conf, []byte("set -g status off\nset -g remain-on-exit on\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &tuiTerm{t: t, socket: fmt.Sprintf("txnscope-it-%d-%08x", os.Getpid(), rand.Uint32()), target: "tui",
		exitFile: filepath.Join(dir, "exit-status")}
	quote := func(v string) string { return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'" }
	args := []string{quote(bin), "-b", quote(bootstrap), "--refresh", tuiRefresh}
	for _, f := range flags {
		args = append(args, quote(f))
	}
	// The shell records the exit status (tmux's own pane_dead_status is not dependable,
	// see e2e_tmux_test.go).
	program := strings.Join([]string{
		"env -u TMUX TERM=xterm-256color", "XDG_STATE_HOME=" + quote(filepath.Join(dir, "state")),
		strings.Join(args, " ") + ";",
		"echo $? >", quote(s.exitFile + ".tmp"), "&& mv", quote(s.exitFile + ".tmp"), quote(s.exitFile),
	}, " ")
	var socketPath string
	t.Cleanup(func() {
		_, _ = s.tmux("kill-server")
		if socketPath != "" {
			os.Remove(socketPath) // tmux leaves it behind
		}
	})
	s.must("-f", conf, "new-session", "-d", "-x", "160", "-y", "40", "-s", s.target, program)
	socketPath = strings.TrimSpace(s.must("display-message", "-p", "#{socket_path}"))
	s.waitText("the list, connected", "TRANSACTIONAL ID", "● connected")
	return s
}

func (s *tuiTerm) tmux(args ...string) (string, error) {
	cmd := exec.Command("tmux", append([]string{"-L", s.socket}, args...)...)
	// A test run from inside tmux must still talk to the private server only.
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "TMUX=") })
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("tmux %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

func (s *tuiTerm) must(args ...string) string {
	s.t.Helper()
	out, err := s.tmux(args...)
	if err != nil {
		s.t.Fatal(err)
	}
	return out
}

// keys sends tmux key names (Enter, Escape, a) one after the other.
func (s *tuiTerm) keys(keys ...string) {
	s.t.Helper()
	s.must(append([]string{"send-keys", "-t", s.target}, keys...)...)
}

// text types str literally.
func (s *tuiTerm) text(str string) {
	s.t.Helper()
	s.must("send-keys", "-t", s.target, "-l", str)
}

func (s *tuiTerm) capture() string {
	s.t.Helper()
	s.last = s.must("capture-pane", "-p", "-t", s.target)
	return s.last
}

// wait polls the pane until ok accepts it (within tuiPatience) and returns that screen.
func (s *tuiTerm) wait(what string, ok func(screen string) bool) string {
	s.t.Helper()
	deadline := time.Now().Add(tuiPatience)
	for {
		if scr := s.capture(); ok(scr) {
			return scr
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("after %s the screen does not show %s; last capture:\n%s", tuiPatience, what, s.last)
		}
		time.Sleep(tuiPoll)
	}
}

// waitText waits until the screen contains every one of texts.
func (s *tuiTerm) waitText(what string, texts ...string) string {
	s.t.Helper()
	return s.wait(what, func(scr string) bool {
		for _, x := range texts {
			if !strings.Contains(scr, x) {
				return false
			}
		}
		return true
	})
}

// filter narrows the list to ids containing text and waits for the filter to apply.
func (s *tuiTerm) filter(text string) {
	s.t.Helper()
	s.keys("/")
	s.waitText("the filter prompt", "part of a transactional.id")
	s.text(text)
	s.keys("Enter")
	s.waitText("the filter applied", "filter /"+text)
}

// quit presses q and checks the program ends with status 0.
func (s *tuiTerm) quit() {
	s.t.Helper()
	s.keys("q")
	s.wait("the program gone after q", func(string) bool {
		_, err := os.Stat(s.exitFile)
		return err == nil
	})
	if b, err := os.ReadFile(s.exitFile); err != nil || strings.TrimSpace(string(b)) != "0" {
		s.t.Errorf("exit status %q (%v), want 0; screen:\n%s", b, err, s.capture())
	}
}

// tuiRow is one transaction row of the list as the screen shows it.
type tuiRow struct {
	line    string
	state   string
	percent int // -1 when the gauge shows none
}

var percentRE = regexp.MustCompile(`(\d+)%`)

// rowOf finds id's row on a list screen.
func rowOf(screen, id string) (tuiRow, bool) {
	for _, l := range strings.Split(screen, "\n") {
		f := strings.Fields(l)
		i := slices.Index(f, id)
		if i < 0 || i+1 >= len(f) {
			continue
		}
		r := tuiRow{line: l, state: f[i+1], percent: -1}
		if m := percentRE.FindStringSubmatch(l); m != nil {
			r.percent, _ = strconv.Atoi(m[1])
		}
		return r, true
	}
	return tuiRow{}, false
}

// tuiID is a KafkaSink-style id short enough to show whole in the list.
func tuiID(kind string) string { return fmt.Sprintf("tui-%s-%08x-0-1", kind, rand.Uint32()) }

// TestTmuxLingering: a producer with an 8 s transaction.timeout.ms opens a transaction and goes
// silent. The list shows it Ongoing with its age/timeout gauge climbing, then the coordinator
// aborts it at the timeout: the row's last outcome says "timed out" and the events pane
// "aborted at timeout".
func TestTmuxLingering(t *testing.T) {
	t.Parallel()
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	adm := newAdmin(t, bootstrap)
	tp := topicOn(ctx, t, adm)
	id := tuiID("linger")
	term := startTUI(ctx, t, bootstrap)
	term.filter(id)

	p := producer(t, bootstrap, id, 8*time.Second)
	openTxn(ctx, t, p, tp, 2, "silent")
	// From here on the producer says nothing: a killed job.

	var seen []int
	first := term.wait(id+" Ongoing with a low gauge", func(scr string) bool {
		r, ok := rowOf(scr, id)
		return ok && r.state == "Ongoing" && r.percent >= 0 && r.percent < 50
	})
	r, _ := rowOf(first, id)
	seen = append(seen, r.percent)
	term.wait(id+" Ongoing with its gauge above 60%", func(scr string) bool {
		r, ok := rowOf(scr, id)
		if ok && r.state == "Ongoing" && r.percent >= 0 && r.percent != seen[len(seen)-1] {
			seen = append(seen, r.percent)
		}
		return ok && r.state == "Ongoing" && r.percent >= 60
	})
	if !slices.IsSorted(seen) || len(seen) < 3 {
		t.Errorf("gauge readings %v: want at least three, climbing", seen)
	}
	aborted := term.wait(id+" aborted at its timeout", func(scr string) bool {
		r, ok := rowOf(scr, id)
		return ok && r.state == "CompleteAbort" && strings.Contains(r.line, "timed out")
	})
	r, _ = rowOf(aborted, id)
	t.Logf("gauge %v%%, then: %s", seen, strings.TrimSpace(r.line))
	if hwm, lso := offsetsOf(ctx, t, adm, tp); hwm != lso {
		t.Errorf("broker after the timeout: HWM %d LSO %d, want equal", hwm, lso)
	}

	term.keys("e")
	term.wait("the events pane with the timeout abort", func(scr string) bool {
		for _, l := range strings.Split(scr, "\n") {
			if strings.Contains(l, id) && strings.Contains(l, string(model.TimedOut)) {
				return true
			}
		}
		return false
	})
	// e again closes the pane. (Not esc: an esc followed at once by q reads as alt+q.)
	term.keys("e")
	term.wait("the events pane closed", func(scr string) bool { return !strings.Contains(scr, "── events") })
	term.quit()
}

// TestTmuxForceTerminate: the transaction of a killed producer (2 minutes timeout, silent)
// pins its partition; the operator selects it, presses a, types abort and enter. The dialog
// reports that the broker accepted it, the audit log has one line for it, and the broker shows
// the LSO at the high watermark and the epoch bumped; the killed producer is fenced.
func TestTmuxForceTerminate(t *testing.T) {
	t.Parallel()
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	adm := newAdmin(t, bootstrap)
	tp := topicOn(ctx, t, adm)
	id := tuiID("stuck")
	auditLog := filepath.Join(t.TempDir(), "audit.log")
	term := startTUI(ctx, t, bootstrap, "--audit-log", auditLog)
	term.filter(id)

	killed := producer(t, bootstrap, id, 2*time.Minute)
	openTxn(ctx, t, killed, tp, 3, "stuck")
	if hwm, lso := offsetsOf(ctx, t, adm, tp); hwm != 3 || lso != 0 {
		t.Fatalf("before: HWM %d LSO %d, want 3 and 0 (pinned)", hwm, lso)
	}
	described, err := adm.DescribeTransactions(ctx, id)
	if err != nil {
		t.Fatalf("DescribeTransactions: %v", err)
	}
	before := described[id]

	term.wait(id+" Ongoing", func(scr string) bool {
		r, ok := rowOf(scr, id)
		return ok && r.state == "Ongoing"
	})
	term.keys("a")
	term.waitText("the force-terminate dialog", "FORCE-TERMINATE "+id, "InitProducerId", "Type abort and press enter")
	if _, err := os.Stat(auditLog); err == nil {
		t.Errorf("the audit log exists before the abort was confirmed")
	}
	term.text("abort")
	term.keys("Enter")
	term.waitText("the outcome", "sent; the broker accepted it")

	// The audit log: one line, for this id.
	b, err := os.ReadFile(auditLog)
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 1 {
		t.Fatalf("audit log has %d lines, want 1:\n%s", len(lines), b)
	}
	var rec audit.Entry
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatalf("audit line is not JSON: %v\n%s", err, lines[0])
	}
	if !strings.Contains(rec.Target, id) || rec.ProducerID != before.ProducerID || rec.ProducerEpoch != before.ProducerEpoch ||
		rec.ErrorCode != "" || rec.Bootstrap != bootstrap {
		t.Errorf("audit record %+v: want target %s, producer %d/%d, no error, bootstrap %s",
			rec, id, before.ProducerID, before.ProducerEpoch, bootstrap)
	}

	// The broker: LSO released, transaction aborted with a higher epoch.
	deadline := time.Now().Add(10 * time.Second)
	for {
		hwm, lso := offsetsOf(ctx, t, adm, tp)
		if hwm == lso {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after force-terminate: HWM %d LSO %d, want equal", hwm, lso)
		}
		time.Sleep(100 * time.Millisecond)
	}
	described, err = adm.DescribeTransactions(ctx, id)
	if err != nil {
		t.Fatalf("DescribeTransactions: %v", err)
	}
	after := described[id]
	if after.State == "Ongoing" || after.ProducerID != before.ProducerID || after.ProducerEpoch <= before.ProducerEpoch {
		t.Errorf("after force-terminate %s pid %d epoch %d; before pid %d epoch %d: want not Ongoing, same pid, higher epoch",
			after.State, after.ProducerID, after.ProducerEpoch, before.ProducerID, before.ProducerEpoch)
	}
	if err := killed.EndTransaction(ctx, true); !isFenced(err) {
		t.Errorf("the killed producer's commit after force-terminate: %v, want fenced", err)
	}

	// Back on the list, the row is no longer open and says it was fenced.
	term.keys("Escape")
	term.wait(id+" idle, last outcome fenced", func(scr string) bool {
		r, ok := rowOf(scr, id)
		return ok && !strings.Contains(scr, "FORCE-TERMINATE") && r.state != "Ongoing" && strings.Contains(r.line, string(model.Fenced))
	})
	term.quit()
}
