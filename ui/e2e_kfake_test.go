package ui

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/audit"
	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/kafkaadmin"
)

// txnView is what an independent admin client says about one transaction
// and the partition it writes.
type txnView struct {
	state    string
	pid      int64
	epoch    int16
	hwm, lso int64
}

// observe reads id and topic-0 with a plain kadm client, not txnscope's, so
// the assertions do not trust the code under test.
func observe(t *testing.T, adm *kadm.Client, id, topic string) txnView {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ds, err := adm.DescribeTransactions(ctx, id)
	if err != nil {
		t.Fatalf("describe %s: %v", id, err)
	}
	d, ok := ds[id]
	if !ok || d.Err != nil {
		t.Fatalf("describe %s: %+v", id, d)
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatalf("high watermarks: %v", err)
	}
	stable, err := adm.ListCommittedOffsets(ctx, topic)
	if err != nil {
		t.Fatalf("last stable offsets: %v", err)
	}
	hwm, ok1 := ends.Lookup(topic, 0)
	lso, ok2 := stable.Lookup(topic, 0)
	if !ok1 || !ok2 || hwm.Err != nil || lso.Err != nil {
		t.Fatalf("offsets of %s-0: %+v %+v", topic, hwm, lso)
	}
	return txnView{state: d.State, pid: d.ProducerID, epoch: d.ProducerEpoch, hwm: hwm.Offset, lso: lso.Offset}
}

// TestE2EKfakeForceTerminate is the operator's path against a real cluster
// over TCP, through the real Kafka client and audit log: find the stuck
// transaction, open it, ask to abort, fumble the confirmation (nothing is
// sent), confirm, read the outcome, quit. The abort is then checked by its
// effect on the cluster, not by what the UI claims.
func TestE2EKfakeForceTerminate(t *testing.T) {
	c, boot := kafkatest.NewCluster(t)
	const id, topic = "e2e-sink-0-42", "orders"
	stuck := kafkatest.OpenTxn(t, boot, id, topic, 10*time.Minute)

	// A committed neighbour, so the list has more than the one row to choose from.
	done := kafkatest.Producer(t, boot, "e2e-sink-1-42", 10*time.Minute)
	kafkatest.Begin(t, done)
	kafkatest.Produce(t, done, topic, 1, 2)
	kafkatest.End(t, done, true)

	watcher, err := kgo.NewClient(kgo.SeedBrokers(boot...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(watcher.Close)
	adm := kadm.NewClient(watcher)

	before := observe(t, adm, id, topic)
	if before.state != "Ongoing" || before.lso >= before.hwm {
		t.Fatalf("setup: %+v, want an Ongoing transaction pinning the LSO", before)
	}

	// Counted from here on: only the UI may send InitProducerId now.
	var inits atomic.Int64
	c.ControlKey(int16(kmsg.InitProducerID), func(kmsg.Request) (kmsg.Response, error, bool) {
		inits.Add(1)
		return nil, nil, false
	})

	admin, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: boot, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(admin.Close)
	logPath := filepath.Join(t.TempDir(), "state", "audit.log")
	m := New(Options{
		Admin: admin, Bootstrap: strings.Join(boot, ","), Refresh: 200 * time.Millisecond,
		Audit: audit.New(logPath),
	})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 35),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.ANSI256)))
	// Should a step fail, the program still ends before the cluster goes away.
	t.Cleanup(func() {
		tm.Quit()
		tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	})

	// Colours change mid-line, so texts are matched with escapes stripped.
	// Each wait consumes the output it read, so texts drawn in the same frame
	// are waited for together.
	wait := func(texts ...string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
			s := ansi.Strip(string(b))
			for _, x := range texts {
				if !strings.Contains(s, x) {
					return false
				}
			}
			return true
		}, teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
	}
	key := func(code rune) { tm.Send(tea.KeyPressMsg{Code: code}) }

	wait(id, "Ongoing")
	key(tea.KeyEnter)
	wait("PARTITIONS (1)", "this txn") // this transaction pins the LSO of orders-0
	tm.Type("a")
	wait("FORCE-TERMINATE " + id)

	// "abor" is not "abort": enter must only say so.
	tm.Type("abor")
	key(tea.KeyEnter)
	wait("(exactly)")
	if got := observe(t, adm, id, topic); got != before {
		t.Fatalf("after confirming with \"abor\": %+v, was %+v", got, before)
	}
	if n := inits.Load(); n != 0 {
		t.Fatalf("confirming with \"abor\" sent %d InitProducerId requests", n)
	}
	if lines := auditLines(t, logPath); len(lines) != 0 {
		t.Fatalf("confirming with \"abor\" wrote to the audit log: %+v", lines)
	}

	tm.Type("t")
	key(tea.KeyEnter)
	wait("sent; the broker accepted it", "enter or esc closes") // the outcome, in the dialog

	after := observe(t, adm, id, topic)
	switch {
	case after.state == "Ongoing":
		t.Errorf("still Ongoing after force-terminate: %+v", after)
	case after.pid != before.pid || after.epoch <= before.epoch:
		t.Errorf("producer %d/%d after force-terminate, was %d/%d: want the same id with a bumped epoch",
			after.pid, after.epoch, before.pid, before.epoch)
	case after.lso != after.hwm || after.hwm < before.hwm:
		t.Errorf("orders-0 LSO %d, HWM %d after force-terminate: want the LSO at the HWM", after.lso, after.hwm)
	}
	if n := inits.Load(); n != 1 {
		t.Errorf("%d InitProducerId requests, want exactly 1", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := stuck.EndTransaction(ctx, kgo.TryCommit); !errors.Is(err, kerr.InvalidProducerEpoch) && !errors.Is(err, kerr.ProducerFenced) {
		t.Errorf("the terminated producer's commit: %v, want it fenced", err)
	}

	entries := auditLines(t, logPath)
	if len(entries) != 2 || entries[0].Phase != "attempt" || entries[0].Try != 1 || entries[1].Attempt != entries[0].Attempt {
		t.Fatalf("audit log has %d lines, want an attempt then its result: %+v", len(entries), entries)
	}
	if e := entries[1]; e.Phase != "result" || e.Action != "force-terminate" || e.Target != id || e.ProducerID != before.pid ||
		e.ProducerEpoch != before.epoch || !strings.HasPrefix(e.Result, "sent; the broker accepted it") || e.ErrorCode != "" ||
		e.Bootstrap != strings.Join(boot, ",") || e.User == "" || time.Since(e.Time) > time.Minute {
		t.Errorf("audit entry %+v", e)
	}

	// The dialog holds the outcome until it is closed; then q quits.
	key(tea.KeyEnter)
	tm.Type("q")
	final, ok := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*Model)
	if !ok {
		t.Fatalf("final model is %T", final)
	}
	if final.dialog != nil || final.cur != screenDetail {
		t.Errorf("at quit: dialog %v, screen %v; want the dialog closed on the detail", final.dialog, final.cur)
	}
	if !strings.Contains(final.status, "force-terminate "+id+": sent; the broker accepted it") {
		t.Errorf("status %q", final.status)
	}
	if final.ctx.Err() == nil {
		t.Error("quitting did not cancel the requests in flight")
	}
}
