package model

import (
	"testing"
	"time"
)

func TestMatchFlink(t *testing.T) {
	jobs := []FlinkJob{
		{ID: "a1", Name: "flinkjob orders", State: "FAILED", StartMs: 100},
		{ID: "a2", Name: "flinkjob orders", State: "RUNNING", StartMs: 50},
		{ID: "a3", Name: "flinkjob orders", State: "CANCELED", StartMs: 300},
		{ID: "b1", Name: "orders-v2 enricher", State: "RUNNING", StartMs: 10},
		{ID: "c1", Name: "payments", State: "RUNNING", StartMs: 10},
	}
	for _, c := range []struct {
		prefix   string
		explicit map[string]string
		id, by   string
	}{
		{"orders", nil, "a2", "name"}, // the running one beats a newer failed one
		{"orders-v2", nil, "b1", "name"},
		{"order", nil, "", ""}, // a word, not a part of one
		{"payments", nil, "c1", "name"},
		{"payments", map[string]string{"payments": "pay-sink"}, "", ""}, // mapped elsewhere
		{"pay-sink", map[string]string{"payments": "pay-sink"}, "c1", "--flink-prefix"},
		{"pay-sink", map[string]string{"c1": "pay-sink"}, "c1", "--flink-prefix"},
		{"orders", map[string]string{"a3": "orders"}, "a3", "--flink-prefix"}, // the operator's word wins
		{"", nil, "", ""},
		{"orders", map[string]string{"flinkjob orders": "orders"}, "a2", "--flink-prefix"}, // a name: its runs, the running one
	} {
		m, ok, err := MatchFlink(c.prefix, jobs, c.explicit)
		if err != nil || ok != (c.id != "") || m.Job.ID != c.id || m.By != c.by {
			t.Errorf("MatchFlink(%q, %v) = %s by %q, %v; want %q by %q", c.prefix, c.explicit, m.Job.ID, m.By, ok, c.id, c.by)
		}
	}
}

func TestFlinkJobFigures(t *testing.T) {
	for _, c := range []struct {
		job      FlinkJob
		sink     int
		interval time.Duration
	}{
		{FlinkJob{Vertices: []FlinkVertex{{"Source: generator -> slow-snapshot", 3}, {"kafka-sink: Writer -> kafka-sink: Committer", 2}}, IntervalMs: 3000}, 2, 3 * time.Second},
		{FlinkJob{Vertices: []FlinkVertex{{"Source: gen", 3}, {"Map", 5}}, IntervalMs: 9223372036854775807}, 5, 0}, // checkpointing off
		{FlinkJob{}, 0, 0},
	} {
		if s, i := c.job.SinkParallelism(), c.job.Interval(); s != c.sink || i != c.interval {
			t.Errorf("%+v: sink parallelism %d, interval %s; want %d, %s", c.job, s, i, c.sink, c.interval)
		}
	}
}

// Jobs of different names that hold the prefix are different jobs: none is
// the prefix's for being the newest, and --flink-prefix says which.
func TestMatchFlinkRefusesSeveralJobs(t *testing.T) {
	jobs := []FlinkJob{
		{ID: "a1", Name: "enrich orders (prod)", State: "FAILED", StartMs: 100},
		{ID: "b1", Name: "orders v2 backfill", State: "FINISHED", StartMs: 900},
	}
	if m, ok, err := MatchFlink("orders", jobs, nil); ok || err == nil ||
		err.Error() != `several Flink jobs match prefix "orders", "enrich orders (prod)" (a1) and "orders v2 backfill" (b1): which one is its job is not known; name it with --flink-prefix JOB=orders (JOB a job's id or name)` {
		t.Errorf("%+v %v %v", m, ok, err)
	}
	for _, explicit := range []map[string]string{{"enrich orders (prod)": "orders"}, {"a1": "orders"}} {
		if m, ok, err := MatchFlink("orders", jobs, explicit); !ok || err != nil || m.Job.ID != "a1" {
			t.Errorf("%v: %+v %v %v", explicit, m, ok, err)
		}
	}
	// Mapped by name to two jobs of different names: still not one job.
	if _, ok, err := MatchFlink("orders", jobs, map[string]string{"enrich orders (prod)": "orders", "orders v2 backfill": "orders"}); ok || err == nil {
		t.Errorf("two names mapped to one prefix: %v %v", ok, err)
	}
}
