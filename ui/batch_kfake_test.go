package ui

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/kafkaadmin"
)

// TestBatchKfakeRefusesTheReplacedIDOnly drives the Model with the real
// Kafka client against kfake (transaction version 1: a producer keeps its
// id and epoch from one transaction to the next). A Flink-like job left
// checkpoint 1 open on its three subtasks after committing checkpoint 2.
// While the dialog is open, subtask 1's producer commits its transaction
// and begins the next: same id, producer id, epoch and state. The refresh
// warns; abort 3 then force-terminates subtasks 0 and 2, and the executor's
// re-read refuses subtask 1 before anything is sent for it: its producer
// still commits.
func TestBatchKfakeRefusesTheReplacedIDOnly(t *testing.T) {
	c, boot := kafkatest.NewCluster(t)
	const topic = "warehouse"
	var open, next []*kgo.Client
	var ids []string
	for s := range 3 {
		id := fmt.Sprintf("wl-%d-1", s)
		ids = append(ids, id)
		open = append(open, kafkatest.OpenTxn(t, boot, id, topic, 10*time.Minute))
		next = append(next, kafkatest.OpenTxn(t, boot, fmt.Sprintf("wl-%d-2", s), topic, 10*time.Minute))
	}
	admin, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: boot, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(admin.Close)
	log := filepath.Join(t.TempDir(), "audit.log")
	// The screen's clock runs a minute ahead: a transaction lingers only
	// once it is older than a live one of its job gets (30s at least).
	h := newHarness(t, withAudit(log), func(o *Options) { o.Admin, o.Now = admin, aMinuteOn })
	h.send(tea.WindowSizeMsg{Width: 160, Height: 48})
	h.run(h.m.Init())
	// kfake forgets a commit (the id goes Empty): the history must see
	// checkpoint 2 commit for checkpoint 1 to linger.
	for _, p := range next {
		kafkatest.End(t, p, true)
	}
	for i := 0; i < 50 && !h.lingering("wl", 3); i++ {
		time.Sleep(100 * time.Millisecond)
		h.tick()
	}
	h.press("J")
	if !h.lingering("wl", 3) {
		t.Fatalf("the job does not show 3 lingering ids:\n%s", h.screen())
	}
	h.press("a")
	mustContain(t, h.screen(), "FORCE-TERMINATE 3 LINGERING TRANSACTIONS", "Type abort 3")

	time.Sleep(5 * time.Millisecond) // the next transaction starts a millisecond later at least
	kafkatest.End(t, open[1], true)
	time.Sleep(5 * time.Millisecond)
	kafkatest.Begin(t, open[1])
	kafkatest.Produce(t, open[1], topic, 0, 1)
	h.tick()
	mustContain(t, h.screen(), "The latest refresh says 1 of the 3 changed")

	var inits atomic.Int64
	c.ControlKey(int16(kmsg.InitProducerID), func(kmsg.Request) (kmsg.Response, error, bool) {
		inits.Add(1)
		return nil, nil, false
	})
	h.typeText("abort 3")
	h.press("enter")
	mustContain(t, h.screen(), "2 force-terminated, 1 refused", "this is a newer transaction of wl-1-1")
	if n := inits.Load(); n != 2 {
		t.Errorf("%d InitProducerId requests, want one for each of the two unchanged ids", n)
	}
	lines := auditLines(t, log)
	var targets []string
	for _, l := range lines {
		targets = append(targets, l.Phase+" "+l.Target)
	}
	want := []string{"attempt wl-0-1", "result wl-0-1", "result wl-1-1", "attempt wl-2-1", "result wl-2-1"}
	if !slices.Equal(targets, want) {
		t.Errorf("audit log %v, want %v: no attempt line for the refused id, nothing sent for it", targets, want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := open[1].EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Errorf("the replaced id's new transaction could not commit: %v", err)
	}
	for _, i := range []int{0, 2} {
		if err := open[i].EndTransaction(ctx, kgo.TryCommit); err == nil {
			t.Errorf("%s committed after being force-terminated", ids[i])
		}
	}
}

// lingering reports whether the jobs view's job named prefix shows n lingering ids.
func (h *harness) lingering(prefix string, n int) bool {
	h.jobs().reload()
	h.jobs().fresh()
	for _, j := range h.jobs().jobs {
		if j.ID.Name == prefix {
			return len(j.Lingering) == n
		}
	}
	return false
}

func aMinuteOn() time.Time { return time.Now().Add(time.Minute) }
