package ui

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/txnscope/txnscope/internal/testutil/uitest"
	"github.com/txnscope/txnscope/model"
)

// The batch dialog joins the goldens and the size sweep (golden_test.go).
func init() {
	screens = append(screens,
		struct {
			name  string
			setup func(t *testing.T) *harness
		}{"dialog-batch", func(t *testing.T) *harness {
			h := batchStarted(t)
			h.press("J", "a")
			h.typeText("abort")
			return h
		}},
		struct {
			name  string
			setup func(t *testing.T) *harness
		}{"dialog-batch-sending", func(t *testing.T) *harness {
			h := batchStarted(t)
			h.admin.Result = refuse(lingering[0])
			h.press("J", "a")
			h.typeText("abort 3")
			_, cmd := h.m.Update(keyMsg("enter"))
			h.m.Update(cmd()) // the first answer is in, the second id is out
			return h
		}},
		struct {
			name  string
			setup func(t *testing.T) *harness
		}{"dialog-batch-done", func(t *testing.T) *harness {
			h := batchStarted(t)
			h.admin.Result = refuse(lingering[1])
			h.press("J", "a")
			h.typeText("abort 3")
			h.press("enter")
			return h
		}},
	)
}

// lingering are warehouse-loader's lingering ids in batchSnapshot.
var lingering = []string{"warehouse-loader-0-118", "warehouse-loader-0-119", "warehouse-loader-1-119"}

// batchSnapshot is jobsSnapshot with a third lingering transaction, on
// subtask 1, and partitions on the open ones.
func batchSnapshot(at time.Time) *model.Snapshot {
	s := jobsSnapshot(at)
	s.Txns = append(s.Txns, model.Txn{ID: "warehouse-loader-1-119", State: model.Ongoing, ProducerID: 3013, ProducerEpoch: 2,
		Coordinator: 2, TimeoutMs: 900000, StartUnixMs: at.Add(-50 * time.Second).UnixMilli(), Described: true})
	for i := range s.Txns {
		if strings.HasPrefix(s.Txns[i].ID, "warehouse-loader-") && s.Txns[i].State == model.Ongoing {
			s.Txns[i].Partitions = []model.TopicPartition{{Topic: "warehouse", Partition: int32(i % 3)}}
		}
	}
	s.Sort()
	return s
}

func batchStarted(t *testing.T, opts ...func(*Options)) *harness {
	t.Helper()
	h := newHarness(t, opts...)
	h.now = uitest.T0.Add(20 * time.Second)
	h.admin.Push(batchSnapshot(uitest.T0))
	h.run(h.m.Init())
	if h.m.data.snap == nil {
		t.Fatal("the first refresh did not arrive")
	}
	return h
}

// refuse answers Execute as the executor does for an id whose re-read shows
// another transaction: refused, nothing sent.
func refuse(id string) func(model.Action) model.Result {
	return func(a model.Action) model.Result {
		if a.TransactionalID == id {
			return model.Result{Action: a, At: uitest.T0, Refused: true,
				Err: "refused: this is a newer transaction of " + id + ": it started at 03:00:10.000, the one shown started at 02:59:15.000; the one shown has ended"}
		}
		return model.Result{Action: a, At: uitest.T0, Sent: true, Sends: 1}
	}
}

func executedIDs(h *harness) []string {
	var ids []string
	for _, a := range h.admin.Executed() {
		ids = append(ids, a.TransactionalID)
	}
	return ids
}

func TestBatchForceTerminatesAJobsLingeringIDsOneRecordEach(t *testing.T) {
	log := filepath.Join(t.TempDir(), "audit.log")
	h := batchStarted(t, withAudit(log))
	h.send(tea.WindowSizeMsg{Width: 160, Height: 48})
	h.press("J")
	if j, ok := h.jobs().current(); !ok || j.ID.Name != "warehouse-loader" {
		t.Fatalf("the jobs view's cursor is not on warehouse-loader")
	}
	h.press("a")
	if h.m.dialog == nil {
		t.Fatal("a on a job with lingering ids opened no dialog")
	}
	mustContain(t, h.screen(), "FORCE-TERMINATE 3 LINGERING TRANSACTIONS", "job warehouse-loader (flink)",
		"warehouse-loader-0-118", "warehouse-loader-0-119", "warehouse-loader-1-119", "3013/2", "1m10s", "15m",
		"Type abort 3 and press enter")
	if len(auditLines(t, log)) != 0 {
		t.Error("the audit log was written before anything was confirmed")
	}
	refreshes := h.admin.Refreshes()
	h.typeText("abort 3")
	h.press("enter")

	var want []model.Action
	for _, id := range lingering {
		tx, _ := h.m.data.snap.Txn(id)
		a, _ := model.PlanForceTerminate(tx)
		want = append(want, a)
	}
	got := h.admin.Executed()
	if len(got) != 3 {
		t.Fatalf("executed %d actions, want 3", len(got))
	}
	for i := range want {
		if got[i].TransactionalID != want[i].TransactionalID || !got[i].Start.Equal(want[i].Start) || got[i].ProducerEpoch != want[i].ProducerEpoch {
			t.Errorf("action %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	lines := auditLines(t, log)
	if len(lines) != 6 {
		t.Fatalf("audit log has %d lines, want an attempt and a result per id", len(lines))
	}
	for i, id := range lingering {
		at, res := lines[2*i], lines[2*i+1]
		if at.Phase != "attempt" || res.Phase != "result" || at.Attempt != res.Attempt || res.Target != id {
			t.Errorf("audit lines for %s: %+v / %+v", id, at, res)
		}
	}
	if lines[0].Attempt == lines[2].Attempt {
		t.Error("two ids share one audit attempt")
	}
	mustContain(t, h.screen(), "3 force-terminated", "force-terminate job warehouse-loader (flink): 3 force-terminated")
	if h.admin.Refreshes() != refreshes+1 {
		t.Errorf("%d refreshes after the batch, want one", h.admin.Refreshes()-refreshes)
	}
	h.press("enter")
	if h.m.dialog != nil {
		t.Error("enter did not close the finished dialog")
	}
	if len(h.admin.Executed()) != 3 {
		t.Error("closing the dialog sent again")
	}
}

// Transaction version 1: between looking and confirming, one id committed
// and began its next transaction under the same producer id and epoch.
// The dialog warns with the count; that id is refused while the others go.
func TestBatchReplacedIDIsRefusedTheOthersGo(t *testing.T) {
	h := batchStarted(t)
	h.press("J", "a")
	next := batchSnapshot(uitest.T0)
	next.TakenAt = uitest.T0.Add(2 * time.Second)
	for i := range next.Txns {
		if next.Txns[i].ID == lingering[1] {
			next.Txns[i].SetStart(uitest.T0.Add(time.Second))
		}
	}
	h.admin.Push(next)
	h.tick()
	mustContain(t, h.screen(), "The latest refresh says 1 of the 3 changed")
	h.admin.Result = refuse(lingering[1])
	h.typeText("abort 3")
	h.press("enter")
	if got := executedIDs(h); !slices.Equal(got, lingering) {
		t.Fatalf("executed %v, want every id tried in turn: %v", got, lingering)
	}
	if a := h.admin.Executed()[1]; !a.Start.Equal(uitest.T0.Add(-40 * time.Second)) {
		t.Errorf("the replaced id was sent as %v: what was shown must go to the executor, which refuses it", a.Start)
	}
	s := h.screen()
	mustContain(t, s, "2 force-terminated, 1 refused", "this is a newer transaction")
	if h.m.statusKind != statusError {
		t.Error("a batch with a refusal is reported as a success")
	}
}

func TestBatchTakesOnlyTheCountTyped(t *testing.T) {
	for _, typed := range []string{"", "abort", "abort 2", "abort 4", "abort 03", "Abort 3", "abort3", "3", "yes", "abort 3 now"} {
		h := batchStarted(t)
		h.send(tea.WindowSizeMsg{Width: 160, Height: 48})
		h.press("J", "a")
		h.typeText(typed)
		h.press("enter", "enter")
		if n := len(h.admin.Executed()); n != 0 {
			t.Errorf("typing %q sent %d", typed, n)
		}
		mustContain(t, h.screen(), "type abort 3 (exactly)")
		h.press("esc")
		if h.m.dialog != nil {
			t.Errorf("esc did not cancel")
		}
		mustContain(t, h.screen(), "cancelled; nothing was sent")
	}
}

func TestBatchRefusedWhenTheAuditLogCannotBeOpened(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(blocker, "audit.log"), dir, "/dev/full"} {
		h := batchStarted(t, withAudit(path))
		h.press("J", "a")
		h.typeText("abort 3")
		h.press("enter")
		if h.m.dialog != nil || len(h.admin.Executed()) != 0 {
			t.Fatalf("%s: a dialog opened or something was sent", path)
		}
		mustContain(t, h.screen(), "cannot abort: audit log: ")
	}
}

// The audit log fails on the second id: its request is refused by the
// executor, and nothing after it goes out unrecorded.
func TestBatchStopsWhenTheAuditLogFails(t *testing.T) {
	log := filepath.Join(t.TempDir(), "audit.log")
	h := batchStarted(t, withAudit(log))
	h.admin.Result = func(a model.Action) model.Result {
		if a.TransactionalID == lingering[1] {
			// The file at the path is replaced by a directory: the log
			// reopens the path before writing, and cannot.
			if err := os.Remove(log); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(log, 0o700); err != nil {
				t.Fatal(err)
			}
		}
		return model.Result{Action: a, At: uitest.T0, Sent: true, Sends: 1}
	}
	h.send(tea.WindowSizeMsg{Width: 160, Height: 48})
	h.press("J", "a")
	h.typeText("abort 3")
	h.press("enter")
	if got := executedIDs(h); !slices.Equal(got, lingering[:2]) {
		t.Fatalf("executed %v, want the first two only", got)
	}
	s := h.screen()
	mustContain(t, s, "1 force-terminated, 1 refused, 1 not sent", "the audit log failed", "nothing more is sent unrecorded")
	words := dialogWords(s)
	mustContain(t, words, "NOT every attempt is recorded")
	mustNotContain(t, words, "each attempt is recorded")
}

// ctrl+c while an id is in flight: the program waits for its answer, sends
// nothing more, and quits.
func TestBatchCtrlCStopsAfterTheIDInFlight(t *testing.T) {
	for _, k := range []string{"ctrl+c", "q"} {
		h := batchStarted(t)
		h.press("J", "a")
		h.typeText("abort 3")
		_, cmd := h.m.Update(keyMsg("enter")) // the first id is out, its answer not in
		h.press(k)
		if h.quit {
			t.Fatalf("%s quit before the answer of the id in flight", k)
		}
		mustContain(t, h.screen(), "stopping after the one in flight; 2 will not be sent", "txnscope is quitting")
		h.run(cmd)
		if !h.quit {
			t.Errorf("%s: did not quit once the answer was in", k)
		}
		if got := executedIDs(h); !slices.Equal(got, lingering[:1]) {
			t.Errorf("%s: executed %v, want the one in flight only", k, got)
		}
		if tl := h.m.dialog.batch.Tally(); tl.Terminated != 1 || tl.Unsent != 2 {
			t.Errorf("%s: tally %+v", k, tl)
		}
	}
}

func TestBatchEscStopsAfterTheIDInFlight(t *testing.T) {
	h := batchStarted(t)
	h.press("J", "a")
	h.typeText("abort 3")
	_, cmd := h.m.Update(keyMsg("enter"))
	h.press("esc")
	mustContain(t, h.screen(), "stopping after the one in flight; 2 will not be sent")
	h.run(cmd)
	if got := executedIDs(h); !slices.Equal(got, lingering[:1]) {
		t.Fatalf("executed %v, want the one in flight only", got)
	}
	if h.quit {
		t.Error("esc quit the program")
	}
	mustContain(t, h.screen(), "1 force-terminated, 2 not sent", "stopped by the operator")
}

// Ids are a producer's choice: escape sequences in them are written out.
func TestBatchDialogWritesOutHostileIDs(t *testing.T) {
	h := newHarness(t)
	h.now = uitest.T0.Add(20 * time.Second)
	s := batchSnapshot(uitest.T0)
	evil := "evil\x1b]0;pwned\x07\x1b[2J-job"
	open := func(id string, pid int64) model.Txn {
		return model.Txn{ID: id, State: model.Ongoing, ProducerID: pid, ProducerEpoch: 1, TimeoutMs: 60000, Described: true,
			StartUnixMs: uitest.T0.Add(-30 * time.Second).UnixMilli()}
	}
	s.Txns = append(s.Txns, open(evil+"-0-5", 9901), open(evil+"-0-7", 9902),
		model.Txn{ID: evil + "-0-6", State: model.CompleteCommit, ProducerID: 9903, TimeoutMs: 60000, Described: true})
	s.Sort()
	h.admin.Push(s)
	h.run(h.m.Init())
	h.send(tea.WindowSizeMsg{Width: 160, Height: 48})
	h.press("J")
	h.selectJob(model.FlinkSink, evil)
	h.press("a")
	if h.m.dialog == nil {
		t.Fatal("no dialog for the hostile job")
	}
	raw := h.m.View().Content
	if strings.Contains(raw, "\x1b]0;") || strings.Contains(raw, "\x07") || strings.Contains(raw, "\x1b[2J") {
		t.Fatal("the batch dialog wrote an id's escape sequence out raw")
	}
	mustContain(t, h.screen(), `evil\x1b]0;pwned\x07\x1b[2J-job-0-5`, "FORCE-TERMINATE 1 LINGERING TRANSACTION")
}

// While the terminal is too small to show the dialog, nothing it would
// confirm can be sent: keys act on nothing until it is shown again.
func TestBatchNeverSendsFromATooSmallTerminal(t *testing.T) {
	h := batchStarted(t)
	h.press("J", "a")
	h.typeText("abort ")
	h.send(tea.WindowSizeMsg{Width: 60, Height: 15})
	h.typeText("3")
	h.press("enter")
	if len(h.admin.Executed()) != 0 {
		t.Fatal("sent from a terminal too small to show the dialog")
	}
	h.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	h.press("enter")
	if len(h.admin.Executed()) != 0 {
		t.Fatal("the 3 typed blind was taken")
	}
	h.typeText("3")
	h.press("enter")
	if len(h.admin.Executed()) != 3 {
		t.Errorf("once shown and typed, executed %d", len(h.admin.Executed()))
	}
}

func TestBatchIsNotOfferedReadOnly(t *testing.T) {
	h := batchStarted(t, func(o *Options) { o.ReadOnly = true })
	h.press("J", "a")
	if h.m.dialog != nil {
		t.Fatal("read-only mode opened a batch dialog")
	}
	h.press("enter", "a")
	if h.m.dialog != nil || len(h.admin.Executed()) != 0 {
		t.Fatal("read-only mode opened a batch dialog on a subtask")
	}
}

func TestBatchSaysWhenThereIsNothingLingering(t *testing.T) {
	h := batchStarted(t)
	h.press("J")
	h.selectJob(model.FlinkSink, "orders-enricher-v1")
	h.press("a")
	if h.m.dialog != nil {
		t.Fatal("a dialog for a job with nothing lingering")
	}
	mustContain(t, h.screen(), "no lingering transactions in job orders-enricher-v1 (flink)")
}

// On a job's subtasks, a takes the subtask's lingering ids.
func TestBatchFromASubtask(t *testing.T) {
	h := batchStarted(t)
	h.press("J", "enter", "j", "a") // subtask 1: one lingering id
	if h.m.dialog == nil {
		t.Fatal("a on a subtask with a lingering id opened no dialog")
	}
	mustContain(t, h.screen(), "FORCE-TERMINATE 1 LINGERING TRANSACTION", "subtask 1", "Type abort 1")
	h.typeText("abort 1")
	h.press("enter")
	if got := executedIDs(h); !slices.Equal(got, lingering[2:]) {
		t.Errorf("executed %v, want subtask 1's only", got)
	}
	h.press("esc", "j", "a") // subtask 2: none
	if h.m.dialog != nil {
		t.Fatal("a dialog for a subtask with nothing lingering")
	}
	mustContain(t, h.screen(), "subtask 2 has no lingering transactions; a on the jobs view")
}

// A long list is cut to what fits, never the count or the confirmation.
func TestBatchLongListIsCutWithTheCountKept(t *testing.T) {
	h := newHarness(t)
	h.now = uitest.T0.Add(20 * time.Second)
	s := batchSnapshot(uitest.T0)
	for c := 0; c < 40; c++ {
		s.Txns = append(s.Txns, model.Txn{ID: "big-job-0-" + strconv.Itoa(100+c), State: model.Ongoing, ProducerID: int64(5000 + c),
			TimeoutMs: 60000, Described: true, StartUnixMs: uitest.T0.Add(-time.Minute).UnixMilli()})
	}
	s.Txns = append(s.Txns, model.Txn{ID: "big-job-0-200", State: model.CompleteCommit, ProducerID: 5999, TimeoutMs: 60000, Described: true})
	s.Sort()
	h.admin.Push(s)
	h.run(h.m.Init())
	h.press("J")
	h.selectJob(model.FlinkSink, "big-job")
	h.press("a")
	for _, size := range [][2]int{{80, 20}, {80, 24}, {100, 30}, {160, 48}} {
		h.send(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		scr := h.screen()
		mustContain(t, scr, "FORCE-TERMINATE 40 LINGERING TRANSACTIONS", "more", "Type abort 40 and press enter")
	}
	h.typeText("abort 40")
	h.press("enter")
	if len(h.admin.Executed()) != 40 {
		t.Errorf("executed %d of 40", len(h.admin.Executed()))
	}
	mustContain(t, h.screen(), "40 force-terminated")
}

// A lingering id the refresh could not describe yet cannot be planned: it
// is left out, said so, and the count is of the others.
func TestBatchLeavesOutWhatItCannotPlan(t *testing.T) {
	h := newHarness(t)
	h.now = uitest.T0.Add(20 * time.Second)
	s := batchSnapshot(uitest.T0)
	for i := range s.Txns {
		if s.Txns[i].ID == lingering[2] {
			s.Txns[i].Described = false
		}
	}
	h.admin.Push(s)
	h.run(h.m.Init())
	h.send(tea.WindowSizeMsg{Width: 160, Height: 48})
	h.press("J", "a")
	mustContain(t, h.screen(), "FORCE-TERMINATE 2 LINGERING TRANSACTIONS", "left out: warehouse-loader-1-119 has not been described yet",
		"Type abort 2")
	h.typeText("abort 2")
	h.press("enter")
	if got := executedIDs(h); !slices.Equal(got, lingering[:2]) {
		t.Errorf("executed %v, want the two planned", got)
	}
}

// A signal mid-batch cancels the program's context: the answer of the id in
// flight still comes in (and is recorded), and nothing more goes out before
// the program's quit arrives.
func TestBatchSignalStopsAfterTheIDInFlight(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := batchStarted(t, func(o *Options) { o.Context = ctx })
	h.press("J", "a")
	h.typeText("abort 3")
	_, cmd := h.m.Update(keyMsg("enter")) // the first id is out
	cancel()                              // SIGTERM
	h.run(cmd)
	if got := executedIDs(h); !slices.Equal(got, lingering[:1]) {
		t.Fatalf("executed %v, want the one in flight only", got)
	}
	if tl := h.m.dialog.batch.Tally(); tl.Terminated != 1 || tl.Unsent != 2 {
		t.Errorf("tally %+v, want 1 terminated, 2 unsent", tl)
	}
	mustContain(t, h.screen(), "2 not sent", "txnscope is ending (signal)")
}
