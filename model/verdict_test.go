package model

import (
	"strings"
	"testing"
	"time"
)

func cm(id string, pid int64, epoch int16) Committable {
	return Committable{ID: id, ProducerID: pid, Epoch: epoch}
}

func oneJob(dir string, cps ...RetainedCheckpoint) *RetainedDir {
	return &RetainedDir{Dir: dir, Jobs: []RetainedJob{{Dir: dir, Checkpoints: cps}}}
}

func TestVerdicts(t *testing.T) {
	now := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	ms := func(d time.Duration) int64 { return now.Add(d).UnixMilli() }
	run := func(state string, history ...FlinkCheckpoint) *FlinkMatch {
		j := FlinkJob{Source: "http://jm:8081", ID: "j", Name: "job p", State: state, StartMs: ms(-10 * time.Minute), History: history}
		for _, c := range history {
			if c.Status == "COMPLETED" && (j.Latest == nil || c.ID > j.Latest.ID) {
				c := c
				j.Latest = &c
			}
		}
		return &FlinkMatch{Job: j, By: "name"}
	}
	cp := func(id int64, status string, trigger time.Duration) FlinkCheckpoint {
		return FlinkCheckpoint{ID: id, Status: status, TriggerMs: ms(trigger), AckMs: ms(trigger + 100*time.Millisecond)}
	}
	open := func(id string, began time.Duration) Txn {
		tx := Txn{ID: id, State: Ongoing, ProducerID: 1, TimeoutMs: 600000, Described: true}
		tx.SetStart(now.Add(began))
		return tx
	}
	chk := func(n int64, cs ...Committable) RetainedCheckpoint { return RetainedCheckpoint{N: n, Committables: cs} }
	hist := []FlinkCheckpoint{cp(12, "COMPLETED", -9*time.Second), cp(13, "COMPLETED", -6*time.Second), cp(14, "FAILED", -3*time.Second)}
	for _, c := range []struct {
		name    string
		txns    []Txn
		facts   CheckpointFacts
		kind    VerdictKind
		n       int64
		because string
	}{
		{"its checkpoint completed, the commit lost", []Txn{open("p-0-13", -8*time.Second)}, CheckpointFacts{Flink: run("FAILED", hist...)}, Checkpointed, 13, "says checkpoint 13 completed"},
		{"its checkpoint failed", []Txn{open("p-0-14", -5*time.Second)}, CheckpointFacts{Flink: run("FAILED", hist...)}, NotCheckpointed, 14, "latest completed checkpoint is 13 and the job is FAILED: 14 never completed"},
		// The committer keeps a failed checkpoint's pre-commit for the next.
		{"its checkpoint failed, the next completed", []Txn{open("p-0-14", -5*time.Second)}, CheckpointFacts{Flink: run("FAILED", append(hist, cp(15, "COMPLETED", -time.Second))...)},
			Checkpointed, 14, "says checkpoint 15 completed, which holds what checkpoint 14 pre-committed"},
		{"past the latest, job dead", []Txn{open("p-0-15", -2*time.Second)}, CheckpointFacts{Flink: run("CANCELED", hist[:2]...)}, NotCheckpointed, 15, "the job is CANCELED: 15 never completed"},
		{"past the latest, job runs", []Txn{open("p-0-15", -2*time.Second)}, CheckpointFacts{Flink: run("RUNNING", hist[:2]...)}, NotCheckpointed, 15, "has not completed yet"},
		{"in progress", []Txn{open("p-0-15", -2*time.Second)}, CheckpointFacts{Flink: run("RUNNING", append(hist, cp(15, "IN_PROGRESS", -time.Second))...)}, VerdictUnknown, 15, "in progress"},
		{"older than Flink's history", []Txn{open("p-0-3", -5*time.Minute)}, CheckpointFacts{Flink: run("FAILED", hist...)}, Checkpointed, 3, "checkpoint 13 completed, which holds what checkpoint 3"},
		// A fresh start counts from 1: the old run's 13 is not the new run's.
		{"an earlier run's transaction", []Txn{open("p-0-13", -11*time.Minute)}, CheckpointFacts{Flink: run("RUNNING", hist...)}, VerdictUnknown, 13, "Flink's checkpoints are another run's"},
		{"retained dir, its committable in chk-13", []Txn{open("p-0-13", -8*time.Second)},
			CheckpointFacts{Retained: oneJob("/chk/j", chk(12, cm("p-0-12", 1, 0)), chk(13, cm("p-0-13", 1, 0)))}, Checkpointed, 13, "chk-13: p-0-13 pid 1 epoch 0 (/chk/j/chk-13/_metadata)"},
		{"retained dir, an earlier run's chk-13 (a copy's file times say nothing)", []Txn{open("p-0-13", -8*time.Second)},
			CheckpointFacts{Retained: oneJob("/chk/j", chk(13, cm("p-0-13", 77, 3)))}, VerdictUnknown, 13, "chk-13: p-0-13 pid 77 epoch 3, and the open transaction of p-0-13 is pid 1 epoch 0: another producer id"},
		{"retained dir, only the checkpoint before it", []Txn{open("p-0-14", -5*time.Second)},
			CheckpointFacts{Retained: oneJob("/chk/j", chk(13, cm("p-0-13", 1, 0)))}, NotCheckpointed, 14, "the newest completed checkpoint in /chk/j is chk-13, before its own (14)"},
		{"retained dir, the checkpoint before it holds nothing of the prefix", []Txn{open("p-0-14", -5*time.Second)},
			CheckpointFacts{Retained: oneJob("/chk/j", chk(13))}, VerdictUnknown, 14, "holds no committable of p"},
		{"an earlier attempt's, in the restored state", []Txn{open("p-0-13", -8*time.Second)},
			CheckpointFacts{Flink: func() *FlinkMatch {
				m := run("RUNNING", hist...)
				m.Job.Restored = &FlinkCheckpoint{ID: 13, RestoreMs: ms(-2 * time.Second)}
				return m
			}()},
			Checkpointed, 13, "restored from checkpoint 13, which holds what checkpoint 13 pre-committed"},
		{"an earlier attempt's, after the restored checkpoint", []Txn{open("p-0-14", -5*time.Second)},
			CheckpointFacts{Flink: func() *FlinkMatch {
				m := run("RUNNING", hist...)
				m.Job.Restored = &FlinkCheckpoint{ID: 13, RestoreMs: ms(-2 * time.Second)}
				return m
			}()},
			NotCheckpointed, 14, "checkpoint 14 is not in the restored state"},
		{"being ended", []Txn{{ID: "p-0-13", State: PrepareAbort, Described: true}}, CheckpointFacts{Flink: run("FAILED", hist...)}, VerdictUnknown, 13, "ending it already"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &Snapshot{TakenAt: now, Txns: append([]Txn{{ID: "p-0-12", State: CompleteCommit, Described: true}}, c.txns...)}
			s.Sort()
			j := Jobs(s, nil, now)[0]
			vs := j.Verdicts(c.facts)
			if len(vs) != 1 {
				t.Fatalf("verdicts %+v", vs)
			}
			v := vs[0]
			if v.Kind != c.kind || v.Checkpoint != c.n || !strings.Contains(v.Evidence, c.because) {
				t.Errorf("%+v; want %s, checkpoint %d, %q", v, c.kind, c.n, c.because)
			}
		})
	}
}

// POOLING ids name slots: the checkpoint is the first one triggered after
// the transaction began; within the clock margin of a trigger, unknown.
func TestVerdictsByTimes(t *testing.T) {
	now := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	ms := func(d time.Duration) int64 { return now.Add(d).UnixMilli() }
	fj := FlinkJob{Source: "http://jm:8081", Name: "job p", State: "FAILED", StartMs: ms(-time.Hour), History: []FlinkCheckpoint{
		{ID: 7, Status: "COMPLETED", TriggerMs: ms(-20 * time.Second), AckMs: ms(-19 * time.Second)},
		{ID: 8, Status: "COMPLETED", TriggerMs: ms(-10 * time.Second), AckMs: ms(-9 * time.Second)},
	}}
	for _, c := range []struct {
		began   time.Duration
		kind    VerdictKind
		n       int64
		because string
	}{
		{-15 * time.Second, Checkpointed, 8, "began before checkpoint 8 was triggered"},
		{-5 * time.Second, NotCheckpointed, 0, "no checkpoint triggered after it began completed, and the job is FAILED"},
		{-11 * time.Second, VerdictUnknown, 0, "within 2s of checkpoint 8's trigger"},
	} {
		tx := Txn{ID: "p-0-1", State: Ongoing, ProducerID: 1, TimeoutMs: 600000, Described: true}
		tx.SetStart(now.Add(c.began))
		s := &Snapshot{TakenAt: now, Txns: []Txn{{ID: "p-0-0", State: CompleteCommit, Described: true}, tx}}
		s.Sort()
		j := Jobs(s, nil, now)[0]
		if !j.Pooling {
			t.Fatal("slot 0 committed: want POOLING")
		}
		vs := j.Verdicts(CheckpointFacts{Flink: &FlinkMatch{Job: fj}})
		if len(vs) != 1 || vs[0].Kind != c.kind || vs[0].Checkpoint != c.n || !strings.Contains(vs[0].Evidence, c.because) {
			t.Errorf("began %s: %+v; want %s, %d, %q", c.began, vs, c.kind, c.n, c.because)
		}
	}
}

// The checkpoint's own committables make a verdict exact, in both naming
// strategies: checkpointed when the newest completed checkpoint holds the
// open transaction's id, producer id and epoch; not checkpointed when it
// holds the sink's committables but not that one, and nothing contradicts.
func TestVerdictsExact(t *testing.T) {
	now := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	chk := func(n int64, cs ...Committable) RetainedCheckpoint { return RetainedCheckpoint{N: n, Committables: cs} }
	pre := func(c Committable, n int64) Committable { c.Checkpoint = n; return c }
	done := func(c Committable) Committable { c.Finished = true; return c }
	for _, c := range []struct {
		name    string
		pooling bool
		open    string
		pid     int64
		epoch   int16
		cps     []RetainedCheckpoint
		shared  bool
		kind    VerdictKind
		exact   bool
		n       int64
		because string
	}{
		{"incrementing, held", false, "p-0-13", 4003, 0, []RetainedCheckpoint{chk(13, pre(cm("p-0-13", 4003, 0), 13))},
			false, Checkpointed, true, 13, "chk-13: p-0-13 pid 4003 epoch 0, pre-committed for checkpoint 13 (/chk/j/chk-13/_metadata)"},
		{"incrementing, held by the next after its own failed", false, "p-0-13", 4003, 0, []RetainedCheckpoint{chk(14, pre(cm("p-0-13", 4003, 0), 13), pre(cm("p-0-14", 4004, 0), 14))},
			false, Checkpointed, true, 13, "chk-14: p-0-13 pid 4003 epoch 0, pre-committed for checkpoint 13"},
		{"incrementing, pre-committed for another checkpoint than its id counts", false, "p-0-13", 4003, 0, []RetainedCheckpoint{chk(14, pre(cm("p-0-13", 4003, 0), 9))},
			false, VerdictUnknown, false, 13, "pre-committed for checkpoint 9, but its id counts checkpoint 13"},
		{"pooling, held", true, "p-0-1", 4003, 18, []RetainedCheckpoint{chk(121, pre(cm("p-0-1", 4003, 18), 121), cm("p-1-1", 4005, 17))},
			false, Checkpointed, true, 121, "chk-121: p-0-1 pid 4003 epoch 18, pre-committed for checkpoint 121"},
		{"pooling, the slot's earlier transaction held", true, "p-0-1", 4003, 19, []RetainedCheckpoint{chk(121, pre(cm("p-0-1", 4003, 18), 121))},
			false, NotCheckpointed, true, 0, "the newest completed checkpoint in /chk/j, chk-121, holds 1 committable of p, not p-0-1 pid 4003 epoch 19 (it holds p-0-1 pid 4003 epoch 18: the id's earlier transaction"},
		{"pooling, the other slot held", true, "p-0-1", 4003, 19, []RetainedCheckpoint{chk(121, pre(cm("p-0-0", 4001, 40), 121))},
			false, NotCheckpointed, true, 0, "holds 1 committable of p, not p-0-1 pid 4003 epoch 19: its checkpoint had not completed"},
		{"pooling, a later transaction of the id held", true, "p-0-1", 4003, 17, []RetainedCheckpoint{chk(121, pre(cm("p-0-1", 4003, 18), 121))},
			false, VerdictUnknown, false, 0, "the checkpoint holds a later transaction of the id than the open one"},
		{"pooling, the producer id rotated", true, "p-0-1", 5001, 0, []RetainedCheckpoint{chk(121, pre(cm("p-0-1", 4003, 32766), 121))},
			false, VerdictUnknown, false, 0, "chk-121: p-0-1 pid 4003 epoch 32766, and the open transaction of p-0-1 is pid 5001 epoch 0: the coordinator has since rotated p-0-1 to producer id 5001"},
		{"another producer id far from the end of the epochs", true, "p-0-1", 5001, 0, []RetainedCheckpoint{chk(121, pre(cm("p-0-1", 4003, 12), 121))},
			false, VerdictUnknown, false, 0, "chk-121: p-0-1 pid 4003 epoch 12, and the open transaction of p-0-1 is pid 5001 epoch 0: another producer id: the id expired"},
		{"pooling, not held, the prefix shared", true, "p-0-1", 4003, 19, []RetainedCheckpoint{chk(121, pre(cm("p-0-0", 4001, 40), 121))},
			true, VerdictUnknown, false, 0, "prefix looks shared by two jobs"},
		{"marked committed, yet open", true, "p-0-1", 4003, 18, []RetainedCheckpoint{chk(121, done(pre(cm("p-0-1", 4003, 18), 121)))},
			false, VerdictUnknown, false, 0, "marked committed or failed by Flink's committer, yet it is open"},
		{"an older checkpoint holds it, the newest not", true, "p-0-1", 4003, 18, []RetainedCheckpoint{chk(120, cm("p-0-1", 4003, 18)), chk(121, cm("p-0-0", 4001, 40))},
			false, VerdictUnknown, false, 0, "chk-120 holds p-0-1 pid 4003 epoch 18, but the newest, chk-121, does not"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tx := Txn{ID: c.open, State: Ongoing, ProducerID: c.pid, ProducerEpoch: c.epoch, TimeoutMs: 600000, Described: true}
			tx.SetStart(now.Add(-5 * time.Second))
			txns := []Txn{tx}
			if c.pooling {
				txns = append(txns, Txn{ID: "p-1-0", State: CompleteCommit, ProducerID: 4002, Described: true})
			} else {
				txns = append(txns, Txn{ID: "p-1-12", State: CompleteCommit, ProducerID: 3012, Described: true})
			}
			s := &Snapshot{TakenAt: now, Txns: txns}
			s.Sort()
			j := Jobs(s, nil, now)[0]
			if j.Pooling != c.pooling {
				t.Fatalf("pooling %v, want %v", j.Pooling, c.pooling)
			}
			j.Shared = c.shared
			vs := j.Verdicts(CheckpointFacts{Retained: oneJob("/chk/j", c.cps...)})
			if len(vs) != 1 {
				t.Fatalf("verdicts %+v", vs)
			}
			v := vs[0]
			if v.Kind != c.kind || v.Exact != c.exact || v.Checkpoint != c.n || !strings.Contains(v.Evidence, c.because) {
				t.Errorf("%+v\nwant %s exact %v checkpoint %d, %q", v, c.kind, c.exact, c.n, c.because)
			}
			if (v.Kind == Checkpointed) != (v.Basis.Committable != nil) {
				t.Errorf("committable %v for %s", v.Basis.Committable, v.Kind)
			}
			if c.kind == Checkpointed && v.CompletedIn != c.cps[len(c.cps)-1].N {
				t.Errorf("completed in %d", v.CompletedIn)
			}
		})
	}
}

// An ended job's checkpoint where Flink says it is: its committables make
// the verdict exact; none there contradicts Flink, and the verdict is
// unknown, never Flink's inference alone.
func TestVerdictsFromFlinksExternalPath(t *testing.T) {
	now := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	tx := Txn{ID: "p-0-13", State: Ongoing, ProducerID: 7, TimeoutMs: 600000, Described: true}
	tx.SetStart(now.Add(-8 * time.Second))
	s := &Snapshot{TakenAt: now, Txns: []Txn{{ID: "p-0-12", State: CompleteCommit, Described: true}, tx}}
	s.Sort()
	j := Jobs(s, nil, now)[0]
	fj := FlinkJob{Source: "http://hs:8082", ID: "j1", Name: "job p", State: "FAILED", StartMs: now.Add(-time.Hour).UnixMilli(),
		Latest: &FlinkCheckpoint{ID: 13, Status: "COMPLETED", AckMs: now.Add(-time.Second).UnixMilli(), Path: "s3://ckpt/f/j1/chk-13"}}
	for _, c := range []struct {
		name     string
		external RetainedDir
		kind     VerdictKind
		exact    bool
		because  string
	}{
		{"holds its committable", RetainedDir{Dir: "s3://ckpt/f/j1", Jobs: []RetainedJob{{Dir: "s3://ckpt/f/j1", Checkpoints: []RetainedCheckpoint{{N: 13, Committables: []Committable{cm("p-0-13", 7, 0), cm("q-0-13", 9, 0)}}}}}},
			Checkpointed, true, "chk-13: p-0-13 pid 7 epoch 0 (s3://ckpt/f/j1/chk-13/_metadata)"},
		{"holds nothing", RetainedDir{Dir: "s3://ckpt/f/j1"}, VerdictUnknown, false, "s3://ckpt/f/j1 holds no completed checkpoint"},
		{"cannot be read", RetainedDir{Dir: "s3://ckpt/f/j1/chk-13", Err: "AccessDenied: Access Denied"}, VerdictUnknown, false, "could not be read: AccessDenied"},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := &FlinkView{Jobs: []FlinkJob{fj}, Sources: []string{fj.Source}, External: map[string]RetainedDir{"j1": c.external}}
			vs := j.Verdicts(v.Facts("p"))
			if len(vs) != 1 || vs[0].Kind != c.kind || vs[0].Exact != c.exact || !strings.Contains(vs[0].Evidence, c.because) {
				t.Errorf("%+v; want %s exact %v, %q", vs, c.kind, c.exact, c.because)
			}
		})
	}
}
