package model

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// The third hostile pass: evidence that cannot be read, or tied to this job
// and this run, makes a verdict unknown. Each case is one the pass made
// commit or abort the wrong transaction.
func TestVerdictsFailClosed(t *testing.T) {
	now := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	ms := func(d time.Duration) int64 { return now.Add(d).UnixMilli() }
	const idA, idB = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	// orders-0-4 is open: the dead job's checkpoint 3 completed, 4 never did.
	open := Txn{ID: "orders-0-4", State: Ongoing, ProducerID: 40, ProducerEpoch: 0, TimeoutMs: 600000, Described: true}
	open.SetStart(now.Add(-20 * time.Second))
	mine := cm("orders-0-4", 40, 0)
	jobDir := func(id string, cps ...RetainedCheckpoint) RetainedJob {
		return RetainedJob{Dir: "/chk/" + id, JobID: id, Checkpoints: cps}
	}
	chk := func(n int64, cs ...Committable) RetainedCheckpoint { return RetainedCheckpoint{N: n, Committables: cs} }
	dead := jobDir(idA, chk(3, cm("orders-0-3", 30, 0)))
	live := jobDir(idB, chk(99, cm("orders-0-99", 990, 0)))
	root := func(jobs ...RetainedJob) map[string]RetainedDir {
		return map[string]RetainedDir{"orders": {Dir: "/chk", Jobs: jobs}}
	}
	flinkJob := func(id, name, state string, latest int64, acked time.Duration) FlinkJob {
		return FlinkJob{Source: "http://jm:8081", ID: id, Name: name, State: state, StartMs: ms(-time.Hour),
			Latest: &FlinkCheckpoint{ID: latest, Status: "COMPLETED", TriggerMs: ms(acked - time.Second), AckMs: ms(acked)}}
	}
	for _, c := range []struct {
		name    string
		view    *FlinkView
		kind    VerdictKind
		because string
		dir     string
	}{
		// 1. A checkpoint root holding two jobs is two jobs.
		{"a root of two jobs, none holding it", &FlinkView{Retained: root(dead, live)}, VerdictUnknown,
			"/chk holds the checkpoints of several jobs (/chk/" + idA + ", /chk/" + idB + ") and none holds its committable", ""},
		{"a root of two jobs, the Flink job's id chooses", &FlinkView{Retained: root(dead, live), Jobs: []FlinkJob{flinkJob(idA, "enrich orders", "FAILED", 3, -30*time.Second)}},
			NotCheckpointed, "the newest completed checkpoint in /chk/" + idA + " is chk-3", "/chk/" + idA},
		{"a root of two jobs, its committable chooses", &FlinkView{Retained: root(dead, jobDir(idB, chk(4, mine)))}, Checkpointed,
			"chk-4: orders-0-4 pid 40 epoch 0 (/chk/" + idB + "/chk-4/_metadata)", "/chk/" + idB},
		{"an unreadable job's directory beside the only one", &FlinkView{Retained: map[string]RetainedDir{"orders": {Dir: "/chk", Jobs: []RetainedJob{dead}, Problems: []string{`"` + idB + `": permission denied`}}}},
			VerdictUnknown, `in /chk, "` + idB + `": permission denied: the job's checkpoints may be there`, ""},
		// 2. A name two jobs hold.
		{"two jobs hold the prefix as a word", &FlinkView{Sources: []string{"http://jm:8081"}, Errs: []string{""}, Jobs: []FlinkJob{
			flinkJob(idA, "enrich orders (prod)", "FAILED", 3, -30*time.Second), flinkJob(idB, "orders v2 backfill", "FINISHED", 812, -10*time.Second)}},
			VerdictUnknown, `several Flink jobs match prefix "orders", "enrich orders (prod)" (` + idA + `) and "orders v2 backfill" (` + idB + `)`, ""},
		{"--flink-prefix says which", &FlinkView{Prefixes: map[string]string{"enrich orders (prod)": "orders"}, Jobs: []FlinkJob{
			flinkJob(idA, "enrich orders (prod)", "FAILED", 3, -30*time.Second), flinkJob(idB, "orders v2 backfill", "FINISHED", 812, -10*time.Second)}},
			NotCheckpointed, "Flink's latest completed checkpoint is 3 and the job is FAILED: 4 never completed", ""},
		{"a checkpoint completed before it began", &FlinkView{Jobs: []FlinkJob{flinkJob(idB, "orders v2 backfill", "FINISHED", 812, -time.Minute)}},
			VerdictUnknown, "Flink's latest completed checkpoint, 812, completed at 02:59:00.000, before it began (02:59:40.000): it cannot hold it", ""},
		{"no completion time", &FlinkView{Jobs: []FlinkJob{func() FlinkJob {
			j := flinkJob(idA, "orders", "FAILED", 4, 0)
			j.Latest.AckMs = 0
			return j
		}()}}, VerdictUnknown, "Flink does not say when checkpoint 4 completed", ""},
		// A job started from another run's checkpoint restored it first: a
		// transaction begun before that restore is not this job's.
		{"a restore that is the job's first", &FlinkView{Jobs: []FlinkJob{func() FlinkJob {
			j := flinkJob(idA, "orders", "FAILED", 6, -5*time.Second)
			j.StartMs = ms(-25 * time.Second)
			j.Restored = &FlinkCheckpoint{ID: 5, RestoreMs: ms(-time.Second)}
			return j
		}()}}, VerdictUnknown, "Flink lists no checkpoint of this job before that restore", ""},
		// 3. A JobManager that does not answer says nothing, and the
		// directory does not speak for it.
		{"a silent JobManager beside the directory", &FlinkView{Sources: []string{"http://jm:8081"}, Errs: []string{"http://jm:8081: GET /jobs/overview: 500 Internal Server Error"},
			Retained: root(jobDir(idA, chk(4, mine)))},
			VerdictUnknown, "the JobManager at http://jm:8081 did not answer (GET /jobs/overview: 500 Internal Server Error)", ""},
		// 4. An entry that cannot be read is no "no chk-N".
		{"an unreadable chk-4", &FlinkView{Retained: root(RetainedJob{Dir: "/chk/" + idA, JobID: idA, Checkpoints: dead.Checkpoints, Problems: []string{`"chk-4" cannot be read: permission denied`}})},
			VerdictUnknown, `in /chk/` + idA + `, "chk-4" cannot be read: permission denied: txnscope cannot read or understand it`, "/chk/" + idA},
		// 5. A copy's file times tell no runs apart: an earlier run's chk-9
		// does not hold this run's transaction.
		{"an earlier run's chk-9", &FlinkView{Retained: root(jobDir(idA, chk(3, cm("orders-0-3", 30, 0)), chk(9, cm("orders-0-9", 9, 2))))},
			VerdictUnknown, "/chk/" + idA + "/chk-9, at or after its checkpoint 4, does not hold its committable", "/chk/" + idA},
		{"the directory behind the brokers", &FlinkView{Retained: root(dead)}, VerdictUnknown,
			"a transaction of checkpoint 5 is committed, but the newest checkpoint in /chk/" + idA + " is chk-3: the directory is out of date or another run's", "/chk/" + idA},
		// Flink and the directory must agree.
		{"Flink and the directory disagree", &FlinkView{Jobs: []FlinkJob{flinkJob(idA, "orders", "FAILED", 4, -5*time.Second)}, Retained: root(dead)},
			VerdictUnknown, "Flink and the checkpoint directory disagree: Flink (http://jm:8081) says checkpoint 4 completed; but the newest completed checkpoint in", "/chk/" + idA},
		{"Flink and the directory agree", &FlinkView{Jobs: []FlinkJob{flinkJob(idA, "orders", "FAILED", 4, -5*time.Second)}, Retained: root(jobDir(idA, chk(4, mine)))},
			Checkpointed, "chk-4: orders-0-4 pid 40 epoch 0 (/chk/" + idA + "/chk-4/_metadata): Flink commits it when restored from that checkpoint; and Flink (http://jm:8081) says checkpoint 4 completed", "/chk/" + idA},
	} {
		t.Run(c.name, func(t *testing.T) {
			txns := []Txn{{ID: "orders-0-3", State: CompleteCommit, ProducerID: 30, Described: true}, open}
			if c.name == "the directory behind the brokers" {
				txns = append(txns, Txn{ID: "orders-1-5", State: CompleteCommit, ProducerID: 51, Described: true})
			}
			s := &Snapshot{TakenAt: now, Txns: txns}
			s.Sort()
			g := Group(s, nil)
			g.Flink = c.view
			var v Verdict
			for _, j := range g.Jobs(nil, now) {
				if j.ID.Name == "orders" {
					if len(j.OpenVerdicts) != 1 {
						t.Fatalf("verdicts %+v", j.OpenVerdicts)
					}
					v = j.OpenVerdicts[0]
					if again := CommitEvidenceOf(c.view, j, open); again.Verdict.Kind != v.Kind || again.Verdict.Evidence != v.Evidence {
						t.Errorf("the commit's evidence %+v differs from the jobs view's %+v", again.Verdict, v)
					}
				}
			}
			if v.Kind != c.kind || !strings.Contains(v.Evidence, c.because) || v.Basis.Dir != c.dir {
				t.Errorf("%s (%s, rests on %s)\nwant %s because %q, dir %q", v.Kind, v.Evidence, v.Basis, c.kind, c.because, c.dir)
			}
		})
	}
}

// Only FAILED, CANCELED and FINISHED are over: a job Flink lists in any
// other state, SUSPENDED (a JobManager that lost its HA leadership) or none
// known among them, may run again, and nothing of it is committed, aborted
// or resolved here.
func TestOnlyAnEndedJobIsActedOn(t *testing.T) {
	for _, state := range []string{"RUNNING", "RESTARTING", "SUSPENDED", "RECONCILING", "INITIALIZING", "CREATED", "", "SOMETHING_NEW"} {
		ev := checkpointed(15)
		ev.FlinkState = state
		ev.Verdict.Basis = Basis{FlinkURL: "http://jm:8081", FlinkJobID: "0123456789abcdef0123456789abcdef", FlinkJobName: "orders", FlinkState: state}
		if _, err := PlanCommit(cmTxn(), ev, false); err == nil {
			t.Errorf("%q: a commit was planned", state)
		}
		var jw *JobWideError
		if err := CheckAbortEvidence(Action{TransactionalID: "orders-sink-1-15", Verdict: ev.Verdict}, notCheckpointedNow(ev)); !errors.As(err, &jw) {
			t.Errorf("%q: an abort was allowed, or not refused for the whole job: %v", state, err)
		}
	}
	for _, state := range []string{"FAILED", "CANCELED", "FINISHED"} {
		ev := checkpointed(15)
		ev.FlinkState = state
		if _, err := PlanCommit(cmTxn(), ev, false); err != nil {
			t.Errorf("%s: %v", state, err)
		}
	}
}

func notCheckpointedNow(ev CommitEvidence) CommitEvidence {
	ev.Verdict.Kind = NotCheckpointed
	return ev
}

// The re-check rests on what the plan rested on, or nothing goes: a
// JobManager that stops answering (what a failover looks like) or no longer
// lists the job, with the directory still there, refuses; so does another
// job or another directory.
func TestRecheckRestsOnThePlansBasis(t *testing.T) {
	tx := cmTxn()
	j := Job{ID: JobID{FlinkSink, "orders-sink"}}
	const id = "0123456789abcdef0123456789abcdef"
	mine := Committable{ID: tx.ID, ProducerID: tx.ProducerID, Epoch: tx.ProducerEpoch}
	dir := map[string]RetainedDir{"orders-sink": {Dir: "/chk", Jobs: []RetainedJob{{Dir: "/chk/" + id, JobID: id, Checkpoints: []RetainedCheckpoint{{N: 15, Committables: []Committable{mine}}}}}}}
	jm := []FlinkJob{{Source: "http://jm:8081", ID: id, Name: "orders-sink job", State: "FAILED", StartMs: ftStart.Add(-time.Hour).UnixMilli(),
		Latest: &FlinkCheckpoint{ID: 15, Status: "COMPLETED", AckMs: ftStart.Add(time.Second).UnixMilli()}}}
	plan := &FlinkView{Sources: []string{"http://jm:8081"}, Errs: []string{""}, Jobs: jm, Retained: dir}
	a, err := PlanCommit(tx, CommitEvidenceOf(plan, j, tx), false)
	if err != nil {
		t.Fatal(err)
	}
	if b := a.Verdict.Basis; b.FlinkJobID != id || b.Dir != "/chk/"+id || b.Committable == nil || *b.Committable != mine {
		t.Fatalf("the plan rests on %+v", b)
	}
	if err := CheckCommitEvidence(a, CommitEvidenceOf(plan, j, tx)); err != nil {
		t.Fatalf("the same read refused: %v", err)
	}
	other := slicesClone(jm)
	other[0].ID = "ffffffffffffffffffffffffffffffff"
	for _, c := range []struct {
		name string
		view *FlinkView
		want string
	}{
		{"the JobManager answers 500", &FlinkView{Sources: []string{"http://jm:8081"}, Errs: []string{"http://jm:8081: GET /jobs/overview: 500 Internal Server Error"}, Retained: dir},
			"at the re-check, the JobManager at http://jm:8081 did not answer (GET /jobs/overview: 500 Internal Server Error)"},
		{"the JobManager drops the job", &FlinkView{Sources: []string{"http://jm:8081"}, Errs: []string{""}, Retained: dir},
			"at the re-check, no Flink job listed by http://jm:8081; checkpoints in /chk/" + id},
		{"another job of the name", &FlinkView{Sources: []string{"http://jm:8081"}, Errs: []string{""}, Jobs: other, Retained: dir}, "ffffffffffffffffffffffffffffffff"},
		{"the directory gone", &FlinkView{Sources: []string{"http://jm:8081"}, Errs: []string{""}, Jobs: jm}, "at the re-check, Flink job"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := CheckCommitEvidence(a, CommitEvidenceOf(c.view, j, tx))
			var jw *JobWideError
			if err == nil || !strings.Contains(err.Error(), c.want) || !errors.As(err, &jw) {
				t.Errorf("%v\nwant a refusal for the whole job saying %q", err, c.want)
			}
		})
	}
}

func slicesClone(j []FlinkJob) []FlinkJob { return append([]FlinkJob(nil), j...) }

// A refusal that holds for the whole job stops a batch before its next
// action.
func TestJobWideRefusalStopsTheBatch(t *testing.T) {
	b := Batch{Resolve: true, Actions: []Action{{Kind: Commit, TransactionalID: "p-0-4"}, {Kind: ForceTerminate, TransactionalID: "p-0-5"}}}
	b.Add(Result{Action: b.Actions[0], Refused: true, JobWide: true, Err: "refused: Flink says the job is RUNNING"}, nil)
	if !b.Over() || b.Stopped == "" {
		t.Errorf("the batch goes on after a job-wide refusal: %+v", b)
	}
	b = Batch{Resolve: true, Actions: b.Actions}
	b.Add(Result{Action: b.Actions[0], Refused: true, Err: "refused: its partitions changed"}, nil)
	if b.Over() {
		t.Errorf("a refusal of one transaction stopped the batch: %+v", b)
	}
}

// Refusals say what happened: a JobManager that did not answer is named as
// such, never "give --flink"; "No JobManager was asked" only when none was.
func TestMessagesSayWhatHappened(t *testing.T) {
	tx := cmTxn()
	j := Job{ID: JobID{FlinkSink, "orders-sink"}}
	silent := &FlinkView{Sources: []string{"http://jm:8081"}, Errs: []string{"http://jm:8081: GET /jobs/overview: connection refused"}}
	_, err := PlanCommit(tx, CommitEvidenceOf(silent, j, tx), false)
	if err == nil || !strings.Contains(err.Error(), "the JobManager at http://jm:8081 did not answer (GET /jobs/overview: connection refused)") ||
		strings.Contains(err.Error(), "give --flink") || strings.Contains(err.Error(), "refused: refused") {
		t.Errorf("%v", err)
	}
	nobody := &FlinkView{Sources: []string{"http://jm:8081"}, Errs: []string{""}}
	_, err = PlanCommit(tx, CommitEvidenceOf(nobody, j, tx), false)
	if err == nil || !strings.Contains(err.Error(), `no Flink job listed by http://jm:8081 matches prefix "orders-sink"`) {
		t.Errorf("%v", err)
	}
	mine := Committable{ID: tx.ID, ProducerID: tx.ProducerID, Epoch: tx.ProducerEpoch}
	dir := map[string]RetainedDir{"orders-sink": *oneJob("/chk", RetainedCheckpoint{N: 15, Committables: []Committable{mine}})}
	for _, c := range []struct {
		view *FlinkView
		want string
	}{
		{&FlinkView{Retained: dir}, "No JobManager was asked whether the job runs"},
		{&FlinkView{Sources: []string{"http://jm:8081"}, Errs: []string{""}, Retained: dir}, "No Flink job of the JobManagers asked (http://jm:8081) is this prefix's"},
	} {
		a, err := PlanCommit(tx, CommitEvidenceOf(c.view, j, tx), false)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(a.Consequences(), " "); !strings.Contains(got, c.want) {
			t.Errorf("consequences %q, want %q", got, c.want)
		}
	}
}
