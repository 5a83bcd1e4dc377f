package model

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestOrphanedTransactions: POOLING ids shaped as Flink 2.2 left them, restored 3 → 2
// (the new run writes the ids of subtasks 0 and 2), and a prefix whose job
// runs on under another prefix. Orphaned only when old, silent, and
// superseded; never a live producer's, never an INCREMENTING subtask's
// (the lingering and behind rules speak for those).
func TestOrphanedTransactions(t *testing.T) {
	now := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	tp := func(n int32) TopicPartition { return TopicPartition{Topic: "out", Partition: n} }
	open := func(id string, pid int64, age time.Duration, part int32) Txn {
		t := Txn{ID: id, State: Ongoing, ProducerID: pid, ProducerEpoch: 4, TimeoutMs: 120000, Described: true, Partitions: []TopicPartition{tp(part)}}
		t.SetStart(now.Add(-age))
		return t
	}
	done := func(id string, pid int64, age time.Duration) Txn {
		t := Txn{ID: id, State: CompleteCommit, ProducerID: pid, ProducerEpoch: 9, TimeoutMs: 120000, Described: true}
		t.SetStart(now.Add(-age))
		return t
	}
	pin := func(part int32, pid int64, wrote time.Duration) Partition {
		return Partition{TopicPartition: tp(part), HighWatermark: 50, LastStableOffset: 40,
			Producers: []Producer{{ProducerID: pid, LastWriteMs: WriteMs(now.Add(-wrote)), CurrentTxnStartOffset: 40}}}
	}
	for _, tc := range []struct {
		name   string
		txns   []Txn
		parts  []Partition
		flink  string // the matched Flink job's state ("": no --flink)
		want   []string
		reason OrphanCause
	}{
		{"restored 3 → 2: subtask 1's slot left open, silent, while subtasks 0 and 2 commit",
			[]Txn{open("p-1-1", 12, 40*time.Second, 1), done("p-0-0", 11, 2*time.Second), done("p-2-0", 10, 2*time.Second),
				open("p-0-1", 14, time.Second, 0), open("p-2-1", 13, time.Second, 2), done("p-1-0", 9, time.Minute)},
			[]Partition{pin(1, 12, 39*time.Second)}, "", []string{"p-1-1"}, OrphanedRun},
		{"the same, its producer wrote a second ago: live, not orphaned",
			[]Txn{open("p-1-1", 12, 40*time.Second, 1), done("p-0-0", 11, 2*time.Second), done("p-2-0", 10, 2*time.Second)},
			[]Partition{pin(1, 12, time.Second)}, "", nil, ""},
		{"the same, 5 s old: younger than a live transaction gets",
			[]Txn{open("p-1-1", 12, 5*time.Second, 1), done("p-0-0", 11, 2*time.Second), done("p-2-0", 10, 2*time.Second)},
			[]Partition{pin(1, 12, 4*time.Second)}, "", nil, ""},
		{"the same, nothing committed since it began: not known superseded (a crash: the crashed rule speaks)",
			[]Txn{open("p-1-1", 12, 40*time.Second, 1), done("p-0-0", 11, time.Minute), done("p-2-0", 10, time.Minute)},
			[]Partition{pin(1, 12, 39*time.Second)}, "", nil, ""},
		{"INCREMENTING: not this rule's",
			[]Txn{open("p-1-7", 12, 40*time.Second, 1), done("p-0-8", 11, 2*time.Second), done("p-2-8", 10, 2*time.Second), done("p-1-6", 9, time.Minute)},
			[]Partition{pin(1, 12, 39*time.Second)}, "", nil, ""},
		{"prefix changed: the Flink job commits under q since, nothing of p did",
			[]Txn{open("p-0-0", 11, 40*time.Second, 0), done("p-0-1", 14, time.Minute), done("q-0-0", 20, 3*time.Second)},
			[]Partition{pin(0, 11, 39*time.Second)}, "RUNNING", []string{"p-0-0"}, OrphanedPrefix},
		{"the Flink job runs and commits nowhere (its checkpoints hang): not orphaned",
			[]Txn{open("p-0-0", 11, 40*time.Second, 0), done("p-0-1", 14, time.Minute), done("q-0-0", 20, time.Minute)},
			[]Partition{pin(0, 11, 39*time.Second)}, "RUNNING", nil, ""},
		{"no --flink: a prefix with no commits is the crashed rule's, not orphaned",
			[]Txn{open("p-0-0", 11, 40*time.Second, 0), done("p-0-1", 14, time.Minute), done("q-0-0", 20, 3*time.Second)},
			[]Partition{pin(0, 11, 39*time.Second)}, "", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Snapshot{TakenAt: now, Txns: tc.txns, Partitions: tc.parts}
			s.Sort()
			g := Group(s, PinsOf(s, nil, nil, now))
			if tc.flink != "" {
				g.Flink = &FlinkView{Jobs: []FlinkJob{{Source: "http://jm:8081", ID: "j", Name: "job p q", State: tc.flink}}}
			}
			// History saw each committed transaction end at its start + 1 s.
			h := NewHistory(100)
			h.Baseline(&Snapshot{TakenAt: now.Add(-2 * time.Minute)})
			for _, tx := range tc.txns {
				if tx.State == CompleteCommit {
					h.Add([]Event{{At: tx.StartTime().Add(time.Second), ID: tx.ID, Kind: Committed, ProducerID: tx.ProducerID, ProducerEpoch: tx.ProducerEpoch}})
				}
			}
			var j Job
			for _, jj := range g.Jobs(h, now) {
				if jj.ID.Name == "p" {
					j = jj
				}
			}
			if !slices.Equal(j.Orphaned, tc.want) || j.OrphanedBy != tc.reason {
				t.Fatalf("orphaned %v (%q), want %v (%q); lingering %v", j.Orphaned, j.OrphanedBy, tc.want, tc.reason, j.Lingering)
			}
			ps := j.Problems(s, Query{}, now)
			has := slices.ContainsFunc(ps, func(p Problem) bool { return p.Kind == ProblemOrphaned })
			if has != (len(tc.want) > 0) {
				t.Fatalf("problems %+v", ps)
			}
			for _, p := range ps {
				if p.Kind == ProblemOrphaned && (!strings.Contains(p.Why, "FLINK-40626") || !strings.Contains(p.WayOut, "--flink-checkpoints")) {
					t.Errorf("orphaned: %+v", p)
				}
				if p.Kind == ProblemCrashed && len(tc.want) > 0 {
					t.Errorf("orphans called crashed: %+v", p)
				}
			}
		})
	}
}

// TestOrphanWayOut: with Flink's checkpoints read, the way out is each
// transaction's verdict: abort what never completed, commit what did.
func TestOrphanWayOut(t *testing.T) {
	now := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	j := Job{ID: JobID{FlinkSink, "p"}, Orphaned: []string{"p-1-0", "p-1-1"}, OrphanedBy: OrphanedRun,
		OpenVerdicts: []Verdict{{ID: "p-1-0", Kind: NotCheckpointed}, {ID: "p-1-1", Kind: Checkpointed}, {ID: "p-0-0", Kind: Checkpointed}}}
	p := j.orphanProblem(now, time.UTC)
	for _, want := range []string{"force-terminate p-1-0 (a on each)", "commit p-1-1 (c on each)"} {
		if !strings.Contains(p.WayOut, want) {
			t.Errorf("way out %q lacks %q", p.WayOut, want)
		}
	}
	if strings.Contains(p.WayOut, "p-0-0") || strings.Contains(p.WayOut, "--flink-checkpoints") {
		t.Errorf("way out %q: only the orphans, their verdicts known", p.WayOut)
	}
}

// TestPoolingSubtaskRetired: restored 3 → 2, Flink 2.2 left subtask 1's
// slots idle (committed a minute ago, nothing open) while 0 and 2 commit:
// two tasks, subtask 1 retired, no problem.
func TestPoolingSubtaskRetired(t *testing.T) {
	now := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	at := func(id string, st State, pid int64, age time.Duration) Txn {
		t := Txn{ID: id, State: st, ProducerID: pid, TimeoutMs: 120000, Described: true}
		if st == Ongoing {
			t.Partitions = []TopicPartition{{Topic: "out", Partition: 0}}
		}
		t.SetStart(now.Add(-age))
		return t
	}
	s := &Snapshot{TakenAt: now, Txns: []Txn{
		at("p-0-0", CompleteCommit, 11, 4*time.Second), at("p-0-1", Ongoing, 14, time.Second),
		at("p-1-0", Empty, 9, time.Minute), at("p-1-1", CompleteCommit, 12, time.Minute),
		at("p-2-0", CompleteCommit, 10, 4*time.Second), at("p-2-1", Ongoing, 13, time.Second),
	}}
	s.Sort()
	j := Jobs(s, nil, now)[0]
	if !j.Pooling || j.Tasks != 2 || !slices.ContainsFunc(j.Units, func(u Unit) bool { return u.Subtask == 1 && u.Retired }) {
		t.Fatalf("pooling %v, tasks %d, units %+v", j.Pooling, j.Tasks, j.Units)
	}
	if ps := j.Problems(s, Query{}, now); len(ps) > 0 {
		t.Errorf("problems %+v", ps)
	}
}
