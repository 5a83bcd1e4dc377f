package integration

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/jsonout"
	"github.com/txnscope/txnscope/model"
)

// Issue 20's scenarios on real Flink, each checked in the jobs view, the
// JSON and the exporter: restores that change the parallelism, a fresh
// start without state, a timeout below twice the checkpoint interval, and
// checkpoints slower than the timeout.

// TestRealFlinkRestarts: a job crashed (kill -9) and started again, on
// each Flink version: restored at parallelism 3 → 2, then crashed again and
// restored 2 → 3; and, apart (three crashes in two minutes are a crash loop,
// and said so), started afresh without state. After each, nothing lingers
// and the job is not "crashed"; the scale-in's subtask 2 is retired, not
// behind.
func TestRealFlinkRestarts(t *testing.T) {
	t.Parallel()
	for _, flink := range []string{"1.20", "2.2"} {
		for _, fresh := range []bool{false, true} {
			name := flink + "-rescale"
			if fresh {
				name = flink + "-fresh"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				testRealFlinkRestarts(t, flink, fresh)
			})
		}
	}
}

func testRealFlinkRestarts(t *testing.T, flink string, fresh bool) {
	holdFlinkSlot(t)
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	requireRealFlink(ctx, t, flink)
	adm := newAdmin(t, bootstrap)
	topic := topicWith(ctx, t, adm, 3)
	prefix := name(t, "rf")
	out := newFlinkOutputs(ctx, t, bootstrap)
	w := newJobWatch(t, bootstrap, prefix)
	run := startRealFlink(t, "flink-"+flink+"-p3", bootstrap, realFlinkArgs{
		Flink: flink, Topic: topic, Prefix: prefix, Parallelism: 3,
		CheckpointInterval: 3 * time.Second, TransactionTimeout: 60 * time.Second, CheckpointDir: t.TempDir(),
	})
	run.waitCheckpoints(ctx, prefix, 3)
	crash := func(r *realFlink) int64 {
		time.Sleep(time.Second)
		r.kill9(ctx)
		cps := r.checkpoints(prefix)
		return checkpointID(t, cps[len(cps)-1])
	}
	// started waits for a checkpoint of the new run past n, then for the
	// jobs view to say it runs again: not crashed, nothing lingering.
	started := func(r *realFlink, n int64, what string) {
		r.waitUntil(ctx, fmt.Sprintf("a checkpoint past %d", n), func() bool {
			cps := r.checkpoints(prefix)
			return len(cps) > 0 && checkpointID(t, cps[len(cps)-1]) > n
		})
		w.until(ctx, 60*time.Second, what+": running again", func() bool {
			return w.found && !slices.Contains(w.kinds(), model.ProblemCrashed)
		}, w.noLingering)
	}

	if fresh {
		freshStart(ctx, t, run, w, out, crash)
		return
	}
	// 3 → 2: subtask 2's open transaction is aborted by the restore and its
	// ids are never used again.
	n := crash(run)
	run = run.restart("flink-"+flink+"-p2", "latest", func(a *realFlinkArgs) { a.Parallelism = 2 })
	started(run, n, "restored at parallelism 2")
	w.until(ctx, 30*time.Second, "2 tasks, subtask 2 retired", func() bool {
		return w.job.Tasks == 2 && slices.ContainsFunc(w.job.Units, func(u model.Unit) bool { return u.Subtask == 2 && u.Retired })
	}, w.noLingering, w.never(model.ProblemBehind))
	w.healthyFor(ctx, 5, 2, false)
	out.until(ctx, 60*time.Second, prefix, "restored at parallelism 2", func(s jsonout.SnapshotJSON, j *jsonout.JobJSON, series map[string]float64) string {
		if bad := healthyOutputs(2)(s, j, series); bad != "" {
			return bad
		}
		if st := subtaskJSON(j, 2); st == nil || !st.Retired || st.Behind {
			return "subtask 2 not retired"
		}
		return ""
	})

	// 2 → 3: the new subtask 2 gets no split of the restored source and
	// writes nothing: its Empty ids may look like probe ids (TASKS 2).
	n = crash(run)
	run = run.restart("flink-"+flink+"-p3-again", "latest", func(a *realFlinkArgs) { a.Parallelism = 3 })
	started(run, n, "restored at parallelism 3")
	for range 5 {
		w.poll(ctx)
		if bad := cmp.Or(w.noLingering(), w.never(model.ProblemBehind)()); bad != "" || w.job.Tasks < 2 || w.job.Tasks > 3 || len(w.problems()) > 0 {
			t.Fatalf("restored 2 → 3: %s; want 2 or 3 tasks and no problem (%s)", bad, w)
		}
		time.Sleep(time.Second)
	}

}

// freshStart crashes run and starts the job again without state, in a new
// checkpoint dir: the new run initializes every old id from 1 (fencing what
// the crash left open) and counts from 1 again.
func freshStart(ctx context.Context, t *testing.T, run *realFlink, w *jobWatch, out *flinkOutputs, crash func(*realFlink) int64) {
	prefix, flink := run.args.Prefix, run.args.Flink
	n := crash(run)
	run = run.restart("flink-"+flink+"-fresh", "", func(a *realFlinkArgs) { a.CheckpointDir = t.TempDir() })
	run.waitCheckpoints(ctx, prefix, 2)
	w.until(ctx, 90*time.Second, "started afresh: 3 tasks, not crashed", func() bool {
		return w.found && w.job.Tasks == 3 && !slices.Contains(w.kinds(), model.ProblemCrashed)
	}, w.noLingering)
	for range 5 {
		w.poll(ctx)
		for _, k := range w.kinds() {
			if k != model.ProblemNotCommitting { // its commits were minutes apart
				t.Fatalf("started afresh after checkpoint %d: problem %s (%s)", n, k, w)
			}
		}
		time.Sleep(time.Second)
	}
	out.until(ctx, 60*time.Second, prefix, "started afresh", func(s jsonout.SnapshotJSON, j *jsonout.JobJSON, series map[string]float64) string {
		if bad := healthyOutputs(3)(s, j, series); bad != "" {
			return bad
		}
		if series["txnscope_job_timeouts_total"] != 0 {
			return "the exporter counts timeouts"
		}
		return ""
	})
}

// never is a check for until: the job never shows a problem of kind k.
func (w *jobWatch) never(k model.ProblemKind) func() string {
	return func() string {
		if w.found && slices.Contains(w.kinds(), k) {
			return "problem " + string(k) + " shown"
		}
		return ""
	}
}

// TestRealFlinkTimeouts: transaction.timeout.ms 5 s with checkpoints every
// 3 s, on each version: flagged below twice the interval, read off the
// commit cadence (no --checkpoint-interval anywhere); and with checkpoints
// that take 7 s, every transaction aborted at its timeout: a crash loop
// within a minute, the losses counted as timeouts (Flink 1.20's restores
// may fence one not yet timed out).
func TestRealFlinkTimeouts(t *testing.T) {
	t.Parallel()
	for _, flink := range []string{"1.20", "2.2"} {
		t.Run(flink+"-short", func(t *testing.T) {
			t.Parallel()
			testRealFlinkTimeouts(t, flink, 0)
		})
		t.Run(flink+"-crashloop", func(t *testing.T) {
			t.Parallel()
			testRealFlinkTimeouts(t, flink, 7*time.Second)
		})
	}
}

func testRealFlinkTimeouts(t *testing.T, flink string, checkpointSleep time.Duration) {
	holdFlinkSlot(t)
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	requireRealFlink(ctx, t, flink)
	adm := newAdmin(t, bootstrap)
	topic := topicWith(ctx, t, adm, 3)
	prefix := name(t, "rf")
	out := newFlinkOutputs(ctx, t, bootstrap)
	w := newJobWatch(t, bootstrap, prefix)
	job := startRealFlink(t, "flink-"+flink, bootstrap, realFlinkArgs{
		Flink: flink, Topic: topic, Prefix: prefix, Parallelism: 3,
		CheckpointInterval: 3 * time.Second, TransactionTimeout: 5 * time.Second, CheckpointSleep: checkpointSleep,
	})
	job.waitStatus(ctx, prefix, "RUNNING")
	if checkpointSleep == 0 {
		w.until(ctx, 90*time.Second, "timeout below 2× the interval", func() bool {
			return slices.Contains(w.kinds(), model.ProblemTimeoutShort)
		}, w.noLingering, w.never(model.ProblemCrashLoop))
		out.until(ctx, 60*time.Second, prefix, "timeout below 2× the interval", func(s jsonout.SnapshotJSON, j *jsonout.JobJSON, series map[string]float64) string {
			p := problemOf(j, model.ProblemTimeoutShort)
			switch {
			case j == nil:
				return "no job"
			case !strings.Contains(p.What, "timeout 5s below 2× the checkpoint interval") || !strings.Contains(p.What, "(its commit cadence)"):
				return fmt.Sprintf("timeout_below_interval said as %q", p.What)
			case len(j.Lingering) > 0 || series["txnscope_job_lingering_transactions"] != 0:
				return "lingering"
			case series["txnscope_job_problem/timeout_below_interval"] != 1:
				return "the exporter's job_problem does not say timeout_below_interval"
			}
			return noneOf(j, model.ProblemCrashLoop, model.ProblemCrashed, model.ProblemPrefixShared)
		})
		return
	}
	w.until(ctx, 150*time.Second, "a crash loop", func() bool {
		return slices.Contains(w.kinds(), model.ProblemCrashLoop)
	}, w.noLingering)
	// Flink 1.20 restarts after each lost commit, and its restore now and
	// then fences a transaction not yet timed out: a fence among the
	// timeouts.
	if w.job.Fences5m >= w.job.Timeouts5m || w.job.Timeouts5m < 6 {
		t.Errorf("crash loop with %d fences and %d timeouts, want mostly timeouts, 6 or more", w.job.Fences5m, w.job.Timeouts5m)
	}
	out.until(ctx, 60*time.Second, prefix, "a crash loop of timeouts", func(s jsonout.SnapshotJSON, j *jsonout.JobJSON, series map[string]float64) string {
		switch {
		case !hasProblem(j, model.ProblemCrashLoop):
			return "no crash_loop"
		case j.Timeouts5m < 6:
			return "timeouts_5m below 6"
		case series["txnscope_job_timeouts_total"] < 6 || series["txnscope_job_fences_total"] >= series["txnscope_job_timeouts_total"] ||
			series["txnscope_job_problem/crash_loop"] != 1:
			return "the exporter does not count the losses as timeouts"
		case len(j.Lingering) > 0 || series["txnscope_job_lingering_transactions"] != 0:
			return "lingering"
		}
		return ""
	})
}
