package ui

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/kafkaadmin"
)

// TestBatchKfakeNewerAbortedInFlight: the batch force-terminates a job's
// three lingering ids; subtask 1's request is held on its way while its
// producer commits the lingering transaction and begins the next one,
// which the request then aborts (issue 19, item 4). That id is shown
// "unknown", not "ok" nor "failed", with the reason naming the newer
// transaction; the tally counts it as unknown; its audit result line says
// unknown with the same text.
func TestBatchKfakeNewerAbortedInFlight(t *testing.T) {
	c, boot := kafkatest.NewCluster(t)
	const topic = "warehouse"
	var open, next []*kgo.Client
	for s := range 3 {
		open = append(open, kafkatest.OpenTxn(t, boot, fmt.Sprintf("wl-%d-1", s), topic, 10*time.Minute))
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
	mustContain(t, h.screen(), "FORCE-TERMINATE 3 LINGERING TRANSACTIONS")

	c.ControlKey(int16(kmsg.InitProducerID), func(req kmsg.Request) (kmsg.Response, error, bool) {
		if id := req.(*kmsg.InitProducerIDRequest).TransactionalID; id == nil || *id != "wl-1-1" {
			return nil, nil, false
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			kafkatest.End(t, open[1], true)
			time.Sleep(5 * time.Millisecond)
			kafkatest.Begin(t, open[1])
			kafkatest.Produce(t, open[1], topic, 0, 1)
		}()
		c.SleepControl(func() { <-done })
		return nil, nil, false
	})
	h.typeText("abort 3")
	h.press("enter")
	const says = "a newer transaction of wl-1-1 began after it"
	mustContain(t, h.screen(), "2 force-terminated, 1 unknown", "unknown outcome, re-check", says)
	if strings.Contains(h.screen(), "nothing was aborted") {
		t.Errorf("the dialog says nothing was aborted:\n%s", h.screen())
	}
	var found bool
	for _, l := range auditLines(t, log) {
		if l.Phase == "result" && l.Target == "wl-1-1" {
			found = true
			if l.Outcome != "unknown" || !strings.Contains(l.Result, says) || !strings.Contains(l.Result, "most likely aborted it") {
				t.Errorf("audit result for wl-1-1: outcome %q, %q", l.Outcome, l.Result)
			}
		}
	}
	if !found {
		t.Error("no audit result line for wl-1-1")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := open[1].EndTransaction(ctx, kgo.TryCommit); err == nil {
		t.Error("the newer transaction of wl-1-1 committed: the request did not abort it, not the case under test")
	}
}
