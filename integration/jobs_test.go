package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/model"
)

// TestFlinkJobLingeringAfterRestart: the Flink-like sink with parallelism 3
// is killed with checkpoint 1's transactions open, and a new run of the job
// resumes at checkpoint 2 without touching them (new ids, no fence). txnscope
// groups the ids into the job and shows checkpoint 1's three transactions as
// lingering on their subtasks, with the job's problem; force-terminating
// them clears it and frees the partitions.
func TestFlinkJobLingeringAfterRestart(t *testing.T) {
	t.Parallel()
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	requireFlinkLike(ctx, t)
	adm := newAdmin(t, bootstrap)
	const parallelism = 3
	topic := topicWith(ctx, t, adm, parallelism)
	prefix := name(t, "job")
	sc := newScope(t, bootstrap)
	sc.poll(ctx)

	crashed := startFlink(t, "crashed", bootstrap, "--topic", topic, "--prefix", prefix,
		"--parallelism", fmt.Sprint(parallelism), "--checkpoint-interval-ms", "60000", "--records", "240",
		"--transaction-timeout-ms", "300000")
	var lingering []string
	for s := range parallelism {
		lingering = append(lingering, flinkID(prefix, s, 1))
		crashed.waitEvent(ctx, "first", lingering[s])
	}
	crashed.kill9(ctx)
	restarted := startFlink(t, "restarted", bootstrap, "--topic", topic, "--prefix", prefix,
		"--parallelism", fmt.Sprint(parallelism), "--checkpoint-interval-ms", "500", "--records", "5",
		"--transaction-timeout-ms", "300000", "--checkpoints", "2", "--start-checkpoint", "2")
	if code := restarted.waitExit(ctx); code != 0 {
		t.Fatalf("restarted job exit status %d", code)
	}

	var job model.Job
	snap := sc.until(ctx, "the job's checkpoints 2 and 3 committed, 1 lingering", func(s *model.Snapshot) bool {
		for _, j := range model.Jobs(s, sc.hist, time.Now()) {
			if j.ID == (model.JobID{Family: model.FlinkSink, Name: prefix}) {
				job = j
			}
		}
		return job.NewestCommitted == 3 && len(job.Lingering) == parallelism
	})
	if !slices.Equal(job.Lingering, lingering) || len(job.Units) != parallelism || job.IDs != 3*parallelism {
		t.Fatalf("job %+v: want %v lingering over %d subtasks", job, lingering, parallelism)
	}
	for s, u := range job.Units {
		if u.Subtask != s || !slices.Equal(u.Lingering, []string{lingering[s]}) || u.NewestCommitted != 3 || u.NewestCheckpoint != 3 {
			t.Errorf("subtask %d: %+v", s, u)
		}
	}
	if ps := job.Problems(snap, model.Query{}, time.Now()); len(ps) == 0 || !strings.HasPrefix(ps[0].What, "3 lingering after a restart") {
		t.Errorf("problems %q, want the lingering first", ps)
	}

	for _, id := range lingering {
		if r := sc.execute(ctx, forceTerminate(txnOf(t, snap, id))); !r.OK() {
			t.Fatalf("force-terminate %s: %s", id, r.Summary())
		}
	}
	sc.until(ctx, "no lingering transaction left", func(s *model.Snapshot) bool {
		for _, j := range model.Jobs(s, sc.hist, time.Now()) {
			if j.ID.Name == prefix {
				return len(j.Lingering) == 0 && len(j.Open) == 0
			}
		}
		return false
	})
	for p := range parallelism {
		tp := model.TopicPartition{Topic: topic, Partition: int32(p)}
		if hwm, lso := offsetsOf(ctx, t, adm, tp); hwm != lso {
			t.Errorf("%s-%d after the force-terminates: HWM %d LSO %d", topic, p, hwm, lso)
		}
	}
}
