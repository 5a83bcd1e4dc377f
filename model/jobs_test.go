package model

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

func TestJobOf(t *testing.T) {
	uuid := "3f1e2d4c-0a1b-4c2d-9e8f-123456789012" // its last group is all digits
	for _, tc := range []struct {
		id   string
		want Member
	}{
		{"orders-enricher-v1-0-26", Member{Job: JobID{FlinkSink, "orders-enricher-v1"}, Unit: "0", Subtask: 0, Checkpoint: 26}},
		{"sink-2-0-3-7", Member{Job: JobID{FlinkSink, "sink-2-0"}, Unit: "3", Subtask: 3, Checkpoint: 7}},
		{"a-1-2", Member{Job: JobID{FlinkSink, "a"}, Unit: "1", Subtask: 1, Checkpoint: 2}},
		{"billing-" + uuid + "-1", Member{Job: JobID{StreamsApp, "billing"}, Unit: uuid + "-1", Subtask: -1, Checkpoint: -1}},
		{"billing-app-" + uuid + "-12", Member{Job: JobID{StreamsApp, "billing-app"}, Unit: uuid + "-12", Subtask: -1, Checkpoint: -1}},
		{"billing-0_3", Member{Job: JobID{StreamsApp, "billing"}, Unit: "0_3", Subtask: -1, Checkpoint: -1}},
		{"my-app-v2-12_104", Member{Job: JobID{StreamsApp, "my-app-v2"}, Unit: "12_104", Subtask: -1, Checkpoint: -1}},
		// Ids that only look similar.
		{"orders-enricher", Member{Job: JobID{Family: OtherFamily}, Subtask: -1, Checkpoint: -1}},
		{"orders-0", Member{Job: JobID{Family: OtherFamily}, Subtask: -1, Checkpoint: -1}},
		{"orders-+1-2", Member{Job: JobID{Family: OtherFamily}, Subtask: -1, Checkpoint: -1}},
		{"-1-2", Member{Job: JobID{Family: OtherFamily}, Subtask: -1, Checkpoint: -1}},
		{"app-0_", Member{Job: JobID{Family: OtherFamily}, Subtask: -1, Checkpoint: -1}},
		{"app-" + uuid[:35] + "x-1", Member{Job: JobID{Family: OtherFamily}, Subtask: -1, Checkpoint: -1}},
		{"x-3F1E2D4C-0A1B-4C2D-9E8F-12345678901A-1", Member{Job: JobID{Family: OtherFamily}, Subtask: -1, Checkpoint: -1}},
		{"", Member{Job: JobID{Family: OtherFamily}, Subtask: -1, Checkpoint: -1}},
	} {
		if got := JobOf(tc.id); got != tc.want {
			t.Errorf("JobOf(%q) = %+v, want %+v", tc.id, got, tc.want)
		}
	}
}

// Group reads ids in sorted order through a memo of the previous Flink
// subtask: it must say what JobOf says of every id, whatever came before.
func TestMemberMemoAgreesWithJobOf(t *testing.T) {
	uuid := "3f1e2d4c-0a1b-4c2d-9e8f-123456789012"
	ids := []string{"a-1-2", "a-1-2-3", "a-1-20", "a-1-2_3", "a-1-", "a-1-+5", "a-1-007", "a-1-99999999999999999999",
		"a-1-999999999999999999", "a-1-x", "a-10-1", "billing-" + uuid + "-1", "billing-" + uuid + "-12",
		"orders-enricher-v1-0-26", "orders-enricher-v1-0-27", "orders-enricher-v1-0-26-1", "orders-enricher-v1-0-0_3",
		"sink-2-0-3-7", "sink-2-0-3-8", "sink-2-0-3", "x-" + uuid[:35] + "-1", "x-" + uuid[:35] + "-2", ""}
	for _, order := range [][]string{ids, slices.Sorted(slices.Values(ids))} {
		var memo memberMemo
		for _, id := range order {
			if got, want := memo.of(id), JobOf(id); got != want {
				t.Errorf("after %q: %q is %+v, JobOf says %+v", memo.head, id, got, want)
			}
		}
	}
}

// A job's subtasks, their newest committed checkpoints, and the lingering
// rule: open on a checkpoint older than the newest committed one of the same
// subtask (a crashed attempt's leftovers); the newest checkpoint's own open
// transaction is not lingering, nor one on another subtask.
func TestJobsGroupsAndFindsLingering(t *testing.T) {
	now := time.Unix(10000, 0)
	open := func(id string, startedAgo time.Duration) Txn {
		tx := Txn{ID: id, State: Ongoing, TimeoutMs: 600000, Described: true}
		tx.SetStart(now.Add(-startedAgo))
		return tx
	}
	done := func(id string) Txn { return Txn{ID: id, State: CompleteCommit, Described: true} }
	s := &Snapshot{Txns: []Txn{
		done("crashy-0-10"), open("crashy-0-11", 5*time.Minute), done("crashy-0-12"), open("crashy-0-13", time.Second),
		done("crashy-1-12"), open("crashy-1-13", time.Second),
		done("calm-0-40"), open("calm-0-41", 2*time.Second),
		{ID: "legacy-producer", State: Empty},
		open("billing-0_3", time.Minute),
	}}
	s.Sort()
	jobs := Jobs(s, nil, now)
	var names []string
	for _, j := range jobs {
		names = append(names, string(j.ID.Family)+":"+j.ID.Name)
	}
	if !slices.Equal(names, []string{"flink:crashy", "streams:billing", "flink:calm", "other:"}) {
		t.Fatalf("jobs in order %v", names)
	}
	c := jobs[0]
	if !slices.Equal(c.Lingering, []string{"crashy-0-11"}) || len(c.Open) != 3 || c.IDs != 6 ||
		c.NewestCheckpoint != 13 || c.NewestCommitted != 12 || c.Oldest.ID != "crashy-0-11" || len(c.Units) != 2 {
		t.Fatalf("crashy: %+v", c)
	}
	if u := c.Units[0]; u.Subtask != 0 || u.NewestCommitted != 12 || u.NewestCheckpoint != 13 || !slices.Equal(u.Lingering, []string{"crashy-0-11"}) {
		t.Fatalf("crashy subtask 0: %+v", u)
	}
	if u := c.Units[1]; u.Subtask != 1 || len(u.Lingering) != 0 || !slices.Equal(u.Open, []string{"crashy-1-13"}) {
		t.Fatalf("crashy subtask 1: %+v", u)
	}
	if calm := jobs[2]; len(calm.Lingering) != 0 || calm.NewestCommitted != 40 {
		t.Fatalf("calm: %+v", calm)
	}
	if other := jobs[3]; other.IDs != 1 || len(other.Units) != 0 {
		t.Fatalf("other: %+v", other)
	}
}

// BenchmarkJobs: grouping 100,000 Flink ids of 50 jobs (4 subtasks each, 1 %
// open) into jobs, as a refresh would.
//
//	go test -run '^$' -bench BenchmarkJobs -benchmem -count 6 ./model/
func BenchmarkJobs(b *testing.B) {
	now := time.Unix(10000, 0)
	s := &Snapshot{}
	for i := range 100_000 {
		tx := Txn{ID: fmt.Sprintf("job%02d-sink-%d-%d", i%50, (i/50)%4, i/200), State: CompleteCommit, Described: true, TimeoutMs: 60000}
		if i%100 == 0 {
			tx.State = Ongoing
			tx.SetStart(now.Add(-time.Second))
		}
		s.Txns = append(s.Txns, tx)
	}
	s.Sort()
	b.ReportAllocs()
	for b.Loop() {
		if len(Jobs(s, nil, now)) != 50 {
			b.Fatal("not 50 jobs")
		}
	}
}

// Each problem of a job, judged from the job's figures: its kind and its
// line; the why and the way out of each are checked in
// TestJobProblemsSayWhyAndWayOut.
func TestJobProblems(t *testing.T) {
	now := time.Unix(10000, 0)
	flink := func(f func(*Job)) Job {
		j := Job{ID: JobID{FlinkSink, "orders"}, NewestCheckpoint: 12, NewestCommitted: 11, MinTimeoutMs: 60000, MaxTimeoutMs: 60000,
			Units: []Unit{{Subtask: 0, NewestCommitted: 11}, {Subtask: 1, NewestCommitted: 11}}}
		f(&j)
		return j
	}
	interval := Query{CheckpointInterval: 10 * time.Second}
	open := func(j *Job) { j.Open = []string{"orders-0-12"} }
	for _, tc := range []struct {
		name string
		job  Job
		q    Query
		max  int64
		want []string // kind: what
	}{
		{"healthy", flink(func(*Job) {}), interval, 900000, nil},
		{"lingering", flink(func(j *Job) { j.Lingering = []string{"orders-0-9", "orders-1-9"} }), Query{}, 0,
			[]string{"lingering: 2 lingering after a restart"}},
		{"lingering and pinning", flink(func(j *Job) {
			j.Lingering = []string{"orders-0-9"}
			j.Pinned = []JobPin{{TopicPartition: TopicPartition{"orders", 3}, ID: "orders-0-9"}, {TopicPartition: TopicPartition{"orders", 4}, ID: "orders-0-12"}}
		}), Query{}, 0, []string{"lingering: 1 lingering after a restart"}},
		{"one subtask behind", flink(func(j *Job) { j.Units[1].NewestCommitted, j.Units[1].Behind = 9, true }), Query{}, 0,
			[]string{"subtask_behind: subtask 1 behind: committed checkpoint 9, the job 11"}},
		{"not committing", flink(func(j *Job) { open(j); j.LastCommit = now.Add(-25 * time.Second) }), interval, 0,
			[]string{"not_committing: not committing: no commit for 25s (checkpoint interval 10s)"}},
		{"within 2× the interval", flink(func(j *Job) { open(j); j.LastCommit = now.Add(-20 * time.Second) }), interval, 0, nil},
		{"no interval, no cadence: not judged", flink(func(j *Job) { open(j); j.LastCommit = now.Add(-time.Hour) }), Query{}, 0, nil},
		{"no interval: 3× the cadence", flink(func(j *Job) { open(j); j.Cadence = 20 * time.Second; j.LastCommit = now.Add(-61 * time.Second) }), Query{}, 0,
			[]string{"not_committing: not committing: no commit for 1m1s (it committed every 20s)"}},
		{"no interval: within 3× the cadence", flink(func(j *Job) { open(j); j.Cadence = 20 * time.Second; j.LastCommit = now.Add(-59 * time.Second) }), Query{}, 0, nil},
		{"no interval: a fast cadence waits 30s", flink(func(j *Job) { open(j); j.Cadence = time.Second; j.LastCommit = now.Add(-29 * time.Second) }), Query{}, 0, nil},
		{"no interval: past 30s", flink(func(j *Job) { open(j); j.Cadence = time.Second; j.LastCommit = now.Add(-31 * time.Second) }), Query{}, 0,
			[]string{"not_committing: not committing: no commit for 31s (it committed every 1s)"}},
		{"the interval wins over the cadence", flink(func(j *Job) { open(j); j.Cadence = time.Hour; j.LastCommit = now.Add(-25 * time.Second) }), interval, 0,
			[]string{"not_committing: not committing: no commit for 25s (checkpoint interval 10s)"}},
		{"idle is not 'not committing'", flink(func(j *Job) { j.LastCommit = now.Add(-time.Hour); j.Cadence = time.Second }), interval, 0, nil},
		{"no commit seen is not judged", flink(func(j *Job) { open(j); j.Cadence = time.Second }), interval, 0, nil},
		{"shared prefix", flink(func(j *Job) { j.Shared, j.Takeovers = true, 6 }), Query{}, 0,
			[]string{"prefix_shared: prefix looks shared by two jobs (6 takeovers)"}},
		{"timeouts", flink(func(j *Job) { j.MinTimeoutMs, j.MaxTimeoutMs = 15000, 3600000 }), interval, 900000,
			[]string{"timeout_below_interval: timeout 15s below 2× the checkpoint interval 10s",
				"timeout_above_max: timeout 1h above the brokers' transaction.max.timeout.ms 15m"}},
		{"timeout at 2× the interval is fine", flink(func(j *Job) { j.MinTimeoutMs = 20000 }), interval, 0, nil},
		{"no timeout described", flink(func(j *Job) { j.MinTimeoutMs, j.MaxTimeoutMs = 0, 0 }), interval, 900000, nil},
		{"epoch rotates within a day", flink(func(j *Job) {
			j.Epoch = EpochOutlook{ID: "orders-1-0", ProducerID: 4, Epoch: 25000, PerHour: 360, Rotates: now.Add(21*time.Hour + 33*time.Minute)}
		}), Query{}, 0,
			[]string{"epoch_exhaustion: producer epoch nearly exhausted: orders-1-0 at epoch 25000 of 32766, 7767 transactions left, ~360/h: the producer id rotates in ~21h33m"}},
		{"epoch rotates in two days: not yet", flink(func(j *Job) {
			j.Epoch = EpochOutlook{ID: "orders-1-0", ProducerID: 4, Epoch: 20000, PerHour: 260, Rotates: now.Add(49 * time.Hour)}
		}), Query{}, 0, nil},
		{"epoch past 30000 with no rate known", flink(func(j *Job) { j.Epoch = EpochOutlook{ID: "orders-0-1", ProducerID: 4, Epoch: 30001} }), Query{}, 0,
			[]string{"epoch_exhaustion: producer epoch nearly exhausted: orders-0-1 at epoch 30001 of 32766, 2766 transactions left (rate not known yet)"}},
		{"a Streams app's rotation is no problem: its producer takes the new id", func() Job {
			j := Job{ID: JobID{StreamsApp, "counts"}}
			j.Epoch = EpochOutlook{ID: "counts-1b2c-0", ProducerID: 4, Epoch: 32000, PerHour: 36000, Rotates: now.Add(time.Minute)}
			return j
		}(), Query{}, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, p := range tc.job.Problems(&Snapshot{BrokerMaxTimeoutMs: tc.max}, tc.q, now) {
				got = append(got, string(p.Kind)+": "+p.What)
				if p.Why == "" || p.WayOut == "" {
					t.Errorf("%s: no why or way out: %+v", p.Kind, p)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("problems %q, want %q", got, tc.want)
			}
		})
	}
}

// BenchmarkJobsWithHistory: the same with the History a snapshot holds, a
// baseline of every id, as `snapshot -o json` computes it.
func BenchmarkJobsWithHistory(b *testing.B) {
	now := time.Unix(10000, 0)
	s := &Snapshot{}
	for i := range 100_000 {
		tx := Txn{ID: fmt.Sprintf("job%02d-sink-%d-%d", i%50, (i/50)%4, i/200), State: CompleteCommit, Described: true, TimeoutMs: 60000}
		s.Txns = append(s.Txns, tx)
	}
	s.Sort()
	h := NewHistory(1)
	h.Baseline(s)
	b.ReportAllocs()
	for b.Loop() {
		Jobs(s, h, now)
	}
}
