package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/jsonout"
	"github.com/txnscope/txnscope/model"
)

// What txnscope's other outputs say of a real Flink job, beside the jobs
// view (jobWatch): `snapshot -o json --since` (the coordinators' log) and
// the exporter, running since the scenario began.

var kindLabel = regexp.MustCompile(`kind="([^"]+)"`)

type flinkOutputs struct {
	t                       *testing.T
	bin, bootstrap, metrics string
	env                     []string // for txnscope: the AWS settings of s3:// checkpoints
	// last are what the latest check read, for its failure message.
	lastJob    *jsonout.JobJSON
	lastSeries map[string]float64
}

func newFlinkOutputs(ctx context.Context, t *testing.T, bootstrap string) *flinkOutputs {
	t.Helper()
	bin := buildTxnscope(ctx, t)
	return &flinkOutputs{t: t, bin: bin, bootstrap: bootstrap, metrics: startExporter(ctx, t, bin, bootstrap)}
}

// snapshot runs `txnscope snapshot -o json --since 15m` and returns the
// document and prefix's Flink job in it (nil: none).
func (o *flinkOutputs) snapshot(ctx context.Context, prefix string, extra ...string) (jsonout.SnapshotJSON, *jsonout.JobJSON) {
	o.t.Helper()
	r := runTxnscope(ctx, o.t, o.bin, o.env, append([]string{"snapshot", "-o", "json", "--since", "15m", "-b", o.bootstrap}, extra...)...)
	if r.code != 0 {
		o.t.Fatalf("exit %d\n%s", r.code, r)
	}
	var s jsonout.SnapshotJSON
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		o.t.Fatalf("snapshot -o json is not JSON: %v\n%s", err, r)
	}
	for i, j := range s.Jobs {
		if j.Family == model.FlinkSink && j.Name == prefix {
			return s, &s.Jobs[i]
		}
	}
	return s, nil
}

// series are the exporter's series of prefix's job by metric name (and
// txnscope_job_problem/KIND), and the cluster-wide ones (no labels, or a
// group's) by their whole key.
func (o *flinkOutputs) series(ctx context.Context, prefix string) map[string]float64 {
	o.t.Helper()
	out := map[string]float64{}
	for k, v := range scrape(ctx, o.t, o.metrics) {
		name, labels, _ := strings.Cut(k, "{")
		switch {
		case strings.Contains(labels, `txn_job="`+prefix+`"`):
			if m := kindLabel.FindStringSubmatch(labels); m != nil {
				name += "/" + m[1] // txnscope_job_problem/KIND
			}
			out[name] = v
		case !strings.Contains(labels, "txn_job=") && !strings.Contains(labels, "transactional_id="):
			out[k] = v
		}
	}
	return out
}

// until checks what `snapshot -o json` and the exporter say of prefix's
// job every 2 s until check returns "", and fails with its last word and
// what they said. job is nil when the snapshot has no such job.
func (o *flinkOutputs) until(ctx context.Context, patience time.Duration, prefix, what string,
	check func(s jsonout.SnapshotJSON, job *jsonout.JobJSON, series map[string]float64) string) {
	o.t.Helper()
	deadline := time.Now().Add(patience)
	for {
		s, job := o.snapshot(ctx, prefix)
		series := o.series(ctx, prefix)
		o.lastJob, o.lastSeries = job, series
		bad := check(s, job, series)
		if bad == "" {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			o.t.Fatalf("after %s, %s: %s\nsnapshot -o json: %s\nexporter: %s", patience, what, bad, jobText(job), seriesText(series))
		}
		time.Sleep(2 * time.Second)
	}
}

func jobText(j *jsonout.JobJSON) string {
	if j == nil {
		return "no such job"
	}
	var kinds []string
	for _, p := range j.Problems {
		kinds = append(kinds, string(p.Kind))
	}
	var subs []string
	for _, s := range j.Subtasks {
		mark := ""
		switch {
		case s.Probe:
			mark = " probe"
		case s.Retired:
			mark = " retired"
		case s.Behind:
			mark = " behind"
		}
		subs = append(subs, s.Name+mark)
	}
	naming := "null"
	if j.Naming != nil {
		naming = *j.Naming
	}
	return fmt.Sprintf("tasks %d naming %s open %d lingering %d fences_5m %d timeouts_5m %d shared %v pinned %d stuck %v subtasks [%s] problems %v",
		j.Tasks, naming, len(j.Open), len(j.Lingering), j.Fences5m, j.Timeouts5m, j.PrefixShared, len(j.Pinned), j.StuckGroups,
		strings.Join(subs, ", "), kinds)
}

func seriesText(m map[string]float64) string {
	var out []string
	for k, v := range m {
		if strings.HasPrefix(k, "txnscope_job_") || strings.HasPrefix(k, "txnscope_prefix_") ||
			strings.HasPrefix(k, "txnscope_partitions_") || strings.HasPrefix(k, "txnscope_group_") {
			out = append(out, fmt.Sprintf("%s=%g", k, v))
		}
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func hasProblem(j *jsonout.JobJSON, k model.ProblemKind) bool {
	return j != nil && slices.ContainsFunc(j.Problems, func(p jsonout.ProblemJSON) bool { return p.Kind == k })
}

func problemOf(j *jsonout.JobJSON, k model.ProblemKind) jsonout.ProblemJSON {
	if j != nil {
		if i := slices.IndexFunc(j.Problems, func(p jsonout.ProblemJSON) bool { return p.Kind == k }); i >= 0 {
			return j.Problems[i]
		}
	}
	return jsonout.ProblemJSON{}
}

// noneOf is "" when the job has none of the problems ks, else which it has.
func noneOf(j *jsonout.JobJSON, ks ...model.ProblemKind) string {
	for _, k := range ks {
		if hasProblem(j, k) {
			return fmt.Sprintf("problem %s: %s", k, problemOf(j, k).What)
		}
	}
	return ""
}

// subtaskJSON is the job's subtask n in the JSON (nil: none).
func subtaskJSON(j *jsonout.JobJSON, n int) *jsonout.SubtaskJSON {
	if j == nil {
		return nil
	}
	for i, s := range j.Subtasks {
		if s.Subtask != nil && *s.Subtask == n {
			return &j.Subtasks[i]
		}
	}
	return nil
}

// healthyOutputs is a check for until: the job is there, of tasks tasks,
// with nothing lingering and none of the problems a healthy or restored job
// must not show, and the exporter agrees (no lingering, not shared).
func healthyOutputs(tasks int) func(jsonout.SnapshotJSON, *jsonout.JobJSON, map[string]float64) string {
	return func(_ jsonout.SnapshotJSON, j *jsonout.JobJSON, series map[string]float64) string {
		switch {
		case j == nil:
			return "no job"
		case j.Tasks != tasks:
			return fmt.Sprintf("tasks %d, want %d", j.Tasks, tasks)
		case len(j.Lingering) > 0:
			return fmt.Sprintf("lingering %v", j.Lingering)
		case series["txnscope_job_lingering_transactions"] != 0 || series["txnscope_prefix_shared"] != 0:
			return "the exporter says lingering or shared"
		}
		bad := []model.ProblemKind{model.ProblemLingering, model.ProblemCrashed, model.ProblemBehind, model.ProblemPrefixShared, model.ProblemCrashLoop}
		for _, k := range bad {
			if series["txnscope_job_problem/"+string(k)] != 0 {
				return "the exporter's job_problem says " + string(k)
			}
		}
		return noneOf(j, bad...)
	}
}

// restURL is the run's JobManager REST address, from its "started JOB
// JOBID rest=PORT" line.
func (r *realFlink) restURL(job string) string {
	r.t.Helper()
	for _, e := range r.all("started") {
		if e.ID == job && len(e.Fields) >= 2 {
			if port, ok := strings.CutPrefix(e.Fields[1], "rest="); ok {
				return "http://127.0.0.1:" + port
			}
		}
	}
	r.t.Fatalf("%s printed no started line for %s with its REST port:\n%s", r.name, job, r.transcript())
	return ""
}
