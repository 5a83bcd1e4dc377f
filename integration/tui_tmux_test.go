package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/txnscope/txnscope/internal/audit"
	"github.com/txnscope/txnscope/internal/testutil/uitest"
	"github.com/txnscope/txnscope/model"
)

// The real txnscope binary in a real terminal (tmux) against the real broker, driven the way
// an operator would, reading the screen after every step. Like the repository's e2e_tmux_test.go:
// a private tmux server per test, the exit status written to a file by the shell around the
// program, bounded polling of capture-pane, and the server always killed.

const tuiRefresh = "500ms"

// tuiTerm is txnscope running in a terminal of its own (see uitest.Term).
type tuiTerm struct {
	*uitest.Term
	t *testing.T
}

// startTUI builds txnscope and opens it on bootstrap in a 160×40 tmux pane; extra flags
// follow the defaults (--refresh 500ms, a state directory of the test's own).
func startTUI(ctx context.Context, t *testing.T, bootstrap string, flags ...string) *tuiTerm {
	t.Helper()
	return startTUIEnv(ctx, t, nil, bootstrap, flags...)
}

// startTUIEnv is startTUI with more environment (KEY=VALUE).
func startTUIEnv(ctx context.Context, t *testing.T, env []string, bootstrap string, flags ...string) *tuiTerm {
	t.Helper()
	for _, b := range strings.Split(bootstrap, ",") {
		requireLoopback(t, b)
	}
	bin := buildTxnscope(ctx, t)
	argv := append([]string{bin, "-b", bootstrap, "--refresh", tuiRefresh}, flags...)
	env = append([]string{"XDG_STATE_HOME=" + filepath.Join(t.TempDir(), "state")}, env...)
	s := &tuiTerm{Term: uitest.StartTerm(t, 160, 40, env, argv...), t: t}
	s.WaitText([]string{"TRANSACTIONAL ID", "● connected"})
	return s
}

// filter narrows the list to ids containing text and waits for the filter to apply.
func (s *tuiTerm) filter(text string) {
	s.t.Helper()
	s.Keys("/")
	s.WaitText([]string{"part of a transactional.id"})
	s.Text(text)
	s.Keys("Enter")
	s.WaitText([]string{"filter /" + text})
}

// quit presses q and checks the program ends with status 0.
func (s *tuiTerm) quit() {
	s.t.Helper()
	s.Keys("q")
	if code := s.WaitExit(); code != "0" {
		s.t.Errorf("exit status %s, want 0; screen:\n%s", code, s.Capture())
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
	first := term.Wait(id+" Ongoing with a low gauge", func(scr string) bool {
		r, ok := rowOf(scr, id)
		return ok && r.state == "Ongoing" && r.percent >= 0 && r.percent < 50
	})
	r, _ := rowOf(first, id)
	seen = append(seen, r.percent)
	term.Wait(id+" Ongoing with its gauge above 60%", func(scr string) bool {
		r, ok := rowOf(scr, id)
		if ok && r.state == "Ongoing" && r.percent >= 0 && r.percent != seen[len(seen)-1] {
			seen = append(seen, r.percent)
		}
		return ok && r.state == "Ongoing" && r.percent >= 60
	})
	if !slices.IsSorted(seen) || len(seen) < 3 {
		t.Errorf("gauge readings %v: want at least three, climbing", seen)
	}
	aborted := term.Wait(id+" aborted at its timeout", func(scr string) bool {
		r, ok := rowOf(scr, id)
		return ok && r.state == "CompleteAbort" && strings.Contains(r.line, "timed out")
	})
	r, _ = rowOf(aborted, id)
	t.Logf("gauge %v%%, then: %s", seen, strings.TrimSpace(r.line))
	if hwm, lso := offsetsOf(ctx, t, adm, tp); hwm != lso {
		t.Errorf("broker after the timeout: HWM %d LSO %d, want equal", hwm, lso)
	}

	term.Keys("e")
	term.Wait("the events pane with the timeout abort", func(scr string) bool {
		for _, l := range strings.Split(scr, "\n") {
			if strings.Contains(l, id) && strings.Contains(l, string(model.TimedOut)) {
				return true
			}
		}
		return false
	})
	// e again closes the pane. (Not esc: an esc followed at once by q reads as alt+q.)
	term.Keys("e")
	term.Wait("the events pane closed", func(scr string) bool { return !strings.Contains(scr, "── events") })
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
	// The broker lets anyone READ its coordinators' log: the TUI follows it.
	term.Wait("the header to say the history comes from the coordinators' log", func(scr string) bool {
		head, _, _ := strings.Cut(scr, "\n")
		return strings.Contains(head, "history: coordinator log") || strings.Contains(head, "· log")
	})
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

	term.Wait(id+" Ongoing", func(scr string) bool {
		r, ok := rowOf(scr, id)
		return ok && r.state == "Ongoing"
	})
	term.Keys("a")
	term.WaitText([]string{"FORCE-TERMINATE " + id, "Ongoing since ", time.UnixMilli(before.StartTimestamp).Local().Format("15:04:05.000"), "InitProducerId",
		"Type abort and press enter"})
	if b, err := os.ReadFile(auditLog); err != nil || len(b) != 0 {
		t.Errorf("before the abort was confirmed the audit log must be open and empty: %q, %v", b, err)
	}
	term.Text("abort")
	term.Keys("Enter")
	term.WaitText([]string{"sent; the broker accepted it"})

	// The audit log: the attempt, written before the request went out, and
	// its result.
	b, err := os.ReadFile(auditLog)
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 {
		t.Fatalf("audit log has %d lines, want 2:\n%s", len(lines), b)
	}
	var att, rec audit.Entry
	if err := json.Unmarshal([]byte(lines[0]), &att); err != nil || att.Phase != "attempt" || att.TxnStart == "" {
		t.Fatalf("first audit line: %v\n%s", err, lines[0])
	}
	if err := json.Unmarshal([]byte(lines[1]), &rec); err != nil || rec.Phase != "result" || rec.Attempt != att.Attempt {
		t.Fatalf("second audit line: %v\n%s", err, lines[1])
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
	if err := killed.EndTransaction(ctx, true); !isFenced(err) && !errors.Is(err, kerr.InvalidTxnState) {
		t.Errorf("the killed producer's commit after force-terminate: %v, want it refused", err)
	}

	// Back on the list, the row is no longer open and says it was
	// force-terminated: the coordinators' log says so, and that txnscope
	// did it (LAST: "forced"; polls could only say aborted or fenced).
	term.Keys("Escape")
	term.Wait(id+" idle, last outcome forced", func(scr string) bool {
		r, ok := rowOf(scr, id)
		return ok && !strings.Contains(scr, "FORCE-TERMINATE") && r.state != "Ongoing" && strings.Contains(r.line, "forced")
	})
	term.quit()
}
