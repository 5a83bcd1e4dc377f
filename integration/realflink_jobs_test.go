package integration

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/model"
)

// What the jobs view makes of real Flink (issue 20): polls of the real
// broker through kafkaadmin and a History, as the TUI makes them.

// jobWatch polls the broker and keeps what the jobs view says of one prefix.
type jobWatch struct {
	t      *testing.T
	s      *scope
	prefix string
	snap   *model.Snapshot
	job    model.Job
	found  bool
}

func newJobWatch(t *testing.T, bootstrap, prefix string) *jobWatch {
	return &jobWatch{t: t, s: newScope(t, bootstrap), prefix: prefix}
}

// poll refreshes and finds the prefix's job.
func (w *jobWatch) poll(ctx context.Context) {
	w.t.Helper()
	w.snap = w.s.poll(ctx)
	now := time.Now()
	w.found = false
	for _, j := range model.Jobs(w.snap, w.s.hist, now) {
		if j.ID.Family == model.FlinkSink && j.ID.Name == w.prefix {
			w.job, w.found = j, true
		}
	}
}

func (w *jobWatch) problems() []model.Problem {
	if !w.found {
		return nil
	}
	return w.job.Problems(w.snap, model.Query{}, time.Now())
}

func (w *jobWatch) kinds() []model.ProblemKind {
	var out []model.ProblemKind
	for _, p := range w.problems() {
		out = append(out, p.Kind)
	}
	return out
}

func (w *jobWatch) String() string {
	if !w.found {
		return "no job " + w.prefix
	}
	j := w.job
	return strings.Join([]string{
		"tasks " + itoa(j.Tasks), "open " + itoa(len(j.Open)), "lingering " + itoa(len(j.Lingering)),
		"pooling " + boolText(j.Pooling), "shared " + boolText(j.Shared), "fences " + itoa(j.Fences5m), "timeouts " + itoa(j.Timeouts5m),
		"problems " + strings.Join(problemKinds(w.kinds()), ","), "pins " + pinsText(j.Pinned),
	}, " · ")
}

// until polls once a second until ok, checking every poll with each; it
// fails with what the view showed last when ok never holds.
func (w *jobWatch) until(ctx context.Context, patience time.Duration, what string, ok func() bool, each ...func() string) {
	w.t.Helper()
	deadline := time.Now().Add(patience)
	for n := 0; ; n++ {
		w.poll(ctx)
		if n%5 == 0 {
			w.t.Logf("waiting for %s: %s", what, w)
		}
		for _, c := range each {
			if bad := c(); bad != "" {
				w.t.Fatalf("%s (%s)", bad, w)
			}
		}
		if ok() {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			w.t.Fatalf("after %s: not %s; the jobs view: %s", patience, what, w)
		}
		time.Sleep(time.Second)
	}
}

// noLingering is a check for until: a live job's transactions never linger.
func (w *jobWatch) noLingering() string {
	if w.found && (len(w.job.Lingering) > 0 || slices.Contains(w.kinds(), model.ProblemLingering)) {
		return "lingering transactions shown for a job a producer drives"
	}
	return ""
}

// healthyFor polls n times a second apart: one job, parallelism tasks, the
// naming, no problem at any poll.
func (w *jobWatch) healthyFor(ctx context.Context, n, parallelism int, pooling bool) {
	w.t.Helper()
	for range n {
		w.poll(ctx)
		switch {
		case !w.found:
			w.t.Fatalf("no job %s in the jobs view", w.prefix)
		case w.job.Tasks != parallelism || w.job.Pooling != pooling || len(w.job.Lingering) > 0 || len(w.problems()) > 0:
			w.t.Fatalf("a healthy job (parallelism %d, pooling %v) shown as: %s; problems %+v", parallelism, pooling, w, w.problems())
		}
		time.Sleep(time.Second)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func boolText(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func problemKinds(ks []model.ProblemKind) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = string(k)
	}
	return out
}

// pinsText is each pin's id, and its producer's last write and its start
// relative to now, for a failure to show what the silence rule saw.
func pinsText(ps []model.JobPin) string {
	now := time.Now().UnixMilli()
	var out []string
	for _, p := range ps {
		out = append(out, fmt.Sprintf("%s last write %dms ago, began %dms ago", p.ID, now-p.LastWriteMs, now-p.StartMs))
	}
	return strings.Join(out, "; ")
}
