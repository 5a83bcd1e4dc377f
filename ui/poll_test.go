package ui

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/txnscope/txnscope/model"
	"github.com/txnscope/txnscope/ui/uitest"
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
	first := h.m.snap
	next := uitest.Snapshot(uitest.T0)
	next.TakenAt = uitest.T0.Add(2 * time.Second)
	for i := range next.Txns {
		if next.Txns[i].ID == "orders-enricher-v1-0-41" {
			next.Txns[i].State, next.Txns[i].Start, next.Txns[i].Partitions = model.CompleteCommit, time.Time{}, nil
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
	cur := h.m.snap
	h.m.poll.busy = true
	h.send(refreshedMsg{gen: h.m.poll.gen - 1, snap: uitest.Big(3, uitest.T0)})
	if h.m.snap != cur {
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

func TestErrorsKeepTheDataMarkItStaleAndBackOff(t *testing.T) {
	h := started(t)
	h.admin.Fail(errors.New("dial tcp 127.0.0.1:9092: connect: connection refused"))
	h.tick()
	s := h.screen()
	mustContain(t, s, "disconnected", "retrying in 2s", "connection refused", "crashed-job-0-7")
	h.tick()
	h.tick()
	if tk, _ := h.lastTick(); tk.d != 8*time.Second {
		t.Errorf("third failure backs off %v, want 8s", tk.d)
	}
	h.now = h.now.Add(3 * time.Second)
	h.send(clockMsg{})
	mustContain(t, h.screen(), "STALE", "retrying in 5s", "crashed-job-0-7")

	h.admin.Push(uitest.Snapshot(uitest.T0))
	h.tick()
	s = h.screen()
	mustNotContain(t, s, "STALE", "disconnected", "connection refused")
	mustContain(t, s, "connected")
	if tk, _ := h.lastTick(); tk.d != 2*time.Second {
		t.Errorf("after recovering the interval is %v, want 2s", tk.d)
	}
}

func TestUnreachableAtStart(t *testing.T) {
	h := newHarness(t)
	h.admin.Fail(errors.New("dial tcp: connection refused"))
	h.run(h.m.Init())
	mustContain(t, h.screen(), "cannot reach the cluster yet", "retrying in 2s", "connection refused")
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
