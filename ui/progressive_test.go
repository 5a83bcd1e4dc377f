package ui

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/txnscope/txnscope/internal/testutil/uitest"
	"github.com/txnscope/txnscope/model"
	"github.com/txnscope/txnscope/views"
)

// deliver runs cmd and takes its reply in, and returns what Update asked
// for next without running it: one step of the poll loop at a time.
func (h *harness) deliver(cmd tea.Cmd) tea.Cmd {
	h.t.Helper()
	if cmd == nil {
		h.t.Fatal("no request in flight")
	}
	_, next := h.m.Update(cmd())
	return next
}

// loading is a harness whose first poll listed the fixture and described
// nothing; batch ids are described per request, from the fixture.
func loading(t *testing.T, truth *model.Snapshot, batch int) (*harness, tea.Cmd) {
	t.Helper()
	h := newHarness(t)
	h.m.batch, h.m.batches = batch, math.MaxInt32 // batches of batch ids, however many
	h.admin.Truth = truth
	h.admin.Push(uitest.Listed(truth))
	return h, h.deliver(h.m.refresh())
}

// describeAll delivers batches until none follows.
func (h *harness) describeAll(cmd tea.Cmd) {
	h.t.Helper()
	for i := 0; cmd != nil; i++ {
		if i > 1000 {
			h.t.Fatal("the describe batches never end")
		}
		cmd = h.deliver(cmd)
	}
}

func TestFirstFrameShowsListedRowsBeforeAnyDescribe(t *testing.T) {
	truth := uitest.Snapshot(uitest.T0)
	h, cmd := loading(t, truth, 4)
	if n := len(h.admin.Asked()); n != 0 {
		t.Fatalf("%d describes before the first frame", n)
	}
	first := h.screen()
	mustContain(t, first, "10 ids", "Ongoing 6", "describing 10 of 10", "orders-enricher-v1-2-41", "4003/…", "…")
	for _, made := range []string{"57s", "1m", "95%"} {
		if strings.Contains(first, made) {
			t.Errorf("a listed-only row shows %q, which only a describe can tell:\n%s", made, first)
		}
	}
	var seen []string
	for cmd != nil {
		cmd = h.deliver(cmd)
		seen = append(seen, headerProgress(h.screen()))
	}
	want := []string{"describing 6 of 10", "describing 2 of 10", ""}
	if !slices.Equal(seen, want) {
		t.Errorf("header progress = %q, want %q", seen, want)
	}
	if !reflect.DeepEqual(h.m.data.snap.Txns, truth.Txns) {
		t.Errorf("after the load the rows differ from a full refresh's")
	}
	if h.m.hist.Len() != 0 {
		t.Errorf("describing recorded events: %+v", h.m.hist.Latest(10))
	}
	if tk, ok := h.lastTick(); !ok || tk.d != 2*time.Second {
		t.Errorf("after the load the next poll is in %v, want the interval", tk.d)
	}
}

// headerProgress is the "describing N of M" part of the first header line.
func headerProgress(screen string) string {
	line, _, _ := strings.Cut(screen, "\n")
	i := strings.Index(line, "describing")
	if i < 0 {
		return ""
	}
	out, _, _ := strings.Cut(line[i:], " ·")
	return strings.TrimSpace(out)
}

func TestIDsOnScreenThenOpenOnesAreDescribedFirst(t *testing.T) {
	truth := uitest.Big(600, uitest.T0)
	h, cmd := loading(t, truth, 40)
	onScreen := h.m.onScreen()
	if len(onScreen) < 10 {
		t.Fatalf("only %d rows on screen", len(onScreen))
	}
	h.press("end") // rows still pending come on screen while the first batch is out
	below := h.m.onScreen()
	cmd = h.deliver(cmd)
	asked := h.admin.Asked()[0]
	if !slices.Equal(asked[:len(onScreen)], onScreen) {
		t.Errorf("the first batch does not start with the rows on screen:\n%v\n%v", asked[:len(onScreen)], onScreen)
	}
	for _, id := range asked[len(onScreen):] {
		if tx, _ := truth.Txn(id); !tx.State.Open() {
			t.Errorf("idle %s described before every open id", id)
		}
	}
	h.deliver(cmd)
	var want []string
	for _, id := range below {
		if !slices.Contains(asked, id) {
			want = append(want, id)
		}
	}
	if got := h.admin.Asked()[1]; len(want) == 0 || !slices.Equal(got[:len(want)], want) {
		t.Errorf("after scrolling, the next batch does not start with the pending rows on screen: %v, want %v first", got[:min(len(got), len(want))], want)
	}
}

func TestProgressiveLoadReportsNoEvents(t *testing.T) {
	truth := uitest.Snapshot(uitest.T0)
	h, cmd := loading(t, truth, 3)
	cmd = h.deliver(cmd) // some rows described, the rest pending

	// A poll in the middle of the load, once the interval is up: the open
	// rows described by the poll itself, the idle ones (some described by
	// now) listed only.
	mid := uitest.Snapshot(uitest.T0) // the same transactions, two seconds on
	mid.TakenAt = uitest.T0.Add(2 * time.Second)
	for i := range mid.Txns {
		if !mid.Txns[i].State.Open() {
			mid.Txns[i] = uitest.Listed(&model.Snapshot{Txns: mid.Txns[i : i+1]}).Txns[0]
		}
	}
	h.admin.Push(mid)
	h.now = h.now.Add(2 * time.Second)
	polls := h.admin.Refreshes()
	cmd = h.deliver(cmd)
	cmd = h.deliver(cmd)
	if h.admin.Refreshes() != polls+1 || h.m.data.snap.TakenAt != mid.TakenAt {
		t.Fatalf("no poll once the interval was up during the load")
	}
	h.describeAll(cmd)
	full := uitest.Snapshot(uitest.T0)
	full.TakenAt = uitest.T0.Add(4 * time.Second)
	h.admin.Push(full)
	h.tick()
	if h.m.data.sum.Pending != 0 {
		t.Fatalf("%d rows still pending", h.m.data.sum.Pending)
	}
	if n := h.m.hist.Len(); n != 0 {
		t.Errorf("a row going from listed to described made %d events: %+v", n, h.m.hist.Latest(n))
	}
}

func TestADescribeThatFindsAChangeReportsIt(t *testing.T) {
	listed := uitest.Snapshot(uitest.T0)
	truth := uitest.Snapshot(uitest.T0)
	truth.TakenAt = uitest.T0.Add(time.Second)
	for i := range truth.Txns {
		if truth.Txns[i].ID == "orders-enricher-v1-0-41" {
			truth.Txns[i].State, truth.Txns[i].StartUnixMs, truth.Txns[i].Partitions = model.CompleteCommit, 0, nil
		}
	}
	h := newHarness(t)
	h.admin.Truth = truth
	h.admin.Push(uitest.Listed(listed))
	h.describeAll(h.deliver(h.m.refresh()))
	evs := h.m.hist.Latest(10)
	if len(evs) != 1 || evs[0].ID != "orders-enricher-v1-0-41" || evs[0].Kind != model.Committed {
		t.Errorf("events = %+v, want the commit the describe found", evs)
	}
}

func TestStaleDescribeBatchIsDropped(t *testing.T) {
	truth := uitest.Snapshot(uitest.T0)
	h, cmd := loading(t, truth, 4)
	late := cmd() // a batch whose reply is still on its way ...
	h.m.poll.busy, h.m.poll.batch = false, false
	h.admin.Push(uitest.Listed(truth))
	h.m.refresh() // ... when a newer request starts
	shown := h.m.data.snap
	h.send(late)
	if h.m.data.snap != shown || h.m.data.sum.Pending != 10 {
		t.Errorf("a batch of an older generation was taken in (pending %d)", h.m.data.sum.Pending)
	}
	if !h.m.poll.busy {
		t.Errorf("the stale batch ended the request in flight")
	}
}

func TestDescribeFailureShowsDisconnectedAndResumes(t *testing.T) {
	truth := uitest.Snapshot(uitest.T0)
	h, cmd := loading(t, truth, 4)
	h.admin.DescribeErr = errors.New("dial tcp 127.0.0.1:9092: connect: connection refused")
	h.admin.SetPing(h.admin.DescribeErr)
	h.run(cmd)
	mustContain(t, h.screen(), "disconnected", "connection refused", "describing 10 of 10")
	h.admin.DescribeErr = nil
	h.admin.SetPing(nil)
	h.admin.Push(uitest.Listed(truth))
	for i := 0; h.m.data.sum.Pending > 0 && i < 10; i++ {
		h.tick()
	}
	if h.m.data.sum.Pending != 0 || h.m.poll.err != "" {
		t.Fatalf("the load did not resume: pending %d, err %q", h.m.data.sum.Pending, h.m.poll.err)
	}
	if !strings.Contains(h.screen(), "connected") || strings.Contains(h.screen(), "disconnected") {
		t.Errorf("not back to connected:\n%s", h.screen())
	}
}

func TestASlowRefreshSaysSoInTheHeader(t *testing.T) {
	h := slowRefresh(t)
	mustContain(t, h.screen(), "refresh 2.7s > 2s")
	h.admin.OnPoll = nil
	h.tick()
	if strings.Contains(h.screen(), "refresh 2.7s") {
		t.Errorf("the note outlived a fast refresh")
	}
}

// slowRefresh is a harness whose first poll took 2.7 s against a 2 s
// interval.
func slowRefresh(t *testing.T) *harness {
	h := newHarness(t)
	h.admin.OnPoll = func() { h.now = h.now.Add(2700 * time.Millisecond) }
	h.admin.Push(uitest.Snapshot(uitest.T0))
	h.run(h.m.Init())
	return h
}

// A batch's work (copying the snapshot, the screens' data, the list's rows)
// is done in the command (command-ms); the UI goroutine only swaps it in
// (ui-ms), which is what a key may wait for.
func BenchmarkDescribeBatch(b *testing.B) {
	for _, n := range []int{100000, 500000} {
		b.Run(fmt.Sprintf("ids=%d", n), func(b *testing.B) {
			truth := uitest.Big(n, uitest.T0)
			h := newHarness(b)
			h.admin.Truth = truth
			h.admin.Push(uitest.Listed(truth))
			cmd := h.deliver(h.m.refresh())
			var command, ui time.Duration
			for b.Loop() {
				start := time.Now()
				msg := cmd().(describedMsg)
				command += time.Since(start)
				start = time.Now()
				h.m.described(msg)
				ui += time.Since(start)
				h.m.poll.gen, h.m.poll.busy, h.m.poll.batch = msg.gen, true, true
				h.m.data = cluster{snap: msg.base, sum: h.m.data.sum}
				h.m.data.sum.Pending = n
			}
			b.ReportMetric(float64(command.Microseconds())/float64(b.N)/1000, "command-ms")
			b.ReportMetric(float64(ui.Microseconds())/float64(b.N)/1000, "ui-ms")
		})
	}
}

// Taking a batch or a poll in costs the UI goroutine no sort: the list's
// rows come sorted from the command, for the query the list had when it
// started (a key waits for that take-in, and 500,000 rows take ~100 ms).
func TestTheListsRowsComeSortedFromTheCommand(t *testing.T) {
	h, cmd := loading(t, uitest.Big(300, uitest.T0), 50)
	h.deliver(cmd)
	sorted := h.m.data.rows
	if rows := h.list().win.rows; len(rows) == 0 || len(sorted) == 0 || &rows[0] != &sorted[0] {
		t.Errorf("the list sorted its rows itself on the UI goroutine")
	}
	h.press("f") // another filter: rows for it are sorted now, once
	if h.m.data.rowsQuery == h.list().query {
		t.Fatalf("the filter did not change the query")
	}
	if rows := h.list().win.rows; len(rows) > 0 && &rows[0] == &sorted[0] {
		t.Errorf("rows of another query were shown")
	}
}

// A load takes a quarter of the ids per batch once past the first one, so
// that ten times the ids cost ten times the copying, not a hundred.
func TestLoadTakesAFewBatchesWhateverItsSize(t *testing.T) {
	for _, tc := range []struct{ total, min, want int }{
		{10, 4, 4},
		{100_000, 50_000, 50_000},
		{500_000, 50_000, 125_000},
		{5_000_000, 50_000, 1_250_000},
	} {
		if got := batchOf(tc.total, tc.min, loadBatches); got != tc.want {
			t.Errorf("batchOf(%d, %d) = %d, want %d", tc.total, tc.min, got, tc.want)
		}
	}
	truth := uitest.Big(6000, uitest.T0)
	h := newHarness(t)
	h.m.batch = 500 // a quarter (1,500) is more
	h.admin.Truth = truth
	h.admin.Push(uitest.Listed(truth))
	h.describeAll(h.deliver(h.m.refresh()))
	var sizes []int
	for _, a := range h.admin.Asked() {
		sizes = append(sizes, len(a))
	}
	// The first batch (the rows on screen, the open ones) is at most firstBatch.
	if want := []int{1500, 1500, 1500, 1500}; !slices.Equal(sizes, want) {
		t.Fatalf("batches of %v ids, want %v", sizes, want)
	}
}

// While the coordinators' log is first read, only the open ids and those
// on screen are described: the log describes the rest once it is through,
// and the header says so instead of counting down a load that is not asked.
func TestWhileTheLogIsReadOnlyOpenIDsAreDescribed(t *testing.T) {
	truth := uitest.Big(600, uitest.T0)
	h := newHarness(t)
	h.m.batch, h.m.batches = 40, math.MaxInt32
	h.admin.Truth = truth
	listed := uitest.Listed(truth)
	listed.Source = model.Source{Why: "reading __transaction_state", Reading: true}
	h.admin.Push(listed)
	cmd := h.deliver(h.m.refresh())
	onScreen := h.m.onScreen()
	open := 0
	for _, tx := range truth.Txns {
		if tx.State.Open() {
			open++
		}
	}
	if open == 0 || open == len(truth.Txns) {
		t.Fatalf("the fixture has %d open ids of %d", open, len(truth.Txns))
	}
	for cmd != nil && h.m.poll.batch {
		cmd = h.deliver(cmd)
	}
	asked := map[string]bool{}
	for _, batch := range h.admin.Asked() {
		for _, id := range batch {
			asked[id] = true
		}
	}
	for id := range asked {
		if tx, _ := truth.Txn(id); !tx.State.Open() && !slices.Contains(onScreen, id) {
			t.Errorf("%s, neither open nor on screen, described while the log is read", id)
		}
	}
	for _, tx := range truth.Txns {
		if tx.State.Open() && !asked[tx.ID] {
			t.Errorf("open %s not described while the log is read", tx.ID)
		}
	}
	if tk, ok := h.lastTick(); !ok || tk.d != 2*time.Second {
		t.Errorf("after the open ids the next request is %+v, want the 2 s tick (no describe of the rest)", tk)
	}
	pending := h.m.data.sum.Pending
	if pending == 0 {
		t.Fatal("nothing left pending: the rest was described")
	}
	mustContain(t, h.screen(), fmt.Sprintf("%s of 600 described once the log is read", views.Count(pending)))
	if p := headerProgress(h.screen()); p != "" {
		t.Errorf("the header still counts down a load: %q", p)
	}
}
