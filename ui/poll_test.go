package ui

import (
	tea "charm.land/bubbletea/v2"

	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/testutil/uitest"
	"github.com/txnscope/txnscope/model"
)

func TestFirstRefreshShowsTheClusterAndSchedulesTheNext(t *testing.T) {
	h := started(t)
	if n := h.admin.Refreshes(); n != 1 {
		t.Fatalf("Init refreshed %d times, want 1", n)
	}
	if prev := h.admin.Prevs()[0]; prev != nil {
		t.Errorf("the first Refresh got a prev snapshot")
	}
	tk, ok := h.lastTick()
	if !ok || tk.d != 2*time.Second {
		t.Errorf("next poll scheduled in %v, want 2s", tk.d)
	}
	mustContain(t, h.screen(), "127.0.0.1:9092", "3 brokers", "10 ids", "Ongoing 6", "connected",
		"crashed-job-0-7", "orders-enricher-v1-2-41")
}

func TestTickRefreshesWithThePreviousSnapshotAndRecordsEvents(t *testing.T) {
	h := started(t)
	first := h.m.data.snap
	next := uitest.Snapshot(uitest.T0)
	next.TakenAt = uitest.T0.Add(2 * time.Second)
	for i := range next.Txns {
		if next.Txns[i].ID == "orders-enricher-v1-0-41" {
			next.Txns[i].State, next.Txns[i].StartUnixMs, next.Txns[i].Partitions = model.CompleteCommit, 0, nil
		}
	}
	h.admin.Push(next)
	h.tick()
	if prevs := h.admin.Prevs(); len(prevs) != 2 || prevs[1] != first {
		t.Fatalf("the second Refresh should get the first snapshot as prev")
	}
	st := h.m.hist.Stats("orders-enricher-v1-0-41")
	if st.Commits != 1 || st.Last != model.Committed {
		t.Errorf("commit not recorded: %+v", st)
	}
	h.press("e")
	mustContain(t, h.screen(), "events", "committed", "orders-enricher-v1-0-41")
}

func TestStaleTicksAreDropped(t *testing.T) {
	h := started(t)
	h.press("r") // refreshes now; the tick that was pending is obsolete
	n := h.admin.Refreshes()
	h.send(tickMsg{id: 1})
	if h.admin.Refreshes() != n {
		t.Errorf("an obsolete tick started a refresh")
	}
}

func TestRefreshesNeverOverlap(t *testing.T) {
	h := started(t)
	cmd := h.m.refresh() // in flight, reply not delivered yet
	before := h.admin.Refreshes()
	h.press("r")
	h.send(tickMsg{id: h.m.poll.tick})
	if got := h.admin.Refreshes(); got != before {
		t.Fatalf("a second refresh started while one was in flight")
	}
	h.run(cmd) // the reply arrives: the refresh asked for meanwhile runs now
	if got := h.admin.Refreshes(); got != before+2 {
		t.Errorf("refreshes = %d, want %d (the pending one, then the one asked for)", got, before+2)
	}
	if h.m.poll.busy {
		t.Errorf("still busy after the replies")
	}
}

func TestOlderGenerationRepliesAreDropped(t *testing.T) {
	h := started(t)
	cur := h.m.data.snap
	h.m.poll.busy = true
	h.send(refreshedMsg{gen: h.m.poll.gen - 1, data: cluster{snap: uitest.Big(3, uitest.T0)}})
	if h.m.data.snap != cur {
		t.Errorf("a reply from an older generation replaced the snapshot")
	}
}

func TestBackoff(t *testing.T) {
	for _, c := range []struct {
		interval time.Duration
		n        int
		want     time.Duration
	}{
		{2 * time.Second, 1, 2 * time.Second},
		{2 * time.Second, 2, 4 * time.Second},
		{2 * time.Second, 4, 16 * time.Second},
		{2 * time.Second, 5, 30 * time.Second},
		{2 * time.Second, 50, 30 * time.Second},
		{time.Minute, 3, time.Minute},
	} {
		if got := backoff(c.interval, c.n); got != c.want {
			t.Errorf("backoff(%v, %d) = %v, want %v", c.interval, c.n, got, c.want)
		}
	}
}

// errRefused is what a client sees from a broker that is gone.
var errRefused = errors.New("cannot reach the cluster: connection refused")

// down makes the fake cluster stop answering anything.
func down(h *harness) {
	h.admin.Fail(errRefused)
	h.admin.SetPing(errRefused)
}

// contact is one poll timer firing: how long after the start it fired and
// what it asked the cluster.
type contact struct {
	at           time.Duration
	pings, fulls int
}

// tickFor fires the poll timer until d has passed, recording each firing.
func (h *harness) tickFor(d time.Duration) []contact {
	h.t.Helper()
	start := h.now
	var out []contact
	for h.now.Sub(start) < d {
		p, f := h.admin.Pings(), h.admin.Refreshes()
		h.tick()
		out = append(out, contact{at: h.now.Sub(start), pings: h.admin.Pings() - p, fulls: h.admin.Refreshes() - f})
	}
	return out
}

func TestAnOutageShowsAtOnceKeepsTheDataAndBacksOffTheFullRefresh(t *testing.T) {
	h := started(t)
	down(h)
	h.tick()
	s := h.screen()
	mustContain(t, s, "disconnected", "connection refused", "retrying in 2s", "crashed-job-0-7", "orders-enricher-v1-2-41")

	// From the first failure on, the full refresh backs off 2, 4, 8, 16, 30,
	// 30 s while a probe asks every interval in between.
	var fulls []time.Duration
	for _, c := range h.tickFor(95 * time.Second) {
		if c.pings+c.fulls != 1 {
			t.Fatalf("at +%v the timer sent %d probes and %d refreshes, want one request", c.at, c.pings, c.fulls)
		}
		if c.at%(2*time.Second) != 0 {
			t.Fatalf("a request at +%v, off the 2s interval", c.at)
		}
		if c.fulls == 1 {
			fulls = append(fulls, c.at)
		}
	}
	want := []time.Duration{2 * time.Second, 6 * time.Second, 14 * time.Second, 30 * time.Second, 60 * time.Second, 90 * time.Second}
	if !slices.Equal(fulls, want) {
		t.Errorf("full refreshes at %v, want %v", fulls, want)
	}
	s = h.screen()
	mustContain(t, s, "disconnected", "STALE", "data 1m38s old", "retrying in 2s", "connection refused",
		"crashed-job-0-7", "orders-enricher-v1-2-41")
}

func TestTheClusterAnsweringAgainRefreshesAtOnce(t *testing.T) {
	h := started(t)
	down(h)
	h.tickFor(40 * time.Second) // the full refresh is now 30 s apart
	if tk, _ := h.lastTick(); tk.d != 2*time.Second {
		t.Fatalf("while away the next request is in %v, want 2s", tk.d)
	}

	back := uitest.Snapshot(h.now)
	back.Txns = append(back.Txns, model.Txn{ID: "began-while-away", State: model.Ongoing, ProducerID: 9900,
		TimeoutMs: 60000, StartUnixMs: h.now.UnixMilli(), Described: true})
	back.Sort()
	h.admin.Push(back)
	h.admin.SetPing(nil)
	answered := h.now
	fulls := h.admin.Refreshes()
	h.tick()
	if n := h.admin.Refreshes() - fulls; n != 1 {
		t.Fatalf("the probe's answer started %d refreshes, want 1", n)
	}
	if took := h.now.Sub(answered); took > 2*time.Second {
		t.Errorf("fresh data %v after the cluster answered, want within one interval", took)
	}
	s := h.screen()
	mustContain(t, s, "connected", "refreshed 0s ago", "began-while-away")
	mustNotContain(t, s, "disconnected", "STALE", "connection refused", "retrying")
	if tk, _ := h.lastTick(); tk.d != 2*time.Second {
		t.Errorf("after recovering the interval is %v, want 2s", tk.d)
	}
	// Healthy again: every tick is a full refresh, no probes.
	pings := h.admin.Pings()
	h.tickFor(10 * time.Second)
	if h.admin.Pings() != pings {
		t.Errorf("probes while the cluster answers")
	}
}

// A broker that has just restarted answers Metadata before its transaction
// coordinator has loaded: the first refresh after the outage can fail. The next
// one comes an interval later, not after the outage's long backoff.
func TestARefreshFailingRightAfterTheOutageIsRetriedAnIntervalLater(t *testing.T) {
	h := started(t)
	down(h)
	h.tickFor(40 * time.Second)
	h.admin.SetPing(nil)
	h.admin.Fail(errors.New("cannot list transactions: COORDINATOR_LOAD_IN_PROGRESS"))
	h.admin.Push(uitest.Snapshot(h.now))
	answered := h.now
	h.tick()
	mustContain(t, h.screen(), "disconnected", "COORDINATOR_LOAD_IN_PROGRESS", "retrying in 2s")
	h.tick()
	mustContain(t, h.screen(), "connected")
	if took := h.now.Sub(answered); took > 4*time.Second {
		t.Errorf("fresh data %v after the cluster answered, want within two intervals", took)
	}
}

// A cluster that answers the probe but fails the full refresh (a coordinator
// that keeps failing, say) must not get a full refresh every interval.
func TestAClusterThatAnswersButFailsIsNotHammered(t *testing.T) {
	h := started(t)
	h.admin.Fail(errors.New("cannot list transactions: NOT_COORDINATOR"))
	var fulls []time.Duration
	for _, c := range h.tickFor(2 * time.Minute) {
		if c.fulls > 0 {
			fulls = append(fulls, c.at)
		}
	}
	if len(fulls) > 10 {
		t.Errorf("%d full refreshes in 2 minutes at %v, want the backoff", len(fulls), fulls)
	}
	if n := len(fulls); n < 2 || fulls[n-1]-fulls[n-2] != maxBackoff {
		t.Errorf("full refreshes at %v: the last two should be %v apart", fulls, maxBackoff)
	}
	// The probes that answer change nothing, so the header counts down to the
	// next full refresh, not to the next probe.
	last := fulls[len(fulls)-1]
	mustContain(t, h.screen(), "NOT_COORDINATOR", "STALE", "crashed-job-0-7",
		fmt.Sprintf("retrying in %ds", int((last+maxBackoff-2*time.Minute)/time.Second)))
}

func TestRefreshKeyDuringAProbeRefreshesOnceItAnswers(t *testing.T) {
	h := started(t)
	down(h)
	h.tickFor(10 * time.Second)
	cmd := h.m.probe() // in flight, reply not delivered yet
	fulls := h.admin.Refreshes()
	h.press("r")
	if h.admin.Refreshes() != fulls {
		t.Fatal("r started a refresh while a probe was in flight")
	}
	mustContain(t, h.screen(), "retrying…")
	h.run(cmd)
	if n := h.admin.Refreshes() - fulls; n != 1 {
		t.Errorf("after the probe's reply %d refreshes ran, want the one asked for", n)
	}
}

func TestUnreachableAtStart(t *testing.T) {
	h := newHarness(t)
	down(h)
	h.run(h.m.Init())
	mustContain(t, h.screen(), "cannot reach the cluster yet", "retrying in 2s", "connection refused")
	h.tickFor(time.Minute)
	mustContain(t, h.screen(), "cannot reach the cluster yet", "retrying in 2s")
	h.admin.SetPing(nil)
	h.admin.Push(uitest.Snapshot(uitest.T0))
	h.tick()
	mustContain(t, h.screen(), "connected", "crashed-job-0-7")
}

func TestQuitCancelsAProbeInFlight(t *testing.T) {
	h := started(t)
	down(h)
	h.tick()
	h.admin.Block = make(chan struct{})
	cmd := h.m.probe()
	done := make(chan error, 1)
	go func() { done <- cmd().(refreshedMsg).err }()
	h.press("q")
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the probe in flight ended with %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("quitting did not cancel the probe in flight")
	}
}

func TestQuitCancelsWhatIsInFlight(t *testing.T) {
	h := started(t)
	h.admin.Block = make(chan struct{})
	cmd := h.m.refresh()
	done := make(chan error, 1)
	go func() { done <- cmd().(refreshedMsg).err }()
	h.press("q")
	if !h.quit {
		t.Fatal("q did not quit")
	}
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the in-flight refresh ended with %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("quitting did not cancel the refresh in flight")
	}
}

func TestHiddenIDsAreMentioned(t *testing.T) {
	h := newHarness(t)
	s := uitest.Snapshot(uitest.T0)
	s.Hidden = "some transactional ids are not visible (DescribeTransactions denied)"
	h.admin.Push(s)
	h.run(h.m.Init())
	mustContain(t, h.screen(), "some transactional ids are not visible")
}

// logAdmin is the fake Admin with the coordinators' log followed.
type logAdmin struct {
	*uitest.Admin
	live chan struct{}
}

func (a logAdmin) LogLive() <-chan struct{} { return a.live }

// The moment the coordinators' log has been read, the UI refreshes, rather
// than at its next tick: from then on its history is exact.
func TestRefreshesWhenTheLogIsLive(t *testing.T) {
	live := make(chan struct{})
	h := newHarness(t, func(o *Options) { o.Admin = logAdmin{Admin: o.Admin.(*uitest.Admin), live: live} })
	h.admin.Push(uitest.Snapshot(uitest.T0))
	h.deliver(h.m.refresh()) // the first poll
	cmd := h.m.awaitLog()
	if cmd == nil {
		t.Fatal("no wait for the log")
	}
	got := make(chan tea.Msg, 1)
	go func() { got <- cmd() }()
	select {
	case <-got:
		t.Fatal("a message before the log is live")
	case <-time.After(20 * time.Millisecond):
	}
	close(live)
	msg := <-got
	if _, ok := msg.(logLiveMsg); !ok {
		t.Fatalf("got %T, want logLiveMsg", msg)
	}
	before := h.admin.Refreshes()
	_, next := h.m.Update(msg)
	h.deliver(next)
	if h.admin.Refreshes() != before+1 {
		t.Fatalf("no refresh when the log became live")
	}
	// An Admin without the log: nothing to wait for.
	if newHarness(t).m.awaitLog() != nil {
		t.Fatal("a wait without a log")
	}
}

// TestManyListedIDsStretchTheInterval: at 500,000 ids on polls (every refresh lists them all) the
// next poll waits 5 s, not the 2 s asked for, and the header says why; read from the
// coordinators' log, the same ids cost nothing more and the interval stands.
func TestManyListedIDsStretchTheInterval(t *testing.T) {
	big := func(log bool) *model.Snapshot {
		s := uitest.Snapshot(uitest.T0)
		s.Source.Log = log
		for i := len(s.Txns); i < 500_000; i++ {
			s.Txns = append(s.Txns, model.Txn{ID: fmt.Sprintf("bulk-%06d", i), State: model.CompleteCommit, Coordinator: 1})
		}
		return s
	}
	for _, tc := range []struct {
		log  bool
		want time.Duration
	}{{false, 5 * time.Second}, {true, 2 * time.Second}} {
		h := newHarness(t)
		h.admin.Push(big(tc.log))
		h.run(h.m.Init())
		h.send(tea.WindowSizeMsg{Width: 200, Height: 24})
		tk, ok := h.lastTick()
		if !ok || tk.d != tc.want {
			t.Errorf("log %v: next poll in %v, want %v", tc.log, tk.d, tc.want)
		}
		shown := strings.Contains(h.screen(), "every 5s at 500,")
		if shown != !tc.log {
			t.Errorf("log %v: the header says the stretched interval: %v\n%s", tc.log, shown, h.screen())
		}
	}
}
