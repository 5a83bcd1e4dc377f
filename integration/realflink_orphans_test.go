package integration

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/jsonout"
	"github.com/txnscope/txnscope/model"
)

// TestRealFlinkPoolingOrphans: Flink 2.2 with POOLING (FLINK-40626), as
// tried here first. Killed with transactions open and restored 3 → 2, the
// restore fences every open slot, and the two subtasks write the ids of
// subtasks 0 and 2, leaving subtask 1's idle: two tasks, subtask 1
// retired, nothing orphaned or lingering. Killed again and started afresh
// under another transactional-id prefix (restored from its state, Flink 2.2
// fences the old prefix's slots too), the old prefix's open transactions are
// ended by nobody: with Flink's REST API they are named orphaned (not
// "crashed": Flink runs the job), with their verdicts from the checkpoints,
// and `resolve` on the old prefix ends them as their verdicts say.
func TestRealFlinkPoolingOrphans(t *testing.T) {
	t.Parallel()
	holdFlinkSlot(t)
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	requireRealFlink(ctx, t, "2.2")
	adm := newAdmin(t, bootstrap)
	topic := topicWith(ctx, t, adm, 3)
	prefix := name(t, "pd")
	w := newJobWatch(t, bootstrap, prefix)
	dir := t.TempDir()
	run := startRealFlink(t, "flink-2.2-pool-p3", bootstrap, realFlinkArgs{
		Flink: "2.2", Topic: topic, Prefix: prefix, Parallelism: 3, Naming: "pooling",
		CheckpointInterval: 3 * time.Second, TransactionTimeout: 3 * time.Minute, CheckpointDir: dir,
	})
	run.waitCheckpoints(ctx, prefix, 4)
	w.healthyFor(ctx, 3, 3, true)
	crash := func(r *realFlink, job string) int64 {
		time.Sleep(time.Second)
		r.kill9(ctx)
		cps := r.checkpoints(job)
		return checkpointID(t, cps[len(cps)-1])
	}

	n := crash(run, prefix)
	run = run.restart("flink-2.2-pool-p2", "latest", func(a *realFlinkArgs) { a.Parallelism = 2 })
	run.waitUntil(ctx, fmt.Sprintf("a checkpoint past %d", n), func() bool {
		cps := run.checkpoints(prefix)
		return len(cps) > 0 && checkpointID(t, cps[len(cps)-1]) > n
	})
	w.until(ctx, 60*time.Second, "restored at parallelism 2: two tasks", func() bool {
		return w.found && w.job.Tasks == 2 && !slices.Contains(w.kinds(), model.ProblemCrashed)
	}, w.noLingering, w.never(model.ProblemOrphaned))
	w.healthyFor(ctx, 5, 2, true)

	// Restored under another prefix: the old one's open transactions stay.
	crash(run, prefix)
	w.poll(ctx)
	left := slices.Clone(w.job.Open)
	if len(left) == 0 {
		t.Fatalf("the kill left nothing open: %s", w)
	}
	jobDir := filepath.Join(dir, flinkJobID(t, run, prefix)) // the last run's own checkpoints
	// Restored from its state under another prefix, Flink 2.2 fences them
	// (tried here: nothing is left open); started without it, nobody ends them.
	renamed := name(t, "pn")
	run = run.restart("flink-2.2-pool-renamed", "", func(a *realFlinkArgs) { a.Prefix, a.CheckpointDir = renamed, t.TempDir() })
	run.waitCheckpoints(ctx, renamed, 3)
	rest := run.restURL(renamed)
	out := newFlinkOutputs(ctx, t, bootstrap)
	// The operator maps both prefixes to the one job: the old by its id.
	flags := []string{"--flink", rest, "--flink-prefix", flinkJobID(t, run, renamed) + "=" + prefix,
		"--flink-prefix", "flinkjob " + renamed + "=" + renamed, "--flink-checkpoints", prefix + "=" + jobDir}
	var job *jsonout.JobJSON
	deadline := time.Now().Add(90 * time.Second)
	for {
		_, job = out.snapshot(ctx, prefix, flags...)
		if job != nil && slices.Equal(job.Orphaned, left) && hasProblem(job, model.ProblemOrphaned) {
			break
		}
		if time.Now().After(deadline) {
			_, now := out.snapshot(ctx, renamed, flags...)
			t.Fatalf("the old prefix's %v never orphaned: %+v\nits Flink match %+v\nthe renamed job: %+v", left, job, job.Flink, now)
		}
		time.Sleep(2 * time.Second)
	}
	p := problemOf(job, model.ProblemOrphaned)
	if hasProblem(job, model.ProblemCrashed) || hasProblem(job, model.ProblemLingering) || !strings.Contains(p.Why, "another transactional-id prefix") {
		t.Errorf("the old prefix: problems %+v", job.Problems)
	}
	verdicts := map[string]model.VerdictKind{}
	for _, v := range job.Verdicts {
		verdicts[v.TransactionalID] = v.Verdict
	}
	t.Logf("orphaned %v, verdicts %v; way out: %s", job.Orphaned, verdicts, p.WayOut)
	for _, id := range left {
		switch verdicts[id] {
		case model.NotCheckpointed:
			if !strings.Contains(p.WayOut, "force-terminate "+id) && !strings.Contains(p.WayOut, ", "+id) {
				t.Errorf("%s not checkpointed, yet the way out is %q", id, p.WayOut)
			}
		case model.Checkpointed:
		default:
			t.Errorf("%s: no verdict from the run's own checkpoints (%v)", id, verdicts)
		}
	}

	// The way out, from the checkpoints alone: each orphan ended as its verdict says.
	audit := filepath.Join(t.TempDir(), "audit.log")
	r := runTxnscope(ctx, t, out.bin, nil, "resolve", "--job", prefix, "-b", bootstrap, "--flink-checkpoints", prefix+"="+jobDir,
		"--yes", "-o", "json", "--audit-log", audit)
	if r.code != 0 {
		t.Fatalf("resolve the old prefix: %s", r)
	}
	d, err := adm.DescribeTransactions(ctx, left...)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range left {
		if st := d[id].State; st == "Ongoing" {
			t.Errorf("%s still %s after resolve", id, st)
		}
	}
	// The job under its new prefix is untouched: healthy at two tasks.
	newJobWatch(t, bootstrap, renamed).healthyFor(ctx, 3, 2, true)
}

// flinkJobID is the Flink job id run printed for job in its "started" line.
func flinkJobID(t *testing.T, r *realFlink, job string) string {
	t.Helper()
	for _, e := range r.all("started") {
		if e.ID == job && len(e.Fields) >= 1 {
			return e.Fields[0]
		}
	}
	t.Fatalf("%s printed no started line for %s", r.name, job)
	return ""
}
