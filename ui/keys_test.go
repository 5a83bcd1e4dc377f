package ui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/txnscope/txnscope/internal/testutil/uitest"
	"github.com/txnscope/txnscope/model"
)

func TestListCursorKeys(t *testing.T) {
	for _, c := range []struct {
		keys []string
		want int // cursor row
	}{
		{nil, 0},
		{[]string{"j"}, 1},
		{[]string{"down", "down"}, 2},
		{[]string{"j", "j", "k"}, 1},
		{[]string{"j", "up"}, 0},
		{[]string{"k"}, 0},
		{[]string{"G"}, 9},
		{[]string{"end"}, 9},
		{[]string{"G", "g"}, 0},
		{[]string{"G", "home"}, 0},
		{[]string{"pgdown"}, 9}, // 10 rows fit in one page at 80×24
		{[]string{"G", "pgup"}, 0},
		{[]string{"ctrl+d"}, 9},
		{[]string{"G", "ctrl+u"}, 0},
		{[]string{"ctrl+f"}, 9},
		{[]string{"G", "ctrl+b"}, 0},
		{[]string{"x", "tab", "space", "z"}, 0}, // unbound keys do nothing
	} {
		h := started(t)
		h.press(c.keys...)
		if h.list().win.cursor != c.want {
			t.Errorf("%v: cursor %d, want %d", c.keys, h.list().win.cursor, c.want)
		}
	}
}

func TestPagingThroughALongList(t *testing.T) {
	h := newHarness(t)
	h.admin.Push(uitest.Big(1000, uitest.T0))
	h.run(h.m.Init())
	visible := h.m.listRows()
	h.press("pgdown")
	if h.list().win.cursor != visible-1 || h.list().win.top != visible-1 {
		t.Errorf("pgdown: cursor %d top %d, want both %d", h.list().win.cursor, h.list().win.top, visible-1)
	}
	h.press("G")
	if h.list().win.cursor != 999 || h.list().win.top != 1000-visible {
		t.Errorf("G: cursor %d top %d", h.list().win.cursor, h.list().win.top)
	}
	s := h.screen()
	if !strings.Contains(s, h.selectedID()) {
		t.Errorf("the selected row is not on screen")
	}
}

func TestCursorFollowsTheSelectedIDAcrossRefreshes(t *testing.T) {
	h := started(t)
	h.selectID("long-runner")
	next := uitest.Snapshot(uitest.T0)
	next.Txns = next.Txns[1:] // one id disappears, the rows shift
	h.admin.Push(next)
	h.tick()
	if got := h.selectedID(); got != "long-runner" {
		t.Errorf("after a refresh the cursor is on %q, want long-runner", got)
	}
}

func TestUntouchedCursorStaysOnTheMostUrgentRow(t *testing.T) {
	h := started(t)
	first := h.selectedID()
	next := uitest.Snapshot(uitest.T0)
	for i := range next.Txns {
		if next.Txns[i].ID == first {
			next.Txns[i].State, next.Txns[i].StartUnixMs = model.CompleteCommit, 0 // no longer urgent
		}
	}
	h.admin.Push(next)
	h.tick()
	if got := h.selectedID(); got == first || h.list().win.cursor != 0 {
		t.Errorf("cursor on %q (row %d), want the new first row, not %q", got, h.list().win.cursor, first)
	}
}

func TestFilterKeys(t *testing.T) {
	h := started(t)
	h.press("/")
	if !h.list().typing {
		t.Fatal("/ did not open the filter")
	}
	h.typeText("orders q")
	if h.quit {
		t.Fatal("q quit while typing the filter")
	}
	h.press("backspace", "backspace")
	if got := h.list().input.Value(); got != "orders" {
		t.Errorf("filter input %q, want orders", got)
	}
	if len(h.list().win.rows) != 10 {
		t.Errorf("the filter applied before enter")
	}
	h.press("enter")
	if h.list().typing || h.list().query.Text != "orders" || len(h.list().win.rows) != 4 {
		t.Errorf("enter: typing=%v text=%q rows=%d, want 4 orders rows", h.list().typing, h.list().query.Text, len(h.list().win.rows))
	}
	mustContain(t, h.screen(), "filter /orders", "4 of 10 ids")

	h.press("/")
	h.typeText("zzz")
	h.press("esc")
	if h.list().typing || h.list().query.Text != "" || len(h.list().win.rows) != 10 {
		t.Errorf("esc while typing should clear the filter")
	}

	h.press("/")
	h.send(tea.PasteMsg{Content: "long\n"})
	h.press("enter")
	if h.list().query.Text != "long" || len(h.list().win.rows) != 1 {
		t.Errorf("pasted filter: %q, %d rows", h.list().query.Text, len(h.list().win.rows))
	}
	h.press("esc")
	if h.list().query.Text != "" || len(h.list().win.rows) != 10 {
		t.Errorf("esc in the list should clear an applied filter")
	}
}

func TestStateFilterAndSortKeys(t *testing.T) {
	h := started(t)
	h.press("f")
	if h.list().query.Filter != model.FilterOpen || len(h.list().win.rows) != 7 {
		t.Errorf("f once: filter %v rows %d, want open only, 7", h.list().query.Filter, len(h.list().win.rows))
	}
	mustContain(t, h.screen(), "show open only")
	h.press("f")
	if h.list().query.Filter != model.FilterProblems {
		t.Errorf("f twice: %v", h.list().query.Filter)
	}
	for _, i := range h.list().win.rows {
		tx := h.m.data.snap.Txns[i]
		if len(model.Problems(tx, h.m.hist.Stats(tx.ID), h.m.data.snap, h.list().query, h.now)) == 0 {
			t.Errorf("problems only shows %s, which has none", tx.ID)
		}
	}
	h.press("f")
	if h.list().query.Filter != model.FilterAll {
		t.Errorf("f three times should come back to all")
	}

	if got := h.m.data.snap.Txns[h.list().win.rows[0]].ID; got != "crashed-job-0-7" {
		t.Errorf("default sort puts %s first, want the most urgent", got)
	}
	h.press("s")
	if h.list().query.Sort != model.SortAge || h.m.data.snap.Txns[h.list().win.rows[0]].ID != "long-runner" {
		t.Errorf("s: sort %v first %s, want age with long-runner first", h.list().query.Sort, h.m.data.snap.Txns[h.list().win.rows[0]].ID)
	}
	h.press("s")
	if h.list().query.Sort != model.SortID || h.m.data.snap.Txns[h.list().win.rows[0]].ID != "abort-every-third-0-12" {
		t.Errorf("s twice: want id order")
	}
	h.press("s")
	if h.list().query.Sort != model.SortState || h.m.data.snap.Txns[h.list().win.rows[0]].State != model.PrepareEpochFence {
		t.Errorf("s three times: want state order, fenced first")
	}
	mustContain(t, h.screen(), "sort state")
}

func TestViewKeys(t *testing.T) {
	h := started(t)
	h.press("e")
	mustContain(t, h.screen(), "events · latest first")
	h.press("e")
	mustNotContain(t, h.screen(), "events · latest first")

	h.press("?")
	s := h.screen()
	mustContain(t, s, "txnscope keys", "filter by id", "refresh now", "more lines: j/↓, pgdn, G")
	h.press("G") // the help is longer than the screen: its end
	mustContain(t, h.screen(), "force-terminate the transaction", "abort a hanging txn", "lines above: k/↑, pgup, g")
	mustNotContain(t, h.screen(), "txnscope keys")
	h.press("g", "j", "j") // keys do not leak through the help: they scroll it
	if h.list().win.cursor != 0 {
		t.Errorf("j moved the list under the help screen")
	}
	mustContain(t, h.screen(), "2 above")
	h.press("?")
	mustNotContain(t, h.screen(), "txnscope keys")
	h.press("?", "esc")
	mustNotContain(t, h.screen(), "txnscope keys")

	n := h.admin.Refreshes()
	h.press("r")
	if h.admin.Refreshes() != n+1 {
		t.Errorf("r did not refresh")
	}
}

func TestQuitKeys(t *testing.T) {
	for _, keys := range [][]string{{"q"}, {"ctrl+c"}, {"?", "q"}, {"enter", "q"}, {"/", "ctrl+c"}, {"a", "ctrl+c"}} {
		h := started(t)
		h.press(keys...)
		if !h.quit {
			t.Errorf("%v did not quit", keys)
		}
		if h.m.ctx.Err() == nil {
			t.Errorf("%v quit without cancelling the context", keys)
		}
	}
	h := started(t)
	h.press("a") // on the most urgent row: the abort dialog
	h.typeText("q")
	if h.quit {
		t.Errorf("q quit from inside the abort dialog")
	}
}

func TestDetailKeys(t *testing.T) {
	h := started(t)
	h.selectID("orders-enricher-v1-2-41")
	h.press("enter")
	if h.m.cur != screenDetail {
		t.Fatal("enter did not open the detail")
	}
	s := h.screen()
	mustContain(t, s, "orders-enricher-v1-2-41", "producer id", "4003", "epoch", "broker 0",
		"prefix orders-enricher-v1 · subtask 2 · checkpoint 41", "PARTITIONS (3)", "orders-4", "orders-5",
		"orders-7", "NO", "this transaction", "leader 2", "DescribeProducers")
	if len(h.detail().data.Parts) != 3 {
		t.Fatalf("partition rows: %d, want 3", len(h.detail().data.Parts))
	}
	h.press("j")
	if h.detail().cursor != 1 {
		t.Errorf("j: partition cursor %d", h.detail().cursor)
	}
	h.press("G")
	if h.detail().cursor != 2 {
		t.Errorf("G: partition cursor %d", h.detail().cursor)
	}
	mustContain(t, h.screen(), "orders-7 · leader 2", "x abort producer 4003's open transaction")
	h.press("k", "g")
	if h.detail().cursor != 0 {
		t.Errorf("g: partition cursor %d", h.detail().cursor)
	}
	h.press("end", "home", "pgdown", "pgup", "down", "up")
	if h.detail().cursor != 0 {
		t.Errorf("cursor %d after moving around", h.detail().cursor)
	}
	h.press("x") // orders-4 has no hanging transaction
	if h.m.dialog != nil {
		t.Errorf("x opened a dialog on a partition without a hanging transaction")
	}
	mustContain(t, h.screen(), "has no hanging")
	h.press("esc")
	if h.m.cur != screenList {
		t.Errorf("esc did not go back to the list")
	}
	if h.selectedID() != "orders-enricher-v1-2-41" {
		t.Errorf("back in the list the cursor moved")
	}
}

func TestDetailShowsErrorsAndTheLastStateOfAVanishedID(t *testing.T) {
	h := started(t)
	h.selectID("payments-tx-secret")
	h.press("enter")
	mustContain(t, h.screen(), "error: TRANSACTIONAL_ID_AUTHORIZATION_FAILED", "not described yet")

	h.press("esc")
	h.selectID("crashed-job-0-7")
	h.press("enter")
	mustContain(t, h.screen(), "payments-0", "error: TOPIC_AUTHORIZATION_FAILED")
	next := uitest.Snapshot(uitest.T0)
	var kept []model.Txn
	for _, tx := range next.Txns {
		if tx.ID != "crashed-job-0-7" {
			kept = append(kept, tx)
		}
	}
	next.Txns = kept
	h.admin.Push(next)
	h.tick()
	mustContain(t, h.screen(), "crashed-job-0-7", "no longer listed by the coordinator")
}

func TestReadOnlyHasNoAbortKeys(t *testing.T) {
	h := started(t, func(o *Options) { o.ReadOnly = true })
	mustContain(t, h.screen(), "read-only")
	mustNotContain(t, footer(h.screen()), "a abort", "force-terminate")
	h.press("a")
	if h.m.dialog != nil {
		t.Fatal("a opened a dialog in read-only mode")
	}
	h.press("?")
	mustNotContain(t, h.screen(), "force-terminate", "abort a hanging", "abort (asks")
	h.press("esc")
	h.selectID("orders-enricher-v1-2-41")
	h.press("enter", "G", "x", "a")
	if h.m.dialog != nil {
		t.Fatal("x or a opened a dialog in read-only mode")
	}
	mustNotContain(t, h.screen(), "x abort", "force-terminate", "abort on partition")
	if len(h.admin.Executed()) != 0 {
		t.Fatal("read-only mode executed something")
	}
	if h.m.keys.Abort.Enabled() || h.m.keys.AbortPartition.Enabled() || len(h.m.keys.Abort.Keys()) != 0 {
		t.Errorf("abort keys are bound in read-only mode")
	}
}

// footer is the last line of a screen.
func footer(screen string) string {
	lines := strings.Split(screen, "\n")
	return lines[len(lines)-1]
}
