package model

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// What real Flink leaves in the coordinators (issue 20, observed on Kafka
// 4.4 with Flink 1.20.5 and 2.2.1, parallelism 3, checkpoints every 3s),
// and what the jobs view must make of it.
func TestJobsOnRealFlinkShapes(t *testing.T) {
	now := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) int64 { return now.Add(-d).UnixMilli() }
	open := func(id string, pid int64, started time.Duration) Txn {
		return Txn{ID: id, State: Ongoing, ProducerID: pid, ProducerEpoch: 3, TimeoutMs: 60000, StartUnixMs: ago(started), Described: true,
			Partitions: []TopicPartition{{Topic: "out", Partition: int32(pid % 3)}}}
	}
	done := func(id string, pid int64, started time.Duration) Txn {
		return Txn{ID: id, State: CompleteCommit, ProducerID: pid, ProducerEpoch: 4, TimeoutMs: 60000, StartUnixMs: ago(started), Described: true}
	}
	probe := func(id string, pid int64) Txn {
		return Txn{ID: id, State: Empty, ProducerID: pid, TimeoutMs: 60000, Described: true}
	}
	type want struct {
		tasks     int
		pooling   bool
		lingering []string
		retired   []string
		behind    []string
		shared    bool
	}
	for _, c := range []struct {
		name string
		txns []Txn
		want want
	}{
		{
			// POOLING: slots 0 and 1 alternate on one producer id; the
			// open slot began after the committed one. Half the polls see
			// slot 0 open and slot 1 committed, the others the reverse.
			name: "pooling, slot 0 open",
			txns: []Txn{open("p-0-0", 1, time.Second), done("p-0-1", 1, 4*time.Second),
				open("p-1-0", 2, time.Second), done("p-1-1", 2, 4*time.Second),
				open("p-2-0", 3, time.Second), done("p-2-1", 3, 4*time.Second)},
			want: want{tasks: 3, pooling: true},
		},
		{
			name: "pooling, slot 1 open",
			txns: []Txn{done("p-0-0", 1, 4*time.Second), open("p-0-1", 1, time.Second),
				done("p-1-0", 2, 4*time.Second), open("p-1-1", 2, time.Second),
				done("p-2-0", 3, 4*time.Second), open("p-2-1", 3, time.Second)},
			want: want{tasks: 3, pooling: true},
		},
		{
			// A pooled slot open for long after its sibling, begun after
			// it, committed: nobody drives it.
			name: "pooling, a slot left open",
			txns: []Txn{open("p-0-0", 1, 5*time.Minute), done("p-0-1", 1, 4*time.Minute),
				done("p-1-0", 2, 4*time.Second), open("p-1-1", 2, time.Second)},
			want: want{tasks: 2, pooling: true, lingering: []string{"p-0-0"}},
		},
		{
			// After a restore Flink initializes <prefix>-<subtask+3>-<N+1>
			// to abort what a wider run left: Empty at epoch 0, no subtask.
			name: "probe ids after a restore",
			txns: []Txn{done("p-0-7", 1, 4*time.Second), open("p-0-8", 11, time.Second),
				done("p-1-7", 2, 4*time.Second), open("p-1-8", 12, time.Second),
				done("p-2-7", 3, 4*time.Second), open("p-2-8", 13, time.Second),
				probe("p-3-8", 21), probe("p-4-8", 22), probe("p-5-8", 23), probe("p-6-8", 24), probe("p-9-8", 25)},
			want: want{tasks: 3},
		},
		{
			// Two INCREMENTING jobs on one prefix commit side by side on
			// checkpoints about 11 apart: both sequences are live.
			name: "shared prefix, both live",
			txns: []Txn{done("p-0-89", 101, 5*time.Second), open("p-0-90", 102, 2*time.Second),
				done("p-0-101", 201, 4*time.Second), open("p-0-102", 202, time.Second),
				done("p-1-89", 103, 5*time.Second), open("p-1-90", 104, 2*time.Second),
				done("p-1-101", 203, 4*time.Second), open("p-1-102", 204, time.Second)},
			want: want{tasks: 2, shared: true},
		},
		{
			// Rescaled 2 → 3 with a source of two splits: subtask 2 gets
			// an id every checkpoint and never writes. A subtask, not a
			// probe, once it has a few.
			name: "scaled out, one subtask idle",
			txns: []Txn{done("p-0-7", 1, 4*time.Second), open("p-0-8", 11, time.Second),
				done("p-1-7", 2, 4*time.Second), open("p-1-8", 12, time.Second),
				probe("p-2-6", 21), probe("p-2-7", 22), probe("p-2-8", 23), probe("p-3-5", 24)},
			want: want{tasks: 3},
		},
		{
			// Rescaled 3 → 2: subtask 2's ids stay, nothing open on them.
			name: "scaled in",
			txns: []Txn{done("p-0-49", 1, 4*time.Second), open("p-0-50", 11, time.Second),
				done("p-1-49", 2, 4*time.Second), open("p-1-50", 12, time.Second),
				done("p-2-40", 3, 2*time.Minute)},
			want: want{tasks: 2, retired: []string{"2"}},
		},
		{
			// A subtask whose commit does not come while the others go on.
			name: "subtask behind",
			txns: []Txn{done("p-0-49", 1, 4*time.Second), open("p-0-50", 11, time.Second),
				done("p-1-40", 2, 2*time.Minute), open("p-1-41", 12, 2*time.Minute)},
			want: want{tasks: 2, behind: []string{"1"}},
		},
		{
			// A transaction a crashed run left, older than a live one gets,
			// on a checkpoint before the subtask's newest commit.
			name: "lingering",
			txns: []Txn{open("p-0-48", 1, 3*time.Minute), done("p-0-49", 2, 4*time.Second), open("p-0-50", 11, time.Second)},
			want: want{tasks: 1, lingering: []string{"p-0-48"}},
		},
		{
			// The same, but young: not (yet) evidence that nobody drives it.
			name: "young, not lingering",
			txns: []Txn{open("p-0-48", 1, 10*time.Second), done("p-0-49", 2, 4*time.Second), open("p-0-50", 11, time.Second)},
			want: want{tasks: 1},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &Snapshot{TakenAt: now, Txns: c.txns}
			s.Sort()
			jobs := Jobs(s, nil, now)
			if len(jobs) != 1 {
				t.Fatalf("%d jobs, want 1", len(jobs))
			}
			j := jobs[0]
			var retired, behind []string
			for _, u := range j.Units {
				if u.Retired {
					retired = append(retired, u.Name)
				}
				if u.Behind {
					behind = append(behind, u.Name)
				}
			}
			got := want{tasks: j.Tasks, pooling: j.Pooling, lingering: j.Lingering, retired: retired, behind: behind, shared: j.Shared}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("got %+v\nwant %+v", got, c.want)
			}
			for _, p := range j.Problems(s, Query{}, now) {
				if p.Kind == ProblemLingering && len(c.want.lingering) == 0 || p.Kind == ProblemBehind && len(c.want.behind) == 0 {
					t.Errorf("problem %q", p.What)
				}
			}
			if slices.ContainsFunc(j.Units, func(u Unit) bool { return u.Probe && (u.Behind || u.Retired || len(u.Lingering) > 0) }) {
				t.Error("a probe unit judged as a subtask")
			}
		})
	}
}

// One-shot, no cadence known: two jobs on one prefix with checkpoints a
// minute apart. The other job's live transaction is 45s old and goes on
// from a committed checkpoint: it is not called lingering unless its
// producer is silent.
func TestSharedPrefixLongIntervalNotLingering(t *testing.T) {
	now := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	tx := func(id string, st State, pid int64, started time.Duration) Txn {
		return Txn{ID: id, State: st, ProducerID: pid, ProducerEpoch: 1, TimeoutMs: 600000, StartUnixMs: now.Add(-started).UnixMilli(), Described: true,
			Partitions: []TopicPartition{{Topic: "out", Partition: int32(pid)}}}
	}
	build := func(lastWrite time.Duration) *Snapshot {
		s := &Snapshot{TakenAt: now, Txns: []Txn{
			tx("p-0-89", CompleteCommit, 1, 100*time.Second), tx("p-0-90", Ongoing, 2, 45*time.Second),
			tx("p-0-101", CompleteCommit, 3, 20*time.Second), tx("p-0-102", Ongoing, 4, 5*time.Second)},
			Partitions: []Partition{{TopicPartition: TopicPartition{Topic: "out", Partition: 2}, HighWatermark: 20, LastStableOffset: 10,
				Producers: []Producer{{ProducerID: 2, ProducerEpoch: 1, LastWriteMs: WriteMs(now.Add(-lastWrite)), CurrentTxnStartOffset: 10}}}}}
		s.Sort()
		return s
	}
	if j := Jobs(build(time.Second), nil, now)[0]; len(j.Lingering) != 0 {
		t.Errorf("writing a second ago: lingering %v", j.Lingering)
	}
	if j := Jobs(build(40*time.Second), nil, now)[0]; !slices.Equal(j.Lingering, []string{"p-0-90"}) {
		t.Errorf("silent for 40s: lingering %v, want p-0-90", j.Lingering)
	}
	// kfake reports a transaction's start as its producer's last write,
	// whatever it wrote since: no evidence of silence.
	if j := Jobs(build(45*time.Second), nil, now)[0]; len(j.Lingering) != 0 {
		t.Errorf("last write at the start: lingering %v", j.Lingering)
	}
}

// A job killed and not restarted: its transactions stay open, nothing
// commits, its producers write nothing. The problem says until when the
// coordinator leaves them and never offers to end what a producer writes.
func TestCrashedNotRestarted(t *testing.T) {
	now := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	build := func(lastWrite, started time.Duration) *Snapshot {
		s := &Snapshot{TakenAt: now}
		for sub := range 3 {
			pid := int64(10 + sub)
			tp := TopicPartition{Topic: "out", Partition: int32(sub)}
			s.Txns = append(s.Txns,
				Txn{ID: fmt.Sprintf("p-%d-7", sub), State: CompleteCommit, ProducerID: pid - 10, TimeoutMs: 60000, Described: true},
				Txn{ID: fmt.Sprintf("p-%d-8", sub), State: Ongoing, ProducerID: pid, TimeoutMs: 60000, Described: true,
					StartUnixMs: now.Add(-started).UnixMilli(), Partitions: []TopicPartition{tp}})
			s.Partitions = append(s.Partitions, Partition{TopicPartition: tp, HighWatermark: 50, LastStableOffset: 40,
				Producers: []Producer{{ProducerID: pid, LastWriteMs: WriteMs(now.Add(-lastWrite)), CurrentTxnStartOffset: 40}}})
			s.GroupCommits = append(s.GroupCommits, GroupCommit{Group: "billing", TopicPartition: tp, Offset: 40})
		}
		SortGroupCommits(s.GroupCommits)
		s.Sort()
		return s
	}
	kinds := func(s *Snapshot) []ProblemKind {
		var out []ProblemKind
		for _, p := range Jobs(s, nil, now)[0].Problems(s, Query{}, now) {
			out = append(out, p.Kind)
		}
		return out
	}
	if k := kinds(build(time.Second, 40*time.Second)); slices.Contains(k, ProblemCrashed) {
		t.Errorf("producers writing a second ago: %v", k)
	}
	if k := kinds(build(20*time.Second, 20*time.Second)); slices.Contains(k, ProblemCrashed) {
		t.Errorf("transactions 20s old: %v", k)
	}
	if k := kinds(build(42*time.Second, 42*time.Second)); slices.Contains(k, ProblemCrashed) {
		t.Errorf("the last write reported at the start (kfake: the demo's live backfill): %v", k)
	}
	s := build(40*time.Second, 42*time.Second)
	ps := Jobs(s, nil, now)[0].Problems(s, Query{}, now)
	if len(ps) == 0 || ps[0].Kind != ProblemCrashed {
		t.Fatalf("problems %v, want crashed first", ps)
	}
	p := ps[0]
	for _, want := range []string{"crashed, not restarted: 3 open, nothing written for 40s"} {
		if p.What != want {
			t.Errorf("what %q, want %q", p.What, want)
		}
	}
	for _, want := range []string{"group billing waits", "aborts them at 03:00:18 UTC (in 18s)", "loses its records"} {
		if !strings.Contains(p.Why, want) {
			t.Errorf("why %q lacks %q", p.Why, want)
		}
	}
	if !strings.HasPrefix(p.WayOut, "restart the job from its latest checkpoint") {
		t.Errorf("way out %q", p.WayOut)
	}
	// One subtask wrote a single batch at its start (real Flink, killed a
	// second in): that pin says nothing, the others still say silent.
	s1 := build(40*time.Second, 42*time.Second)
	s1.Partitions[1].Producers[0].LastWriteMs = WriteMs(now.Add(-42 * time.Second))
	if k := kinds(s1); len(k) == 0 || k[0] != ProblemCrashed {
		t.Errorf("one pin without evidence: %v, want crashed", k)
	}
	// A run that committed checkpoint 9 since: restarted, and the open
	// ones linger.
	for sub := range 3 {
		s.Txns = append(s.Txns, Txn{ID: fmt.Sprintf("p-%d-9", sub), State: CompleteCommit, ProducerID: int64(20 + sub), TimeoutMs: 60000,
			Described: true, StartUnixMs: now.Add(-35 * time.Second).UnixMilli()})
	}
	s.Sort()
	if k := kinds(s); len(k) == 0 || k[0] != ProblemLingering || slices.Contains(k, ProblemCrashed) {
		t.Errorf("restarted: %v, want lingering and not crashed", k)
	}
}

// Aborts its producers did not make, minute after minute: a crash loop;
// one restart's fences, or a stop's timeouts, are one minute and are not.
// The timeout rule takes the commit cadence when no interval is given.
func TestCrashLoopAndCadenceInterval(t *testing.T) {
	now := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	s := &Snapshot{TakenAt: now, Txns: []Txn{{ID: "p-0-40", State: CompleteCommit, TimeoutMs: 5000, Described: true}}}
	s.Sort()
	kinds := func(h *History) []ProblemKind {
		var out []ProblemKind
		for _, p := range Jobs(s, h, now)[0].Problems(s, Query{}, now) {
			out = append(out, p.Kind)
		}
		return out
	}
	h := NewHistory(100)
	for i := range 6 { // one stop: every transaction times out at once
		h.Add([]Event{{At: now.Add(-2*time.Minute + time.Duration(i)*time.Second), ID: fmt.Sprintf("p-%d-9", i), Kind: TimedOut}})
	}
	if k := kinds(h); slices.Contains(k, ProblemCrashLoop) {
		t.Errorf("one stop: %v", k)
	}
	for m := range 3 {
		h.Add([]Event{{At: now.Add(time.Duration(m-3) * time.Minute), ID: fmt.Sprintf("p-0-%d", 20+m), Kind: Fenced}})
	}
	if k := kinds(h); !slices.Contains(k, ProblemCrashLoop) {
		t.Errorf("fences in 3 minutes of 5: %v", k)
	}
	// Commits every 3s with a 5s timeout.
	h2 := NewHistory(100)
	for i := range 6 {
		h2.Add([]Event{{At: now.Add(time.Duration(i-6) * 3 * time.Second), ID: fmt.Sprintf("p-0-%d", 34+i), Kind: Committed}})
	}
	j := Jobs(s, h2, now)[0]
	ps := j.Problems(s, Query{}, now)
	if !slices.ContainsFunc(ps, func(p Problem) bool {
		return p.Kind == ProblemTimeoutShort && p.What == "timeout 5s below 2× the checkpoint interval 3s (its commit cadence)"
	}) {
		t.Errorf("cadence %v: problems %v", j.Cadence, ps)
	}
	if ps := j.Problems(s, Query{CheckpointInterval: 2 * time.Second}, now); slices.ContainsFunc(ps, func(p Problem) bool { return p.Kind == ProblemTimeoutShort }) {
		t.Errorf("--checkpoint-interval 2s overrides the cadence: %v", ps)
	}
}

// One crash that leaves two transactions of a subtask open (one
// pre-committed, the next begun) loses both to the timeout: one round. A
// job that runs again after each loss and loses again is a crash loop
// within a minute, long before three minutes of losses.
func TestCrashLoopRounds(t *testing.T) {
	now := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	s := &Snapshot{TakenAt: now, Txns: []Txn{{ID: "p-0-40", State: CompleteCommit, TimeoutMs: 5000, Described: true}}}
	s.Sort()
	loop := func(h *History) bool {
		return slices.ContainsFunc(Jobs(s, h, now)[0].Problems(s, Query{}, now), func(p Problem) bool { return p.Kind == ProblemCrashLoop })
	}
	lose := func(h *History, id string, began, at time.Duration, k EventKind) {
		h.Add([]Event{{At: now.Add(at), ID: id, Kind: k, Begun: now.Add(began)}})
	}
	h := NewHistory(100)
	lose(h, "p-0-8", -40*time.Second, -30*time.Second, TimedOut)
	lose(h, "p-0-9", -37*time.Second, -27*time.Second, TimedOut)
	lose(h, "p-0-9", -37*time.Second, -26*time.Second, Fenced) // a restore fences what is left
	if loop(h) {
		t.Errorf("one crash, its two open transactions timed out and a restore: a crash loop")
	}
	lose(h, "p-0-10", -20*time.Second, -10*time.Second, TimedOut)
	if loop(h) {
		t.Errorf("two rounds: a crash loop")
	}
	lose(h, "p-0-11", -8*time.Second, -time.Second, TimedOut)
	if !loop(h) {
		t.Errorf("three rounds in 40 s, each begun after the last was lost: no crash loop")
	}
	if later := now.Add(6 * time.Minute); slices.ContainsFunc(Jobs(s, h, later)[0].Problems(s, Query{}, later), func(p Problem) bool { return p.Kind == ProblemCrashLoop }) {
		t.Errorf("rounds older than 5 minutes still make a crash loop")
	}
}

// A job that stopped half an hour before txnscope started: read from the
// coordinators' log, its last commit is the log's, not the moment the log
// was read; the log's past is state (emit false), and still says when.
func TestLastCommitFromTheLog(t *testing.T) {
	now := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	stopped := now.Add(-30 * time.Minute)
	l := NewTxnLog()
	for sub := range 2 {
		id := fmt.Sprintf("p-%d-7", sub)
		at := stopped.Add(-time.Duration(sub) * time.Minute).UnixMilli()
		for _, st := range []State{Ongoing, PrepareCommit, CompleteCommit} {
			l.Apply(TxnLogRecord{ID: id, State: st, ProducerID: int64(sub), TimeoutMs: 60000, StartMs: at - 3000, LastUpdateMs: at,
				PrevProducerID: -1, NextProducerID: -1, NextProducerEpoch: -1}, false, now)
		}
	}
	s := l.Snapshot(func(int32) int32 { return 0 })
	s.TakenAt = now
	h := NewHistory(10)
	h.Baseline(s)
	j := Jobs(s, h, now)[0]
	if !j.LastCommit.Equal(stopped) || !j.SlowestCommit.Equal(stopped.Add(-time.Minute)) || j.SlowestUnit != "1" {
		t.Errorf("last commit %v, slowest %s at %v; want %v and subtask 1 a minute before", j.LastCommit, j.SlowestUnit, j.SlowestCommit, stopped)
	}
	// Polls alone say nothing of when.
	p := &Snapshot{TakenAt: now, Txns: s.Txns}
	h2 := NewHistory(10)
	h2.Baseline(p)
	if j := Jobs(p, h2, now)[0]; !j.LastCommit.IsZero() {
		t.Errorf("from one poll: last commit %v, want unknown", j.LastCommit)
	}
}

// Flink's REST API has the last word on whether a job runs: a job it says
// FAILED is crashed though no partition says its producers are silent; one
// it says RUNNING is not, though they are.
func TestCrashedTakesFlinksWord(t *testing.T) {
	now := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	tp := TopicPartition{Topic: "out", Partition: 0}
	open := Txn{ID: "p-0-9", State: Ongoing, ProducerID: 7, TimeoutMs: 600000, Described: true, Partitions: []TopicPartition{tp}}
	open.SetStart(now.Add(-2 * time.Minute))
	s := &Snapshot{TakenAt: now, Txns: []Txn{{ID: "p-0-8", State: CompleteCommit, ProducerID: 6, TimeoutMs: 600000, Described: true}, open},
		Partitions: []Partition{{TopicPartition: tp, HighWatermark: 20, LastStableOffset: 10,
			Producers: []Producer{{ProducerID: 7, CurrentTxnStartOffset: 10, LastWriteMs: WriteMs(now.Add(-100 * time.Second))}}}}}
	s.Sort()
	kinds := func(state string) (out []ProblemKind, what string) {
		var fv *FlinkView
		if state != "" {
			fv = &FlinkView{Jobs: []FlinkJob{{Source: "http://jm:8081", ID: "j", Name: "job p", State: state}}}
		}
		g := Group(s, PinsOf(s, nil, nil, now))
		g.Flink = fv
		for _, p := range g.Jobs(nil, now)[0].Problems(s, Query{}, now) {
			out = append(out, p.Kind)
			if p.Kind == ProblemCrashed {
				what = p.What
			}
		}
		return out, what
	}
	if k, _ := kinds(""); !slices.Contains(k, ProblemCrashed) {
		t.Errorf("silent producer, no Flink: %v, want crashed", k)
	}
	if k, _ := kinds("RUNNING"); slices.Contains(k, ProblemCrashed) {
		t.Errorf("Flink says RUNNING: %v, want not crashed", k)
	}
	if k, _ := kinds("RESTARTING"); slices.Contains(k, ProblemCrashed) {
		t.Errorf("Flink says RESTARTING: %v, want not crashed", k)
	}
	// A producer that wrote a moment ago: live, for the brokers.
	s.Partitions[0].Producers[0].LastWriteMs = WriteMs(now.Add(-time.Second))
	if k, _ := kinds(""); slices.Contains(k, ProblemCrashed) {
		t.Errorf("live producer, no Flink: %v", k)
	}
	if k, what := kinds("FAILED"); !slices.Contains(k, ProblemCrashed) || what != "crashed, not restarted: 1 open, Flink says FAILED" {
		t.Errorf("Flink says FAILED: %v %q", k, what)
	}
	// With Flink's checkpoints the way out says what aborting loses.
	for _, c := range []struct {
		latest int64
		want   string
	}{
		{8, "1 belong to checkpoints that did not complete: aborting them loses nothing Flink counts as delivered"},
		{9, "1 belong to completed checkpoint 9: their records are in Flink's state, restoring from it commits them and aborting loses them"},
	} {
		fv := &FlinkView{Jobs: []FlinkJob{{Source: "http://jm:8081", ID: "j", Name: "job p", State: "FAILED", StartMs: now.Add(-time.Hour).UnixMilli(),
			Latest: &FlinkCheckpoint{ID: c.latest, Status: "COMPLETED", AckMs: now.UnixMilli()}}}}
		g := Group(s, PinsOf(s, nil, nil, now))
		g.Flink = fv
		ps := g.Jobs(nil, now)[0].Problems(s, Query{}, now)
		if len(ps) == 0 || ps[0].Kind != ProblemCrashed || !strings.HasSuffix(ps[0].WayOut, c.want) {
			t.Errorf("latest completed %d: %+v, want the way out to end %q", c.latest, ps, c.want)
		}
	}
}

// A subtask whose commits lag has its open checkpoints one after another,
// however many: not two jobs. Two runs on one prefix leave a gap.
func TestSequencesNeedAGap(t *testing.T) {
	now := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	shared := func(cps ...int) bool {
		s := &Snapshot{TakenAt: now, Txns: []Txn{{ID: "p-0-3", State: CompleteCommit, ProducerID: 1, TimeoutMs: 60000, Described: true}}}
		for i, c := range cps {
			tx := Txn{ID: fmt.Sprintf("p-0-%d", c), State: Ongoing, ProducerID: int64(10 + i), TimeoutMs: 60000, Described: true}
			tx.SetStart(now.Add(-time.Duration(len(cps)-i) * time.Second))
			s.Txns = append(s.Txns, tx)
		}
		s.Sort()
		j := Jobs(s, nil, now)[0]
		return j.Shared || j.Sequences != ""
	}
	if shared(4, 5, 6, 7, 8) {
		t.Error("a lagging committer's checkpoints 4 to 8 taken for two jobs")
	}
	if !shared(4, 5, 12, 13) {
		t.Error("checkpoints 4-5 and 12-13 open at once not taken for two jobs")
	}
}
