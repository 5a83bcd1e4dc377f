package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/testutil/uitest"
	"github.com/txnscope/txnscope/model"
)

// TestTmuxBatchForceTerminatesLingering: the Flink-like sink with
// parallelism 3 is killed with checkpoint 1's transactions open and a new
// run resumes at checkpoint 2, leaving them lingering. In the real binary,
// in tmux, the operator opens the jobs view, presses a on the job and types
// abort 3 once: the three ids are force-terminated one after the other,
// the audit log has an attempt and a result for each, the job's lingering
// clears and every partition's LSO reaches its high watermark.
func TestTmuxBatchForceTerminatesLingering(t *testing.T) {
	t.Parallel()
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	requireFlinkLike(ctx, t)
	adm := newAdmin(t, bootstrap)
	const parallelism = 3
	topic := topicWith(ctx, t, adm, parallelism)
	// Short enough to show whole in the dialog's id column.
	prefix := fmt.Sprintf("batch-%08x", rand.Uint32())

	crashed := startFlink(t, "crashed", bootstrap, "--topic", topic, "--prefix", prefix,
		"--parallelism", fmt.Sprint(parallelism), "--checkpoint-interval-ms", "60000", "--records", "240",
		"--transaction-timeout-ms", "300000")
	var lingering []string
	for s := range parallelism {
		lingering = append(lingering, flinkID(prefix, s, 1))
		crashed.waitEvent(ctx, "first", lingering[s])
	}
	crashed.kill9(ctx)
	restarted := startFlink(t, "restarted", bootstrap, "--topic", topic, "--prefix", prefix,
		"--parallelism", fmt.Sprint(parallelism), "--checkpoint-interval-ms", "500", "--records", "5",
		"--transaction-timeout-ms", "300000", "--checkpoints", "2", "--start-checkpoint", "2")
	if code := restarted.waitExit(ctx); code != 0 {
		t.Fatalf("restarted job exit status %d", code)
	}
	for p := range parallelism {
		tp := model.TopicPartition{Topic: topic, Partition: int32(p)}
		if hwm, lso := offsetsOf(ctx, t, adm, tp); hwm == lso {
			t.Fatalf("%s-%d before: HWM %d LSO %d, want the LSO pinned by the lingering transaction", topic, p, hwm, lso)
		}
	}

	auditLog := filepath.Join(t.TempDir(), "audit.log")
	term := startTUI(ctx, t, bootstrap, "--audit-log", auditLog)
	term.Keys("J")
	// A transaction lingers once older than a live one of its job gets
	// (30s while the job's commit cadence is not known).
	term.WaitFor(60*time.Second, prefix+" with 3 lingering", func(scr string) bool {
		return hasLine(scr, func(l string) bool {
			return strings.Contains(l, prefix+" ") && strings.Contains(l, "3 lingering")
		})
	})
	// Other tests' jobs may share the broker, and linger too.
	term.selectLine(prefix + " ")
	term.Keys("a")
	scr := term.WaitText(append([]string{"FORCE-TERMINATE 3 LINGERING TRANSACTIONS", "job " + prefix + " (flink)",
		"Type abort 3 and press enter"}, lingering...))
	t.Logf("the dialog:\n%s", scr)
	if b, err := os.ReadFile(auditLog); err != nil || len(b) != 0 {
		t.Errorf("before confirming, the audit log must be open and empty: %q, %v", b, err)
	}
	term.Text("abort 2")
	term.Keys("Enter")
	term.WaitText([]string{"type abort 3 (exactly)"})
	term.Keys("C-u")
	term.Text("abort 3")
	term.Keys("Enter")
	scr = term.WaitText([]string{"3 force-terminated", "enter or esc closes"})
	t.Logf("the outcome:\n%s", scr)

	entries := readAudit(t, auditLog)
	if len(entries) != 2*parallelism {
		t.Fatalf("audit log has %d lines, want an attempt and a result for each of %d ids", len(entries), parallelism)
	}
	var targets []string
	for i := 0; i < len(entries); i += 2 {
		at, res := entries[i], entries[i+1]
		if at.Phase != "attempt" || res.Phase != "result" || at.Attempt != res.Attempt || res.Outcome != "sent" ||
			!strings.Contains(at.Wire, "InitProducerId") || res.Bootstrap != bootstrap {
			t.Errorf("audit lines %d-%d: %+v / %+v", i, i+1, at, res)
		}
		targets = append(targets, res.Target)
	}
	if !slices.Equal(targets, lingering) {
		t.Errorf("audit targets %v, want %v one after the other", targets, lingering)
	}

	// The job's lingering clears on screen, and on the broker every LSO
	// reaches its high watermark.
	term.Keys("Enter")
	term.Wait("the job without lingering transactions", func(scr string) bool {
		return !strings.Contains(scr, "FORCE-TERMINATE") &&
			hasLine(scr, func(l string) bool { return strings.Contains(l, prefix+" ") && !strings.Contains(l, "lingering") })
	})
	sc := newScope(t, bootstrap)
	sc.until(ctx, "no lingering or open transaction left", func(s *model.Snapshot) bool {
		for _, j := range model.Jobs(s, sc.hist, time.Now()) {
			if j.ID.Name == prefix {
				return len(j.Lingering) == 0 && len(j.Open) == 0
			}
		}
		return false
	})
	for p := range parallelism {
		tp := model.TopicPartition{Topic: topic, Partition: int32(p)}
		deadline := time.Now().Add(10 * time.Second)
		for {
			hwm, lso := offsetsOf(ctx, t, adm, tp)
			if hwm == lso {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s-%d after the batch: HWM %d LSO %d, want equal", topic, p, hwm, lso)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	term.quit()
}

// hasLine reports whether a line of screen is one ok accepts. (The header
// may name one of the job's ids too.)
func hasLine(screen string, ok func(string) bool) bool {
	return slices.ContainsFunc(strings.Split(screen, "\n"), ok)
}

// selectLine moves the cursor (the row marked >) down from the top onto
// the row that holds text.
func (s *tuiTerm) selectLine(text string) {
	s.t.Helper()
	s.Keys("g")
	for range 200 {
		if hasLine(s.Capture(), func(l string) bool { return strings.HasPrefix(l, ">") && strings.Contains(l, text) }) {
			return
		}
		s.Keys("Down")
		time.Sleep(uitest.TermPoll)
	}
	s.t.Fatalf("no row with %s could be selected; last screen:\n%s", text, s.Capture())
}
