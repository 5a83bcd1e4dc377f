package ui

import (
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/txnscope/txnscope/internal/testutil/uitest"
	"github.com/txnscope/txnscope/model"
)

func TestViewKeysSwitchViews(t *testing.T) {
	h := started(t)
	for _, step := range []struct {
		key  string
		want screenID
		text string
	}{
		{"tab", screenJobs, "most urgent first"},
		{"tab", screenPartitions, "sort pinned longest"},
		{"tab", screenGroups, "CONSUMER GROUP"},
		{"tab", screenList, "TRANSACTIONAL ID"},
		{"c", screenGroups, "billing-etl"},
		{"p", screenPartitions, "billing-2"},
		{"t", screenList, "crashed-job-0-7"},
	} {
		h.press(step.key)
		if h.m.cur != step.want {
			t.Fatalf("after %s: screen %v, want %v", step.key, h.m.cur, step.want)
		}
		mustContain(t, h.screen(), step.text)
	}
	// From a detail, tab moves on from the view the detail came from.
	h.press("p")
	h.selectPin("orders", 4)
	h.press("enter")
	if h.m.cur != screenDetail {
		t.Fatalf("enter on orders-4: screen %v, want the detail", h.m.cur)
	}
	h.press("tab")
	if h.m.cur != screenGroups {
		t.Fatalf("tab from a detail opened from partitions: screen %v, want groups", h.m.cur)
	}
}

func TestHelpListsTheViewKeys(t *testing.T) {
	h := started(t)
	h.send(tea.WindowSizeMsg{Width: 160, Height: 48})
	h.press("?")
	mustContain(t, h.screen(), "views", "tab", "partitions whose LSO is pinned", "consumer groups stuck behind a pin")
	h.press("esc", "p", "?")
	if !h.m.showHelp {
		t.Fatal("? in the partitions view did not open the help")
	}
}

func TestPartitionsViewListsPinsLongestFirst(t *testing.T) {
	h := pinnedLater(t)
	h.press("p")
	var order []string
	for _, i := range h.parts().win.rows {
		p := h.m.data.pins[i]
		order = append(order, p.Topic+"-"+itoa(p.TopicPartition.Partition))
	}
	// orders-0's LSO moved 90 s after the start: a new pin, so it comes last.
	if len(order) != 9 || order[len(order)-1] != "orders-0" || order[0] != "audit-0" {
		t.Fatalf("order %v, want audit-0 (most held back since the start) first, orders-0 last", order)
	}
	s := h.screen()
	mustContain(t, s, "H! orders-7", "H! billing-2", "no transactional id", "≥1m30s", "9 pinned of 1,204 partitions", "2 HANGING")
	mustNotContain(t, s, "orders-1 ") // at its high watermark
}

func TestEnterOnAPartitionOpensTheHoldingTransaction(t *testing.T) {
	h := pinnedLater(t)
	h.press("p")
	h.selectPin("orders", 7)
	h.press("enter")
	if h.m.cur != screenDetail || h.detail().id != "orders-enricher-v1-2-41" {
		t.Fatalf("screen %v detail %q, want the detail of orders-enricher-v1-2-41", h.m.cur, h.detail().id)
	}
	if p := h.detail().data.Parts[h.detail().cursor]; p.Topic != "orders" || p.TopicPartition.Partition != 7 {
		t.Fatalf("detail cursor on %s-%d, want orders-7", p.Topic, p.TopicPartition.Partition)
	}
	// The abort on the partition applies as from any detail.
	h.press("x")
	if h.m.dialog == nil || h.m.dialog.batch.Actions[0].Kind != model.AbortPartition || h.m.dialog.batch.Actions[0].ProducerID != 4003 {
		t.Fatalf("x on orders-7: dialog %+v, want an abort on the partition for producer 4003", h.m.dialog)
	}
	h.press("esc", "esc")
	if h.m.cur != screenPartitions {
		t.Fatalf("esc from the detail: screen %v, want back to partitions", h.m.cur)
	}
	if p, _ := h.parts().current(); p.Topic != "orders" || p.TopicPartition.Partition != 7 {
		t.Errorf("cursor on %+v after coming back, want orders-7", p.TopicPartition)
	}
}

func TestOwnerlessPinOffersTheAbortOnThePartition(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	h := started(t, withAudit(path))
	h.press("p")
	h.selectPin("billing", 2)
	h.press("enter")
	if h.m.cur != screenPartDetail {
		t.Fatalf("enter on billing-2: screen %v, want the partition detail", h.m.cur)
	}
	mustContain(t, h.screen(), "billing-2", "HANGING", "no transactional id owns this producer", "billing-etl",
		"x abort producer 9500's open transaction")
	h.press("x")
	d := h.m.dialog
	if d == nil {
		t.Fatal("x did not open the dialog")
	}
	want := model.Action{Kind: model.AbortPartition, TopicPartition: model.TopicPartition{Topic: "billing", Partition: 2},
		Leader: 0, ProducerID: 9500, ProducerEpoch: 0, CoordinatorEpoch: 2, StartOffset: 42,
		LastWrite: d.batch.Actions[0].LastWrite, MinIdle: 15 * time.Minute}
	if !reflect.DeepEqual(d.batch.Actions[0], want) || d.batch.Actions[0].LastWrite.IsZero() {
		t.Fatalf("action %+v, want %+v", d.batch.Actions[0], want)
	}
	h.typeText("abort")
	h.press("enter")
	if got := h.admin.Executed(); len(got) != 1 || !reflect.DeepEqual(got[0], want) {
		t.Fatalf("executed %+v, want exactly %+v", got, want)
	}
	if lines := auditLines(t, path); len(lines) != 2 {
		t.Errorf("%d audit lines, want 2 (attempt, result)", len(lines))
	}
	h.press("enter", "esc")
	if h.m.cur != screenPartitions {
		t.Errorf("esc: screen %v, want partitions", h.m.cur)
	}
}

func TestPartitionDetailWhenThePinIsGone(t *testing.T) {
	h := started(t)
	h.press("p")
	h.selectPin("billing", 2)
	h.press("enter")
	s := uitest.Snapshot(uitest.T0.Add(2 * time.Second))
	for i := range s.Partitions {
		if s.Partitions[i].Topic == "billing" {
			s.Partitions[i].LastStableOffset = 61
			s.Partitions[i].Producers[0].CurrentTxnStartOffset = -1
		}
	}
	h.admin.Push(s)
	h.tick()
	mustContain(t, h.screen(), "no longer pinned")
	mustNotContain(t, h.screen(), "x abort producer")
	h.press("x")
	if h.m.dialog != nil {
		t.Fatal("x on a partition no longer pinned opened a dialog")
	}
	mustContain(t, h.screen(), "no longer pinned: nothing to abort")
}

func TestReadOnlyPartitionDetailHasNoAbort(t *testing.T) {
	h := started(t, func(o *Options) { o.ReadOnly = true })
	h.press("p")
	h.selectPin("billing", 2)
	h.press("enter", "x")
	if h.m.dialog != nil {
		t.Fatal("read-only: x opened a dialog")
	}
	mustNotContain(t, h.screen(), "x abort", "abort on partition")
}

func TestGroupEnterNarrowsPartitionsToItsBlockers(t *testing.T) {
	h := started(t)
	h.press("c")
	mustContain(t, h.screen(), "billing-etl", "orders-analytics", "HANGING")
	mustNotContain(t, h.screen(), "dashboard") // far behind the LSO: not stuck
	h.press("g", "enter")
	g := h.m.data.groups[0].Group
	if h.m.cur != screenPartitions || h.parts().query.Group != g {
		t.Fatalf("enter on %s: screen %v filter %q", g, h.m.cur, h.parts().query.Group)
	}
	var got []string
	for _, i := range h.parts().win.rows {
		got = append(got, h.m.data.pins[i].Topic)
	}
	if strings.Join(got, ",") != "audit,billing" {
		t.Fatalf("partitions blocking %s: %v, want audit-0 and billing-2", g, got)
	}
	mustContain(t, h.screen(), "blocking group "+g)
	h.press("esc")
	if h.parts().query.Group != "" || len(h.parts().win.rows) != 9 {
		t.Fatalf("esc kept the filter %q (%d rows)", h.parts().query.Group, len(h.parts().win.rows))
	}
	h.press("esc")
	if h.m.cur != screenList {
		t.Fatalf("second esc: screen %v, want the transactions", h.m.cur)
	}
}

func TestPinCursorFollowsThePartitionAcrossRefreshes(t *testing.T) {
	h := started(t)
	h.press("p")
	h.selectPin("orders", 3)
	// A new pin sorts in; the cursor stays on orders-3.
	s := uitest.Snapshot(uitest.T0.Add(2 * time.Second))
	s.Partitions = append(s.Partitions, model.Partition{TopicPartition: model.TopicPartition{Topic: "aaa", Partition: 0},
		Leader: 1, HighWatermark: 5000, LastStableOffset: 1})
	s.Sort()
	h.admin.Push(s)
	h.tick()
	if p, _ := h.parts().current(); p.Topic != "orders" || p.TopicPartition.Partition != 3 {
		t.Fatalf("cursor on %+v, want orders-3", p.TopicPartition)
	}
}

func TestListMarksTransactionsHoldingAHangingPartition(t *testing.T) {
	h := started(t)
	s := h.screen()
	mustContain(t, s, "H! orders-enricher-v1-2-41", "2 HANGING")
	mustNotContain(t, s, "H! long-runner")
}

func TestViewsBeforeTheFirstRefresh(t *testing.T) {
	h := newHarness(t)
	h.press("p")
	mustContain(t, h.screen(), "waiting for the first refresh")
	h.press("enter", "c")
	mustContain(t, h.screen(), "waiting for the first refresh")
	h.press("enter", "j", "G")
	if h.m.cur != screenGroups {
		t.Fatalf("screen %v: keys on an empty groups view must do nothing", h.m.cur)
	}
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }

func TestPartitionsFilter(t *testing.T) {
	h := started(t)
	h.press("p", "/")
	if !h.parts().typing {
		t.Fatal("/ in the partitions view did not start the filter")
	}
	h.typeText("orders-enricher-v1-1") // an id: its two partitions
	mustContain(t, h.screen(), "/orders-enricher-v1-1", "esc clear filter")
	h.press("enter")
	var got []string
	for _, i := range h.parts().win.rows {
		got = append(got, h.m.data.pins[i].Topic+"-"+itoa(h.m.data.pins[i].TopicPartition.Partition))
	}
	if strings.Join(got, ",") != "orders-2,orders-3" {
		t.Fatalf("filtered rows %v, want orders-2 and orders-3", got)
	}
	mustContain(t, h.screen(), "filter /orders-enricher-v1-1")
	h.press("/")
	for range "orders-enricher-v1-1" {
		h.press("backspace")
	}
	h.typeText("BILLING-2") // case does not matter, as in the list's filter
	h.press("enter")
	if len(h.parts().win.rows) != 1 {
		t.Fatalf("%d rows for /BILLING-2, want 1", len(h.parts().win.rows))
	}
	h.press("esc")
	if h.parts().query.Text != "" || len(h.parts().win.rows) != 9 || h.m.cur != screenPartitions {
		t.Fatalf("esc: filter %q, %d rows, screen %v; want the filter cleared, still on partitions", h.parts().query.Text, len(h.parts().win.rows), h.m.cur)
	}
	h.press("/")
	h.typeText("nothing-like-this")
	h.press("enter")
	mustContain(t, h.screen(), "no pinned partition matches /nothing-like-this")
	h.press("/", "esc")
	if h.parts().typing || h.parts().query.Text != "" {
		t.Fatal("esc while typing did not clear the filter")
	}
}
