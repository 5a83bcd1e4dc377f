package integration

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/audit"
	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// logScope drives kafkaadmin the way the TUI does with the coordinators' log
// followed: Poll given the previous snapshot, the log's events collected.
type logScope struct {
	mu     sync.Mutex // the subtests share it; Poll runs one at a time, as in the TUI
	t      *testing.T
	c      *kafkaadmin.Client
	prev   *model.Snapshot
	events []model.Event
	own    map[string]model.Txn // the transactions txnscope force-terminated
	ids    map[string]bool      // the ids the scenarios waited on
}

func newLogScope(t *testing.T, bootstrap string) *logScope {
	t.Helper()
	requireLoopback(t, bootstrap)
	c, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: []string{bootstrap}, Timeout: 10 * time.Second, FollowLog: true})
	if err != nil {
		t.Fatalf("kafkaadmin.New(%s): %v", bootstrap, err)
	}
	t.Cleanup(c.Close)
	return &logScope{t: t, c: c, ids: map[string]bool{}}
}

// poll is one Poll; the events count only from snapshots the log made.
func (s *logScope) poll(ctx context.Context) *model.Snapshot {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	snap, err := s.c.Poll(rctx, s.prev)
	if err != nil {
		s.t.Fatalf("Poll: %v", err)
	}
	if snap.Source.Log {
		s.events = append(s.events, snap.Events...)
	} else if snap.Events != nil {
		s.t.Fatalf("events from a snapshot the log did not make: %+v", snap.Source)
	}
	s.prev = snap
	return snap
}

// live polls until the log is the source.
func (s *logScope) live(ctx context.Context) *model.Snapshot {
	s.t.Helper()
	for {
		snap := s.poll(ctx)
		if snap.Source.Log {
			return snap
		}
		select {
		case <-ctx.Done():
			s.t.Fatalf("the log never became the source: %+v", snap.Source)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// until polls once a second (slower than the producers below) until ok
// accepts the events of id.
func (s *logScope) until(ctx context.Context, id string, ok func([]model.Event) bool) []model.Event {
	s.t.Helper()
	s.mu.Lock()
	s.ids[id] = true
	s.mu.Unlock()
	for {
		s.poll(ctx)
		evs := s.of(id)
		if ok(evs) {
			return evs
		}
		select {
		case <-ctx.Done():
			s.t.Fatalf("%s: waiting for its events: %v; got %s", id, ctx.Err(), kindsOf(evs))
		case <-time.After(time.Second):
		}
	}
}

func (s *logScope) of(id string) []model.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []model.Event
	for _, e := range s.events {
		if e.ID == id {
			out = append(out, e)
		}
	}
	return out
}

func kindsOf(evs []model.Event) string {
	var out []string
	for _, e := range evs {
		out = append(out, string(e.Kind))
	}
	return strings.Join(out, ", ")
}

func count(evs []model.Event, k model.EventKind) int {
	n := 0
	for _, e := range evs {
		if e.Kind == k {
			n++
		}
	}
	return n
}

// ending is the one event of evs that ends a transaction, or fails.
func ending(t *testing.T, id string, evs []model.Event) model.Event {
	t.Helper()
	var out []model.Event
	for _, e := range evs {
		if e.Kind.Ends() {
			out = append(out, e)
		}
	}
	if len(out) != 1 {
		t.Fatalf("%s: %d endings in %s, want one", id, len(out), kindsOf(evs))
	}
	return out[0]
}

// Every transition, exactly, from the coordinators' log, under both
// transaction versions: what polling could only guess.
func TestLogHistory(t *testing.T) {
	t.Parallel()
	for _, cv := range clientVersions() {
		t.Run(cv.name, func(t *testing.T) {
			t.Parallel()
			bootstrap := Bootstrap(t)
			// Alone it takes 17 s; CI's race step shares the broker with the
			// whole suite, and 90 s ran out once before the last replay.
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			t.Cleanup(cancel) // the subtests run after this function returns
			tp := topicOn(ctx, t, newAdmin(t, bootstrap))
			// A fresh broker has no log until a transactional id asks for a coordinator.
			first := producer(t, bootstrap, name(t, "first"), time.Minute, cv.opts...)
			openTxn(ctx, t, first, tp, 1, "first")
			endTxn(ctx, t, first, true)
			sc := newLogScope(t, bootstrap)
			sc.live(ctx)
			t.Run("scenarios", func(t *testing.T) { logScenarios(ctx, t, sc, bootstrap, tp, cv) })
			sc.checkDump(ctx, t)
		})
	}
}

func logScenarios(ctx context.Context, t *testing.T, sc *logScope, bootstrap string, tp model.TopicPartition, cv clientVersion) {
	t.Run("twenty commits in two seconds", func(t *testing.T) {
		t.Parallel()
		id := name(t, "busy")
		p := producer(t, bootstrap, id, time.Minute, cv.opts...)
		for i := range 20 {
			openTxn(ctx, t, p, tp, 1, fmt.Sprint(i))
			endTxn(ctx, t, p, true)
			time.Sleep(100 * time.Millisecond)
		}
		sc.until(ctx, id, func(evs []model.Event) bool { return count(evs, model.Committed) >= 20 })
		time.Sleep(3 * time.Second) // nothing more comes
		sc.poll(ctx)
		evs := sc.of(id)
		if count(evs, model.Committed) != 20 || count(evs, model.Began) != 20 || len(evs) != 60 {
			t.Fatalf("%s: %d commits, %d begins in %d events (%s), want 20, 20 in 60", id,
				count(evs, model.Committed), count(evs, model.Began), len(evs), kindsOf(evs))
		}
		for _, e := range evs {
			if !e.Logged || (e.Kind == model.Committed && (e.Begun.IsZero() || e.At.Before(e.Begun) || e.Parts != 1)) {
				t.Fatalf("%s: event %+v", id, e)
			}
		}
	})
	t.Run("an abort then a new transaction is an abort", func(t *testing.T) {
		t.Parallel()
		id := name(t, "abort")
		p := producer(t, bootstrap, id, time.Minute, cv.opts...)
		openTxn(ctx, t, p, tp, 1, "a")
		endTxn(ctx, t, p, false)
		openTxn(ctx, t, p, tp, 1, "b")
		evs := sc.until(ctx, id, func(evs []model.Event) bool { return count(evs, model.Began) == 2 })
		if got := kindsOf(evs); got != "began, prepare-abort, aborted, began" {
			t.Fatalf("%s: %s", id, got)
		}
		endTxn(ctx, t, p, true)
	})
	t.Run("the coordinator aborts at the timeout", func(t *testing.T) {
		t.Parallel()
		id := name(t, "timeout")
		p := producer(t, bootstrap, id, 2*time.Second, cv.opts...)
		openTxn(ctx, t, p, tp, 1, "t")
		evs := sc.until(ctx, id, func(evs []model.Event) bool { return count(evs, model.TimedOut) == 1 })
		e := ending(t, id, evs)
		if e.At.Sub(e.Begun) < 2*time.Second {
			t.Fatalf("%s: aborted at timeout %s after it began", id, e.At.Sub(e.Begun))
		}
	})
	t.Run("a second producer with the same id fences the first", func(t *testing.T) {
		t.Parallel()
		id := name(t, "fence")
		p := producer(t, bootstrap, id, time.Minute, cv.opts...)
		openTxn(ctx, t, p, tp, 1, "f")
		// InitProducerId, as every producer sends when it starts, fences p.
		if _, _, err := producer(t, bootstrap, id, time.Minute, cv.opts...).ProducerID(ctx); err != nil {
			t.Fatalf("second producer's InitProducerId: %v", err)
		}
		evs := sc.until(ctx, id, func(evs []model.Event) bool {
			return slices.ContainsFunc(evs, func(e model.Event) bool { return e.Kind.Ends() })
		})
		if e := ending(t, id, evs); e.Kind != model.Fenced {
			t.Fatalf("%s: %s (%s), want fenced", id, e.Kind, kindsOf(evs))
		}
	})
	t.Run("kafka-transactions.sh force-terminates", func(t *testing.T) {
		t.Parallel()
		id := name(t, "ft-admin")
		p := producer(t, bootstrap, id, time.Minute, cv.opts...)
		openTxn(ctx, t, p, tp, 1, "x")
		out, err := exec.CommandContext(ctx, filepath.Join(repoRoot(t), "scripts", "kafka-tools"), "transactions",
			"--bootstrap-server", bootstrap, "forceTerminateTransaction", "--transactionalId", id).CombinedOutput()
		if err != nil {
			t.Fatalf("kafka-transactions.sh forceTerminateTransaction: %v\n%s", err, out)
		}
		evs := sc.until(ctx, id, func(evs []model.Event) bool {
			return slices.ContainsFunc(evs, func(e model.Event) bool { return e.Kind.Ends() })
		})
		if e := ending(t, id, evs); e.Kind != model.ForceTerminated || !strings.Contains(e.Detail, "admin") {
			t.Fatalf("%s: %s %q (%s), want force-terminated by an admin", id, e.Kind, e.Detail, kindsOf(evs))
		}
	})
	t.Run("txnscope force-terminates", func(t *testing.T) {
		t.Parallel()
		id := name(t, "ft-own")
		p := producer(t, bootstrap, id, time.Minute, cv.opts...)
		openTxn(ctx, t, p, tp, 1, "x")
		var tx model.Txn
		for {
			snap := sc.poll(ctx)
			if got, ok := snap.Txn(id); ok && got.State == model.Ongoing && snap.Source.Log {
				tx = got
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		log := audit.New(filepath.Join(t.TempDir(), "audit.log"))
		if err := log.Open(); err != nil {
			t.Fatal(err)
		}
		defer log.Close()
		a := forceTerminate(tx)
		if r := sc.c.Execute(ctx, a, log.Begin("integration", a)); !r.OK() {
			t.Fatalf("force-terminate: %s", r.Summary())
		}
		evs := sc.until(ctx, id, func(evs []model.Event) bool {
			return slices.ContainsFunc(evs, func(e model.Event) bool { return e.Kind.Ends() })
		})
		if e := ending(t, id, evs); e.Kind != model.ForceTerminated || e.Detail != "by txnscope" {
			t.Fatalf("%s: %s %q (%s), want force-terminated by txnscope", id, e.Kind, e.Detail, kindsOf(evs))
		}
		sc.ownTerminate(id, tx)
	})
}

// checkDump holds the events each scenario saw to Kafka's own reading of
// the same log: kafka-dump-log.sh --transaction-log-decoder over the
// broker's segments, its records taken in by a TxnLog of their own, must
// tell the same story, event for event.
func (s *logScope) checkDump(ctx context.Context, t *testing.T) {
	t.Helper()
	s.settle(ctx, t)
	recs, err := DumpTxnLog(ctx, DataDir(t))
	if err != nil {
		t.Fatal(err)
	}
	ids := s.ids // the scenarios' own: the log has every id of the broker
	l := model.NewTxnLog()
	for id, tx := range s.own {
		l.Terminated(id, tx.ProducerID, tx.ProducerEpoch)
	}
	now := time.Now()
	for _, r := range recs {
		if ids[r.ID] {
			l.Apply(r, true, now)
		}
	}
	want := map[string][]string{}
	for _, e := range l.Take(now.Add(time.Hour)) {
		want[e.ID] = append(want[e.ID], string(e.Kind)+" "+e.Detail)
	}
	// A replay of the log (snapshot --since, the TUI's replay) tells it too.
	replayed, err := s.c.Replay(ctx, time.Now().Add(-time.Hour), 0)
	if err != nil {
		t.Fatalf("Replay: %v", err)
	}
	again := map[string][]string{}
	for _, e := range replayed.Events {
		if ids[e.ID] {
			again[e.ID] = append(again[e.ID], string(e.Kind)+" "+e.Detail)
		}
	}
	if time.Since(replayed.Complete) > time.Hour {
		t.Errorf("the replay is complete since %s only: nothing of this broker's log was compacted", replayed.Complete)
	}
	followed := func(id string) []string {
		var got []string
		for _, e := range s.of(id) {
			got = append(got, string(e.Kind)+" "+e.Detail)
		}
		return got
	}
	for id := range ids {
		got := followed(id)
		if !slices.Equal(got, want[id]) {
			t.Errorf("%s: followed %q\nbut kafka-dump-log.sh's records say %q", id, got, want[id])
		}
		if _, own := s.own[id]; own {
			// A replay has not seen txnscope send the request: it can only
			// say someone else fenced it (version 1), or aborted it.
			if n := len(again[id]); n == 0 || !strings.HasPrefix(again[id][n-1], "fenced ") && !strings.HasPrefix(again[id][n-1], "aborted ") {
				t.Errorf("%s: a replay of the log says %q, want it to end fenced or aborted", id, again[id])
			}
		} else if !slices.Equal(got, again[id]) {
			t.Errorf("%s: followed %q\nbut a replay of the log says %q", id, got, again[id])
		}
	}
	if len(ids) < 6 {
		t.Errorf("only %d ids had events", len(ids))
	}
	s.checkReplayedRows(ctx, t, again)
}

// checkReplayedRows: a snapshot's one read of the log (RefreshReplayed)
// gives the rows a listing and a describe give, and the replay's events.
func (s *logScope) checkReplayedRows(ctx context.Context, t *testing.T, replayed map[string][]string) {
	t.Helper()
	snap, r, why, err := s.c.RefreshReplayed(ctx, time.Now().Add(-time.Hour), 0)
	switch {
	case err != nil:
		t.Fatalf("RefreshReplayed: %v", err)
	case r == nil:
		t.Fatalf("RefreshReplayed did not read the log: %s", why)
	case !snap.Source.Log:
		t.Fatalf("RefreshReplayed's rows were listed: %s", snap.Source.Why)
	}
	listed, err := s.c.Refresh(ctx, nil)
	if err != nil {
		t.Fatalf("Refresh: %v", err)
	}
	events := map[string][]string{}
	for _, e := range r.Events {
		events[e.ID] = append(events[e.ID], string(e.Kind)+" "+e.Detail)
	}
	for id := range s.ids {
		got, ok := snap.Txn(id)
		want, wok := listed.Txn(id)
		if ok != wok {
			t.Errorf("%s: in the log's rows %t, listed %t", id, ok, wok)
			continue
		}
		if got.State != want.State || got.ProducerID != want.ProducerID || got.ProducerEpoch != want.ProducerEpoch ||
			got.TimeoutMs != want.TimeoutMs || got.Coordinator != want.Coordinator || !got.Described ||
			(got.State.Open() && !slices.Equal(got.Partitions, want.Partitions)) {
			t.Errorf("%s: the log's row %+v\nbut listed and described %+v", id, got, want)
		}
		if !slices.Equal(events[id], replayed[id]) {
			t.Errorf("%s: RefreshReplayed's events %q\nbut Replay's %q", id, events[id], replayed[id])
		}
	}
}

func (s *logScope) ownTerminate(id string, tx model.Txn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.own == nil {
		s.own = map[string]model.Txn{}
	}
	s.own[id] = tx
}

// settle polls until the scenarios' ids have nothing in flight: their last
// records (the abort scenario's closing commit; a CompleteCommit is written
// after EndTxn has answered) may come after the last poll, and an abort
// waits out its grace. Two polls 2.5 s apart that add nothing, with no
// transaction left half-ended, say the follower has told everything.
func (s *logScope) settle(ctx context.Context, t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	n := -1
	for time.Now().Before(deadline) {
		s.poll(ctx)
		s.mu.Lock()
		now := 0 // other tests share the broker: count the scenarios' own
		half := false
		last := map[string]model.EventKind{}
		for _, e := range s.events {
			if s.ids[e.ID] {
				last[e.ID] = e.Kind
				now++
			}
		}
		for _, k := range last {
			half = half || k == model.PreparedCommit || k == model.PreparedAbort
		}
		s.mu.Unlock()
		if now == n && !half {
			return
		}
		n = now
		time.Sleep(2500 * time.Millisecond)
	}
	t.Errorf("the followed log never settled")
}
