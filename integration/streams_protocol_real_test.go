package integration

import (
	"context"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/txnscope/txnscope/model"
)

// TestStreamsRealStreamsProtocol: the same Kafka Streams 4.4 app (exactly_once_v2) on the
// streams group protocol (KIP-1071, group.protocol=streams) instead of the classic one. Its
// group is listed with type streams; txnscope makes one Streams job of its ids, its two
// threads as units, no problem while it runs; stopped (SIGSTOP) with its transactions open,
// its downstream read_committed group is stuck behind them, as under the classic protocol,
// and the stuck group is typed; resumed, the job is healthy again.
func TestStreamsRealStreamsProtocol(t *testing.T) {
	t.Parallel()
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	requireStreamsApp(ctx, t)
	app, args := streamsAppOn(ctx, t, bootstrap, 2)
	sc := newScope(t, bootstrap)
	sc.poll(ctx)
	a := startStreams(t, "instance-a", bootstrap, append(args(t.TempDir()), "--group-protocol", "streams")...)
	ids := a.txnIDs(ctx, 2)
	waitStreamsTasks(ctx, t, 2, a)
	for _, id := range ids {
		a.waitFor(ctx, "two commits of "+id, 0, func(e streamsEvent) bool { return e.is("committed", id) && e.field(1) == "2" })
	}

	adm := newAdmin(t, bootstrap)
	listed, err := adm.ListGroupsByType(ctx, []string{"streams"})
	if err != nil {
		t.Fatalf("ListGroups(streams): %v", err)
	}
	if !slices.ContainsFunc(listed.Sorted(), func(g kadm.ListedGroup) bool { return g.Group == app }) {
		t.Fatalf("the app's group %s is not a streams group: %v", app, listed.Groups())
	}

	units := streamsUnits(app, ids)
	for i := range 6 {
		snap := sc.poll(ctx)
		job := streamsJob(t, snap, sc.hist, app)
		checkStreamsUnits(t, "healthy", job, units)
		if ps := job.Problems(snap, model.Query{}, time.Now()); len(ps) > 0 {
			t.Errorf("healthy poll %d: problems %+v", i, ps)
		}
		sleepCtx(ctx, 300*time.Millisecond)
	}

	// Stopped with its transactions open (retried until both are), the downstream group waits.
	for attempt := 0; ; attempt++ {
		a.signal(syscall.SIGSTOP)
		snap := sc.poll(ctx)
		open := 0
		for _, id := range ids {
			if txnOf(t, snap, id).State == model.Ongoing {
				open++
			}
		}
		if open == len(ids) {
			break
		}
		if attempt == 20 {
			t.Fatalf("the instance never had both transactions open at once: %s", sc.describe(snap))
		}
		a.signal(syscall.SIGCONT)
		sleepCtx(ctx, 150*time.Millisecond)
	}
	downstream := app + "-downstream"
	track := model.NewPinTracker()
	snap := sc.until(ctx, "the downstream group stuck behind the stopped app", func(s *model.Snapshot) bool {
		track.Observe(s)
		for _, g := range model.BlockedGroups(model.Pins(s, track, s.TakenAt)) {
			if g.Group == downstream {
				return true
			}
		}
		return false
	})
	for _, g := range model.BlockedGroups(model.Pins(snap, track, snap.TakenAt)) {
		if g.Group != downstream {
			continue
		}
		if g.Type != model.GroupClassic && g.Type != model.GroupConsumer {
			t.Errorf("downstream group type %q, want classic or consumer", g.Type)
		}
		for _, b := range g.Blockers {
			if !slices.Contains(ids, b) {
				t.Errorf("downstream blocked by %s, not one of the app's ids %v", b, ids)
			}
		}
	}
	if job := streamsJob(t, snap, sc.hist, app); len(job.Open) == 0 {
		t.Errorf("the stopped app's job shows no open transaction")
	}

	mark := a.mark()
	a.signal(syscall.SIGCONT)
	a.waitFor(ctx, "a commit after the resume", mark, func(e streamsEvent) bool { return e.Kind == "committed" })
	sc.until(ctx, "the app healthy again", func(s *model.Snapshot) bool {
		job := streamsJob(t, s, sc.hist, app)
		return len(job.Problems(s, model.Query{}, time.Now())) == 0 && len(job.StuckGroups) == 0
	})
}
