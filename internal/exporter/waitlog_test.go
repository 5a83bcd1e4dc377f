package exporter

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/buildinfo"
	"github.com/txnscope/txnscope/internal/testutil/uitest"
	"github.com/txnscope/txnscope/model"
)

// following is a fake cluster whose coordinators' log is being read.
type following struct {
	*uitest.Admin
	live chan struct{}
}

func (f following) LogLive() <-chan struct{} { return f.live }

// TestListingRowsLetGoWhileTheLogIsRead: while the log is first read, the
// exporter serves the listing's values but keeps none of its rows, and
// refreshes when the log is live, not an interval (an hour here) later.
// At 2,000,000 ids the listing's rows kept beside those the log's reader
// builds were half the exporter's peak.
func TestListingRowsLetGoWhileTheLogIsRead(t *testing.T) {
	a := following{&uitest.Admin{}, make(chan struct{})}
	listed := uitest.Snapshot(uitest.T0)
	listed.Source = model.Source{Why: "reading __transaction_state", Reading: true}
	a.Push(listed)
	logged := uitest.Snapshot(uitest.T0)
	logged.Source = model.Source{Log: true}
	a.Push(logged)
	var letGo atomic.Int32
	e := New(Options{Admin: a, Refresh: time.Hour, Build: buildinfo.Info{Version: "v"}, Now: func() time.Time { return uitest.T0 }, MaxIDSeries: 100,
		LetGo: func() { letGo.Add(1) }})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.Run(ctx) }()
	defer func() { cancel(); <-done }()

	wait := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatal(what)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	wait("no values from the listing", func() bool {
		return len(named(series(t, e), "txnscope_transaction_open_age_seconds")) == 6
	})
	time.Sleep(50 * time.Millisecond)
	if n := a.Refreshes(); n != 1 {
		t.Fatalf("%d refreshes before the log was live, want 1: the second waits for the log", n)
	}
	if n := letGo.Load(); n != 1 {
		t.Errorf("told %d times it let go of the listing's rows, want 1 (the memory limit follows the heap down)", n)
	}
	close(a.live)
	wait("no refresh once the log was live", func() bool { return a.Refreshes() == 2 })
	if prevs := a.Prevs(); prevs[1] != nil {
		t.Fatalf("the refresh after the log went live was given the listing's rows (%d), want none", len(prevs[1].Txns))
	}
	wait("the log's snapshot was not kept", func() bool {
		e.c.mu.Lock()
		defer e.c.mu.Unlock()
		return e.c.st.refreshed && e.c.v.States != nil
	})
	if got := len(named(series(t, e), "txnscope_transaction_open_age_seconds")); got != 6 {
		t.Fatalf("%d ages served from the log's snapshot, want 6", got)
	}
}
