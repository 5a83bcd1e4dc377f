package main

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/txnscope/txnscope/model"
)

// The mix the scale benchmark relies on: every K-th id stays Ongoing, every
// other id is committed, and a second run with -from adds to the first.
func TestOpenEveryLeavesTheMix(t *testing.T) {
	fake, err := kfake.NewCluster(kfake.NumBrokers(3))
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	boot := fake.ListenAddrs()[0]
	c := config{bootstrap: boot, n: 60, prefix: "mix", topic: "mix", partitions: 4, timeoutMs: 60000,
		parallel: 8, openEvery: 10, deadline: time.Minute}
	if err := run(c); err != nil {
		t.Fatal(err)
	}
	c.from, c.n = 60, 40
	if err := run(c); err != nil {
		t.Fatal(err)
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(boot))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	listed, err := kadm.NewClient(cl).ListTransactions(ctx, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]int{}
	for _, l := range listed.Sorted() {
		states[l.State]++
	}
	// kfake says Empty where Kafka 4.4 says CompleteCommit (as
	// scripts/kafka-tools transactions list shows).
	if len(listed) != 100 || states["Ongoing"] != 10 || states["Empty"]+states["CompleteCommit"] != 90 {
		t.Fatalf("want 100 ids, 10 Ongoing and 90 committed; got %d ids: %v", len(listed), states)
	}
}

func TestBadFlagsAreRefused(t *testing.T) {
	good := config{n: 1, partitions: 1, timeoutMs: 1, parallel: 1, openEvery: 1}
	for name, c := range map[string]config{
		"negative n":   {n: -1, partitions: 1, timeoutMs: 1, parallel: 1, openEvery: 1},
		"no parallel":  {n: 1, partitions: 1, timeoutMs: 1, parallel: 0, openEvery: 1},
		"open-every 0": {n: 1, partitions: 1, timeoutMs: 1, parallel: 1, openEvery: 0},
	} {
		if c.check() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := good.check(); err != nil {
		t.Errorf("a good config is refused: %v", err)
	}
}

// With -flink-jobs, ids are Flink sinks' names, spread over every job and
// subtask before the checkpoint moves on, and txnscope groups them so.
func TestFlinkIDs(t *testing.T) {
	c := config{prefix: "job", jobs: 3, subtasks: 2}
	jobs := map[string]bool{}
	for i, want := range []string{"job0-0-0", "job1-0-0", "job2-0-0", "job0-1-0", "job1-1-0", "job2-1-0", "job0-0-1"} {
		id := c.id(i)
		if id != want {
			t.Errorf("id(%d) = %q, want %q", i, id, want)
		}
		m := model.JobOf(id)
		if m.Job.Family != model.FlinkSink {
			t.Errorf("%s: family %s", id, m.Job.Family)
		}
		jobs[m.Job.Name] = true
	}
	if len(jobs) != 3 {
		t.Errorf("jobs %v, want 3", jobs)
	}
	if got := (config{prefix: "bench"}).id(7); got != "bench-7" {
		t.Errorf("plain id %q", got)
	}
}
