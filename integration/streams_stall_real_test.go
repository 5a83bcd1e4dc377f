package integration

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/txnscope/txnscope/model"
)

// TestStreamsRealStall runs the real Kafka Streams app (kafka/streamsapp, exactly_once_v2) as two
// instances of two threads, committing about every second, and stops both with SIGSTOP for 25 s: a
// whole app that hangs (a GC pause, a blocked call, a rebalance that does not end). txnscope must
// say "stalled" once nothing has committed for its transaction.timeout.ms (Streams' 10 s), with the
// transactions open (or "crashed, not restarted", the same silence seen from the brokers), then, once
// the coordinator has aborted them at their timeout, with nothing open: the case the "not committing"
// rule, which needs an open transaction, missed.
// Resumed, the threads find their producers fenced, rejoin and commit again: the problem goes.
// Then the case: one instance killed with its transactions open and restarted on its state
// directory within their timeout; in the runs here the other instance kept committing (no gap over
// 1.2 s), and txnscope said nothing but, at most, stalled or that instance gone.
func TestStreamsRealStall(t *testing.T) {
	t.Parallel()
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	requireStreamsApp(ctx, t)
	const partitions = 4
	app, args := streamsAppOn(ctx, t, bootstrap, partitions)
	sc := newScope(t, bootstrap)
	sc.poll(ctx)
	stateA := t.TempDir()
	a := startStreams(t, "instance-a", bootstrap, args(stateA)...)
	b := startStreams(t, "instance-b", bootstrap, args(t.TempDir())...)
	idsOf := map[*streamsInstance][]string{a: a.txnIDs(ctx, 2), b: b.txnIDs(ctx, 2)}
	waitStreamsTasks(ctx, t, partitions, a, b)
	for inst, ids := range idsOf {
		for _, id := range ids {
			inst.waitFor(ctx, "three commits of "+id, 0, func(e streamsEvent) bool { return e.is("committed", id) && e.field(1) == "3" })
		}
	}
	// Healthy, its cadence known: no problem on several polls in a row.
	for i := range 8 {
		snap := sc.poll(ctx)
		job := streamsJob(t, snap, sc.hist, app)
		if ps := job.Problems(snap, model.Query{}, time.Now()); len(ps) > 0 {
			t.Errorf("healthy poll %d: problems %+v", i, ps)
		}
		sleepCtx(ctx, 400*time.Millisecond)
	}

	a.signal(syscall.SIGSTOP)
	b.signal(syscall.SIGSTOP)
	stopped := time.Now()
	const hang = 25 * time.Second
	seen := map[string]time.Duration{}
	note := func(what string) {
		if _, ok := seen[what]; !ok {
			seen[what] = time.Since(stopped).Round(100 * time.Millisecond)
		}
	}
	var withOpen, nothingOpen time.Duration
	for time.Since(stopped) < hang {
		snap := sc.poll(ctx)
		job := streamsJob(t, snap, sc.hist, app)
		for _, p := range job.Problems(snap, model.Query{}, time.Now()) {
			note(fmt.Sprintf("%s, %d open", p.Kind, len(job.Open)))
			// Transactions open and their producers silent for as long as live ones last read as
			// "crashed, not restarted" (stalled then waits behind it): a hung process and a dead one
			// look the same from the brokers. Once the timeout has aborted them, stalled.
			if p.Kind == model.ProblemCrashed && len(job.Open) > 0 {
				continue
			}
			if p.Kind != model.ProblemStalled {
				t.Errorf("+%s: problem %s: %s (want stalled, or crashed while open: no instance works)", time.Since(stopped).Round(time.Millisecond), p.Kind, p.What)
				continue
			}
			switch {
			case len(job.Open) > 0 && withOpen == 0:
				withOpen = time.Since(stopped)
				t.Logf("+%s: %s", withOpen.Round(time.Millisecond), p.What)
			case len(job.Open) == 0 && nothingOpen == 0:
				nothingOpen = time.Since(stopped)
				t.Logf("+%s: %s; %s", nothingOpen.Round(time.Millisecond), p.What, p.Why)
			}
		}
		sleepCtx(ctx, 400*time.Millisecond)
	}
	if nothingOpen == 0 {
		t.Errorf("no stalled problem with nothing open in the %s both instances were stopped", hang)
	}
	if withOpen > 0 && withOpen < 9*time.Second {
		t.Errorf("stalled %s after the stop: want it only once nothing committed for the 10 s timeout", withOpen.Round(time.Millisecond))
	}

	markA, markB := a.mark(), b.mark()
	a.signal(syscall.SIGCONT)
	b.signal(syscall.SIGCONT)
	resumed := time.Now()
	for _, inst := range []*streamsInstance{a, b} {
		inst.waitFor(ctx, "a commit after the resume", map[*streamsInstance]int{a: markA, b: markB}[inst], func(e streamsEvent) bool { return e.Kind == "committed" })
	}
	snap := sc.until(ctx, "the stalled problem to go", func(snap *model.Snapshot) bool {
		job := streamsJob(t, snap, sc.hist, app)
		for _, p := range job.Problems(snap, model.Query{}, time.Now()) {
			if p.Kind == model.ProblemStalled {
				return false
			}
		}
		return true
	})
	t.Logf("stalled problem gone %s after the resume", time.Since(resumed).Round(time.Millisecond))
	if ps := streamsJob(t, snap, sc.hist, app).Problems(snap, model.Query{}, time.Now()); len(ps) > 0 {
		t.Errorf("after the resume: problems %+v", ps)
	}
	// The case the issue saw: one instance killed with its transactions open and restarted on its
	// state directory within their timeout. Whatever real Streams does then, any stretch of the
	// whole app committing nothing for longer than its timeout (plus a poll) must be called stalled,
	// and nothing else but stalled or that instance gone may be said.
	a.kill9(ctx)
	killed := time.Now()
	sleepCtx(ctx, 2*time.Second)
	a2 := startStreams(t, "instance-a-restarted", bootstrap, args(stateA)...)
	var lastCommit time.Time
	longest, stalledSeen := time.Duration(0), false
	for time.Since(killed) < 30*time.Second {
		snap := sc.poll(ctx)
		job := streamsJob(t, snap, sc.hist, app)
		for _, p := range job.Problems(snap, model.Query{}, time.Now()) {
			note(fmt.Sprintf("restart within the timeout: %s, %d open", p.Kind, len(job.Open)))
			switch p.Kind {
			case model.ProblemStalled:
				stalledSeen = true
			case model.ProblemInstanceGone:
			default:
				t.Errorf("restart within the timeout +%s: problem %s: %s", time.Since(killed).Round(time.Millisecond), p.Kind, p.What)
			}
		}
		lastCommit = streamsLater(lastCommit, job.LastCommit)
		if !lastCommit.IsZero() {
			longest = max(longest, time.Since(lastCommit))
		}
		sleepCtx(ctx, 400*time.Millisecond)
	}
	t.Logf("restart within the timeout: the longest the app went without a commit %s; stalled said: %v", longest.Round(100*time.Millisecond), stalledSeen)
	if longest > 12*time.Second && !stalledSeen {
		t.Errorf("the app committed nothing for %s after a restart within the timeout, and txnscope did not say stalled", longest.Round(100*time.Millisecond))
	}
	a2.waitFor(ctx, "a commit after the restart", 0, func(e streamsEvent) bool { return e.Kind == "committed" })

	var lines []string
	for what, at := range seen {
		lines = append(lines, fmt.Sprintf("+%s %s", at, what))
	}
	sort.Strings(lines)
	t.Logf("txnscope while stopped (first seen):\n  %s", strings.Join(lines, "\n  "))
}
