package ui

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/audit"
	"github.com/txnscope/txnscope/internal/testutil/uitest"
	"github.com/txnscope/txnscope/model"
)

func withAudit(path string) func(*Options) {
	return func(o *Options) { o.Audit = audit.New(path) }
}

func auditLines(t *testing.T, path string) []audit.Entry {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []audit.Entry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e audit.Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		out = append(out, e)
	}
	return out
}

func TestOnlyTypingAbortConfirms(t *testing.T) {
	for _, typed := range []string{"", "a", "abor", "Abort", "ABORT", "abortt", "yes", "y", "q", "abort now", "aborted"} {
		h := started(t)
		h.selectID("crashed-job-0-7")
		h.press("a")
		if h.m.dialog == nil {
			t.Fatal("a did not open the dialog")
		}
		h.typeText(typed)
		h.press("enter", "enter")
		if n := len(h.admin.Executed()); n != 0 {
			t.Errorf("typing %q then enter executed %d actions", typed, n)
		}
		if h.m.dialog == nil || h.m.dialog.phase != 0 {
			t.Errorf("typing %q: the dialog should still wait for confirmation", typed)
		}
		mustContain(t, h.screen(), "type abort (exactly)")
		h.press("esc")
		if h.m.dialog != nil || len(h.admin.Executed()) != 0 {
			t.Errorf("esc should close the dialog without sending")
		}
	}
}

func TestEscCancelsAtAnyPointBeforeSending(t *testing.T) {
	h := started(t)
	h.press("a")
	h.typeText("abort")
	h.press("esc", "enter")
	if len(h.admin.Executed()) != 0 {
		t.Fatal("esc then enter sent the abort")
	}
	mustContain(t, h.screen(), "abort cancelled; nothing was sent")
}

func TestForceTerminateFlow(t *testing.T) {
	log := filepath.Join(t.TempDir(), "audit.log")
	h := started(t, withAudit(log))
	h.selectID("orders-enricher-v1-2-41")
	h.press("a")
	s := h.screen()
	// The dialog says which transaction: when it started and how long ago.
	mustContain(t, s, "FORCE-TERMINATE orders-enricher-v1-2-41", "Ongoing since 02:59:03.000 UTC", "(57s ago)",
		"id 4003, epoch 5", "InitProducerId", "coordinator broker 0", "fenced", "Type abort")
	refreshes := h.admin.Refreshes()
	h.typeText("abort")
	h.press("enter")

	got := h.admin.Executed()
	tx, _ := h.m.data.snap.Txn("orders-enricher-v1-2-41")
	want, _ := model.PlanForceTerminate(tx)
	if len(got) != 1 || !reflect.DeepEqual(got[0], want) || got[0].Start.IsZero() || len(got[0].Partitions) != 2 {
		t.Fatalf("executed %+v, want exactly %+v", got, want)
	}
	if h.admin.Refreshes() != refreshes+1 {
		t.Errorf("no refresh after the abort")
	}
	s = h.screen()
	mustContain(t, s, "sent; the broker accepted it", "force-terminate orders-enricher-v1-2-41")
	h.press("enter", "enter")
	if len(h.admin.Executed()) != 1 {
		t.Errorf("closing the result sent again")
	}
	if h.m.dialog != nil {
		t.Errorf("enter should close the finished dialog")
	}
	mustContain(t, h.screen(), "force-terminate orders-enricher-v1-2-41: sent") // the status line keeps it

	lines := auditLines(t, log)
	if len(lines) != 2 || lines[0].Phase != "attempt" || lines[1].Phase != "result" || lines[0].Attempt != lines[1].Attempt {
		t.Fatalf("audit log %+v, want an attempt then its result", lines)
	}
	e := lines[1]
	if e.Action != "force-terminate" || e.Target != "orders-enricher-v1-2-41" || e.ProducerID != 4003 ||
		e.ProducerEpoch != 5 || e.Bootstrap != "127.0.0.1:9092" || !strings.Contains(e.Wire, "InitProducerId") ||
		e.Result != "sent; the broker accepted it" || e.TxnStart == "" {
		t.Errorf("audit entry %+v", e)
	}

	// With the outcome on screen nothing is being typed, so q quits.
	h.press("a")
	h.typeText("abort")
	h.press("enter")
	if h.quit {
		t.Fatal("quit before q")
	}
	h.press("q")
	if !h.quit {
		t.Error("q did not quit with the outcome on screen")
	}
}

func TestRefusalsAndBrokerErrorsAreShownAndLogged(t *testing.T) {
	for _, c := range []struct {
		result model.Result
		want   []string
	}{
		{model.Result{Refused: true, Err: "refused: producer epoch changed 5→6 since you confirmed"},
			[]string{"refused: producer epoch changed 5→6"}},
		{model.Result{Sent: true, ErrorCode: "CONCURRENT_TRANSACTIONS", Err: "try again"},
			[]string{"CONCURRENT_TRANSACTIONS"}},
		{model.Result{Sent: true, Unknown: true, Err: "context deadline exceeded"},
			[]string{"unknown outcome, re-check"}},
	} {
		log := filepath.Join(t.TempDir(), "audit.log")
		h := started(t, withAudit(log))
		h.admin.Result = func(a model.Action) model.Result {
			r := c.result
			r.Action, r.At = a, uitest.T0
			return r
		}
		h.selectID("orders-enricher-v1-2-41")
		h.press("a")
		h.typeText("abort")
		h.press("enter")
		s := h.screen()
		mustContain(t, s, c.want...)
		if h.m.statusKind != statusError {
			t.Errorf("%v: status not marked as an error", c.want)
		}
		lines := auditLines(t, log)
		if last := lines[len(lines)-1]; last.Phase != "result" || !strings.Contains(last.Result+last.ErrorCode, c.want[0]) {
			t.Errorf("audit log for %v: %+v", c.want, lines)
		}
	}
}

func TestAbortOnPartitionFlow(t *testing.T) {
	log := filepath.Join(t.TempDir(), "audit.log")
	h := started(t, withAudit(log))
	h.selectID("orders-enricher-v1-2-41")
	h.press("enter", "G") // orders-7: producer 4003 has an open transaction there the coordinator does not list
	h.press("x")
	if h.m.dialog == nil {
		t.Fatal("x on a hanging partition did not open the dialog")
	}
	mustContain(t, h.screen(), "ABORT ON PARTITION orders-7", "WriteTxnMarkers(ABORT, producer id 4003, epoch 4",
		"leader broker 2", "open from offset 500", "(47m00s", "must stay idle over 15m00s")
	h.typeText("abort")
	h.press("enter")
	want := model.Action{Kind: model.AbortPartition, TopicPartition: model.TopicPartition{Topic: "orders", Partition: 7},
		Leader: 2, ProducerID: 4003, ProducerEpoch: 4, CoordinatorEpoch: 2, StartOffset: 500,
		LastWrite: uitest.T0.Add(-47 * time.Minute), MinIdle: 15 * time.Minute}
	if got := h.admin.Executed(); len(got) != 1 || !reflect.DeepEqual(got[0], want) {
		t.Fatalf("executed %+v, want %+v", got, want)
	}
	if lines := auditLines(t, log); len(lines) != 2 || lines[1].Target != "orders-7" || lines[1].Action != "abort-partition" ||
		lines[1].IdleRule != "idle over 15m0s" {
		t.Errorf("audit log: %+v", lines)
	}
}

// A producer that wrote more recently than the brokers' transaction.max.timeout.ms
// may own a live transaction its coordinator has not listed (yet): the abort is
// offered only with the longer phrase, and the waiver is on record.
func TestAbortOnPartitionOfARecentProducer(t *testing.T) {
	log := filepath.Join(t.TempDir(), "audit.log")
	h := newHarness(t, withAudit(log))
	s := uitest.Snapshot(uitest.T0)
	for i := range s.Partitions {
		if s.Partitions[i].Partition == 7 {
			s.Partitions[i].Producers[0].LastWriteMs = model.WriteMs(uitest.T0.Add(-12 * time.Second))
		}
	}
	h.admin.Push(s)
	h.run(h.m.Init())
	h.selectID("orders-enricher-v1-2-41")
	h.press("enter", "G", "x")
	mustContain(t, h.screen(), "last wrote to orders-7 12s ago", "not over 15m00s", "Type abort anyway and press enter")
	h.typeText("abort")
	h.press("enter")
	if len(h.admin.Executed()) != 0 {
		t.Fatal("abort alone sent an abort that sets the idle rule aside")
	}
	mustContain(t, h.screen(), "type abort anyway (exactly)")
	h.press("ctrl+u")
	h.typeText("abort anyway")
	h.press("enter")
	if got := h.admin.Executed(); len(got) != 1 || !got[0].IdleWaived {
		t.Fatalf("executed %+v", got)
	}
	if lines := auditLines(t, log); len(lines) != 2 || lines[0].IdleRule != "waived by the operator" {
		t.Errorf("audit log: %+v", lines)
	}
}

func TestAbortIsOfferedOnlyWhereItMakesSense(t *testing.T) {
	for _, id := range []string{"orders-enricher-v1-3-40", "abort-every-third-0-12", "idle-0", "payments-tx-secret"} {
		h := started(t)
		h.selectID(id)
		h.press("a")
		if h.m.dialog != nil {
			t.Errorf("a on %s opened a dialog", id)
		}
		if h.m.status == "" {
			t.Errorf("a on %s said nothing", id)
		}
	}
	h := started(t)
	h.selectID("fenced-job-0-3") // PrepareEpochFence may be force-terminated
	h.press("a")
	if h.m.dialog == nil {
		t.Errorf("a on a PrepareEpochFence transaction should open the dialog")
	}
}

func TestDialogWarnsWhenARefreshShowsTheTargetChanged(t *testing.T) {
	h := started(t)
	h.selectID("orders-enricher-v1-2-41")
	h.press("a")
	next := uitest.Snapshot(uitest.T0)
	for i := range next.Txns {
		if next.Txns[i].ID == "orders-enricher-v1-2-41" {
			next.Txns[i].ProducerEpoch = 6
		}
	}
	h.admin.Push(next)
	h.tick()
	mustContain(t, h.screen(), "The latest refresh says", "epoch changed 5→6")
	if h.m.dialog.batch.Actions[0].ProducerEpoch != 5 {
		t.Errorf("the action changed under the operator's feet")
	}
}

// Transaction version 1: the producer committed and began its next
// transaction with the same producer id, epoch and state. Only the start time
// tells; the dialog says so before the operator finishes typing.
func TestDialogWarnsWhenTheTransactionWasReplaced(t *testing.T) {
	h := started(t)
	h.selectID("orders-enricher-v1-2-41")
	h.press("a")
	h.typeText("abo")
	next := uitest.Snapshot(uitest.T0)
	for i := range next.Txns {
		if next.Txns[i].ID == "orders-enricher-v1-2-41" {
			next.Txns[i].SetStart(next.Txns[i].StartTime().Add(30 * time.Second))
		}
	}
	h.admin.Push(next)
	h.tick()
	mustContain(t, h.screen(), "The latest refresh says", "this is a newer transaction of", "Sending will be")
	h.typeText("rt")
	h.press("enter")
	if got := h.admin.Executed(); len(got) != 1 || !got[0].Start.Equal(uitest.T0.Add(-57*time.Second)) {
		// The executor re-reads and refuses; what it is handed is what was shown.
		t.Fatalf("executed %+v", got)
	}
	// Once answered, the answer speaks: "Sending will be refused" is no
	// longer advice anyone can take (a batch's marks go the same way).
	if s := h.screen(); strings.Contains(s, "Sending will be") || !strings.Contains(s, "enter or esc closes") {
		t.Errorf("after the answer the dialog still warns about sending:\n%s", s)
	}
}

// q while a single action is in flight quits once its answer is logged, as
// ctrl+c does and as in a batch.
func TestQWaitsForAnAbortInFlight(t *testing.T) {
	h := started(t)
	h.press("a")
	h.typeText("abort")
	_, cmd := h.m.Update(keyMsg("enter"))
	h.press("q")
	if h.quit {
		t.Fatal("q quit before the abort's answer was logged")
	}
	mustContain(t, h.screen(), "an abort is in flight")
	h.run(cmd)
	if !h.quit || len(h.admin.Executed()) != 1 {
		t.Errorf("quit %v after %d requests, want quit after 1", h.quit, len(h.admin.Executed()))
	}
}

func TestQuitWaitsForAnAbortInFlight(t *testing.T) {
	h := started(t)
	h.press("a")
	h.typeText("abort")
	_, cmd := h.m.Update(keyMsg("enter")) // sent, answer not delivered yet
	h.press("ctrl+c")
	if h.quit {
		t.Fatal("ctrl+c quit before the abort's answer was logged")
	}
	mustContain(t, h.screen(), "an abort is in flight")
	h.run(cmd)
	if !h.quit {
		t.Errorf("did not quit once the answer was in")
	}
	if len(h.admin.Executed()) != 1 {
		t.Errorf("executed %d times", len(h.admin.Executed()))
	}
}

// An audit log that cannot be written is found before the dialog opens:
// no abort is offered, and the status says why in one line.
func TestUnwritableAuditRefusesTheDialog(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(blocker, "audit.log"), dir, "/dev/full", ""} {
		h := started(t, withAudit(path))
		h.selectID("orders-enricher-v1-2-41")
		h.press("a")
		h.typeText("abort")
		h.press("enter")
		if h.m.dialog != nil || len(h.admin.Executed()) != 0 {
			t.Fatalf("%q: the dialog opened or something was sent", path)
		}
		mustContain(t, h.screen(), "cannot abort: audit log: ")
	}
}

// A result the audit log would not take is said on screen and is not OK.
func TestAuditFailureAfterSendingIsShown(t *testing.T) {
	h := started(t)
	h.admin.Result = func(a model.Action) model.Result {
		return model.Result{Action: a, At: uitest.T0, Sent: true, Sends: 1, Attempt: "5f1c", AuditErr: "audit log: write: no space left on device"}
	}
	h.press("a")
	h.typeText("abort")
	h.press("enter")
	mustContain(t, h.screen(), "the audit log was NOT written")
	words := dialogWords(h.screen())
	mustContain(t, words, "its record there is incomplete")
	mustNotContain(t, words, "recorded as attempt")
	if h.m.statusKind != statusError {
		t.Error("an unrecorded abort is shown as a success")
	}
}

// The program waits, on exit, for an abort in flight to have its result in
// the audit log (a signal must not cut it short).
func TestWaitForTheResultLine(t *testing.T) {
	release := make(chan struct{})
	h := started(t)
	h.admin.Result = func(a model.Action) model.Result {
		<-release
		return model.Result{Action: a, At: uitest.T0, Sent: true, Sends: 1}
	}
	h.press("a")
	h.typeText("abort")
	_, cmd := h.m.Update(keyMsg("enter"))
	done := make(chan struct{})
	go func() { cmd(); close(done) }()
	if h.m.Wait(20 * time.Millisecond) {
		t.Fatal("Wait returned before the result was recorded")
	}
	close(release)
	if !h.m.Wait(5 * time.Second) {
		t.Fatal("Wait timed out after the result")
	}
	<-done
}

// dialogWords is the text inside the dialog box on screen s, its lines
// joined as the wrapping found them, so that a sentence reads whole.
func dialogWords(s string) string {
	var words []string
	for _, l := range strings.Split(s, "\n") {
		i, j := strings.Index(l, "│"), strings.LastIndex(l, "│")
		if i < 0 || j <= i {
			continue
		}
		words = append(words, strings.Fields(l[i+len("│"):j])...)
	}
	return strings.Join(words, " ")
}
