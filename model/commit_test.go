package model

import (
	"strings"
	"testing"
	"time"
)

func cmTxn() Txn {
	return Txn{ID: "orders-sink-1-15", State: Ongoing, Described: true, Coordinator: 2, ProducerID: 9001, ProducerEpoch: 3,
		TimeoutMs: 900000, StartUnixMs: ftStart.UnixMilli(), Partitions: []TopicPartition{{"orders", 1}}}
}

func checkpointed(completedIn int64) CommitEvidence {
	return CommitEvidence{Verdict: Verdict{ID: "orders-sink-1-15", Kind: Checkpointed, Checkpoint: 15, CompletedIn: completedIn,
		Evidence: "Flink (http://jm:8081) says checkpoint 15 completed"}, FlinkState: "FAILED"}
}

func TestPlanCommit(t *testing.T) {
	notYet := checkpointed(15)
	notYet.Verdict.Kind, notYet.Verdict.Evidence = NotCheckpointed, "Flink's latest completed checkpoint is 14 and the job is FAILED: 15 never completed"
	unknown := checkpointed(15)
	unknown.Verdict = Verdict{Kind: VerdictUnknown, Evidence: "it began within 2s of checkpoint 15's trigger"}
	running := checkpointed(15)
	running.FlinkState = "RUNNING"
	undescribed := cmTxn()
	undescribed.Described = false
	for _, tc := range []struct {
		name       string
		t          func(Txn) Txn
		ev         CommitEvidence
		unverified bool
		refuse     string
	}{
		{"checkpointed, job failed", nil, checkpointed(15), false, ""},
		{"checkpointed in a later one", nil, checkpointed(16), false, ""},
		{"checkpointed, directory only", nil, CommitEvidence{Verdict: checkpointed(15).Verdict}, false, ""},
		{"not checkpointed", nil, notYet, false, "is not checkpointed (Flink's latest completed checkpoint is 14"},
		{"not checkpointed, on the operator's word", nil, notYet, true, ""},
		{"unknown", nil, unknown, false, "is not known (it began within 2s"},
		{"no evidence at all", nil, CommitEvidence{}, false, "there is no checkpoint evidence"},
		{"no evidence, unverified", nil, CommitEvidence{}, true, ""},
		{"the job runs", nil, running, false, "Flink says its job is RUNNING: its own committer commits"},
		{"committing already", func(t Txn) Txn { t.State = PrepareCommit; return t }, checkpointed(15), true, "only an Ongoing transaction can be committed"},
		{"aborted", func(t Txn) Txn { t.State = CompleteAbort; return t }, checkpointed(15), false, "is CompleteAbort"},
		{"not described", func(Txn) Txn { return undescribed }, checkpointed(15), false, "has not been described"},
		{"no start", func(t Txn) Txn { t.StartUnixMs = 0; return t }, checkpointed(15), false, "no start time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tx := cmTxn()
			if tc.t != nil {
				tx = tc.t(tx)
			}
			a, err := PlanCommit(tx, tc.ev, tc.unverified)
			switch {
			case tc.refuse == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.refuse != "" && (err == nil || !strings.Contains(err.Error(), tc.refuse)):
				t.Fatalf("got %v, want a refusal saying %q", err, tc.refuse)
			case err != nil:
				return
			}
			if a.Kind != Commit || a.ProducerID != 9001 || a.ProducerEpoch != 3 || !a.Start.Equal(tx.StartTime()) || a.ConfirmWord() != "commit" {
				t.Errorf("plan = %+v", a)
			}
		})
	}
}

func TestSameTransactionCommit(t *testing.T) {
	a, err := PlanCommit(cmTxn(), checkpointed(15), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		f      func(Txn) Txn
		found  bool
		refuse string
	}{
		{"unchanged", func(t Txn) Txn { return t }, true, ""},
		{"coordinator moved", func(t Txn) Txn { t.Coordinator = 0; return t }, true, ""},
		{"gone", func(t Txn) Txn { return t }, false, "no longer known"},
		{"another producer", func(t Txn) Txn { t.ProducerID = 9002; return t }, true, "producer id changed 9001→9002"},
		// The coordinator's timeout fences and aborts it: the commit is
		// no longer possible, and its records are lost.
		{"timed out, aborting", func(t Txn) Txn { t.State, t.ProducerEpoch = PrepareEpochFence, 4; return t }, true,
			"it is PrepareEpochFence now: the coordinator is aborting it (its timeout, or a new producer fenced it): its records are lost, nothing to commit (epoch 3→4)"},
		{"aborted", func(t Txn) Txn { t.State, t.ProducerEpoch = CompleteAbort, 4; return t }, true, "it was aborted"},
		{"committed by Flink meanwhile (v2)", func(t Txn) Txn { t.State, t.ProducerEpoch = CompleteCommit, 4; return t }, true, "it is CompleteCommit now: it committed (epoch 3→4)"},
		{"committing", func(t Txn) Txn { t.State = PrepareCommit; return t }, true, "being committed already"},
		// Transaction version 1: committed and the next one begun, with
		// the same producer id and epoch; only the start tells.
		{"turned over (v1)", func(t Txn) Txn { t.SetStart(ftStart.Add(5 * time.Millisecond)); return t }, true, "this is a newer transaction"},
		{"fenced, still open", func(t Txn) Txn { t.ProducerEpoch = 4; return t }, true, "producer epoch changed 3→4"},
		{"partition added", func(t Txn) Txn { t.Partitions = append(t.Partitions, TopicPartition{"orders", 2}); return t }, true, "now also orders-2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkRefusal(t, SameTransaction(a, tc.f(cmTxn()), tc.found), tc.refuse)
		})
	}
}

func TestCheckCommitEvidence(t *testing.T) {
	a, err := PlanCommit(cmTxn(), checkpointed(16), false)
	if err != nil {
		t.Fatal(err)
	}
	restarted := checkpointed(16)
	restarted.FlinkState = "RESTARTING"
	otherRun := checkpointed(16)
	otherRun.Verdict = Verdict{Kind: VerdictUnknown, Evidence: "it began before the run Flink lists started: Flink's checkpoints are another run's"}
	for _, tc := range []struct {
		name   string
		a      Action
		ev     CommitEvidence
		refuse string
	}{
		{"same answer", a, checkpointed(16), ""},
		{"a later checkpoint", a, checkpointed(17), ""},
		{"went back (a JobManager that lost track)", a, checkpointed(15), "went back from checkpoint 16 to 15"},
		{"restarted meanwhile", a, restarted, "RESTARTING"},
		{"a new run", a, otherRun, "another run's"},
		{"unverified rests on the operator", func() Action { x := a; x.Unverified = true; return x }(), otherRun, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkRefusal(t, CheckCommitEvidence(tc.a, tc.ev), tc.refuse)
		})
	}
}

func TestCommitWireFactsAndConsequences(t *testing.T) {
	a, _ := PlanCommit(cmTxn(), checkpointed(16), false)
	if w := a.CommitWire(2, 5); w != `EndTxn(COMMIT, transactional.id "orders-sink-1-15", producer id 9001, epoch 3, v5) to coordinator broker 2` {
		t.Errorf("wire = %q", w)
	}
	facts := strings.Join(a.Facts(ftStart, time.UTC), "\n")
	for _, s := range []string{"orders-sink-1-15", "Ongoing since", "id 9001, epoch 3", "orders-1", "verdict      checkpointed: Flink", "checkpoint 16 holds it"} {
		if !strings.Contains(facts, s) {
			t.Errorf("facts lack %q:\n%s", s, facts)
		}
	}
	c := strings.Join(a.Consequences(), "\n")
	if !strings.Contains(c, "checkpoint 16") || strings.Contains(c, "No JobManager") {
		t.Errorf("consequences:\n%s", c)
	}
	u, _ := PlanCommit(cmTxn(), CommitEvidence{}, true)
	facts = strings.Join(u.Facts(ftStart, time.UTC), "\n")
	c = strings.Join(u.Consequences(), "\n")
	if !strings.Contains(facts, "NOT VERIFIED") || !strings.Contains(c, "twice") || !strings.Contains(c, "No JobManager") {
		t.Errorf("an unverified commit must say what it risks:\n%s\n%s", facts, c)
	}
	if r := (Result{Action: a, ErrorCode: "TRANSACTIONAL_ID_AUTHORIZATION_FAILED", Err: "x"}); !strings.Contains(r.Summary(), "EndTxn needs WRITE") {
		t.Errorf("summary = %q", r.Summary())
	}
}

func TestPlanResolve(t *testing.T) {
	start := ftStart
	txn := func(id string, s State, pid int64) Txn {
		return Txn{ID: id, State: s, Described: true, ProducerID: pid, TimeoutMs: 900000, StartUnixMs: start.UnixMilli(),
			Partitions: []TopicPartition{{"orders", 0}}}
	}
	txns := []Txn{
		txn("sink-0-15", Ongoing, 1), txn("sink-1-15", Ongoing, 2), txn("sink-0-16", Ongoing, 3),
		txn("sink-1-16", PrepareEpochFence, 4), txn("sink-0-14", CompleteCommit, 5), txn("other-0-16", Ongoing, 6),
		txn("sink-1-17", Ongoing, 7),
	}
	j := Job{ID: JobID{FlinkSink, "sink"}}
	ev := func(kind VerdictKind, state string) func(Txn) CommitEvidence {
		return func(t Txn) CommitEvidence {
			v := Verdict{ID: t.ID, Kind: kind, Evidence: "said so"}
			switch JobOf(t.ID).Checkpoint {
			case 15:
				v.Kind, v.CompletedIn = Checkpointed, 15
			case 16:
				v.Kind = NotCheckpointed
			}
			return CommitEvidence{Verdict: v, FlinkState: state}
		}
	}
	steps, err := PlanResolve(j, txns, ev(VerdictUnknown, "FAILED"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range steps {
		what := "left: " + s.Why
		if s.Action != nil {
			what = string(s.Action.Kind)
		}
		got = append(got, s.Txn.ID+" "+what)
	}
	want := []string{
		"sink-0-15 commit", "sink-0-16 force-terminate", "sink-1-15 commit",
		"sink-1-16 left: it is PrepareEpochFence: the coordinator is ending it already",
		"sink-1-17 left: whether its checkpoint completed is not known: said so",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("steps:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	b, left := ResolveBatch(steps)
	var order []string
	for _, a := range b.Actions {
		order = append(order, a.TransactionalID)
	}
	if strings.Join(order, " ") != "sink-0-15 sink-1-15 sink-0-16" || len(left) != 2 || b.ConfirmWord() != "resolve 3" {
		t.Errorf("batch %v (word %q), left %v: commits first", order, b.ConfirmWord(), left)
	}
	b.Results = []Result{{Action: b.Actions[0], Sent: true}, {Action: b.Actions[1], Sent: true}, {Action: b.Actions[2], Sent: true}}
	if tl := b.Tally(); tl.String() != "2 committed, 1 force-terminated" || !tl.OK() {
		t.Errorf("tally %q", tl.String())
	}

	for _, state := range []string{"RUNNING", "RESTARTING"} {
		if _, err := PlanResolve(j, txns, ev(VerdictUnknown, state)); err == nil || !strings.Contains(err.Error(), "the job runs") {
			t.Errorf("%s: %v", state, err)
		}
	}
	if _, err := PlanResolve(Job{ID: JobID{StreamsApp, "app"}}, txns, ev(VerdictUnknown, "")); err == nil {
		t.Error("a Streams app was resolved from Flink's checkpoints")
	}
	if _, err := PlanResolve(Job{ID: JobID{FlinkSink, "nothing"}}, txns, ev(VerdictUnknown, "")); err == nil {
		t.Error("a job with nothing open was resolved")
	}
}

// The evidence a commit re-reads: the job matched by its prefix, from a
// JobManager or a retained directory alone; a JobManager that lists
// another run says nothing of this one.
func TestCommitEvidenceOf(t *testing.T) {
	tx := cmTxn()
	tx.ID = "orders-sink-1-15"
	j := Job{ID: JobID{FlinkSink, "orders-sink"}}
	jm := func(state string, startMs int64) *FlinkView {
		return &FlinkView{Jobs: []FlinkJob{{Source: "http://jm:8081", ID: "0123456789abcdef0123456789abcdef", Name: "orders-sink job", State: state,
			StartMs: startMs, Latest: &FlinkCheckpoint{ID: 15, Status: "COMPLETED", AckMs: ftStart.Add(time.Second).UnixMilli()}}}}
	}
	for _, c := range []struct {
		name  string
		view  *FlinkView
		kind  VerdictKind
		state string
	}{
		{"failed job", jm("FAILED", ftStart.Add(-time.Hour).UnixMilli()), Checkpointed, "FAILED"},
		{"a run started after it began", jm("RUNNING", ftStart.Add(time.Minute).UnixMilli()), VerdictUnknown, "RUNNING"},
		{"directory alone", &FlinkView{Retained: map[string]RetainedDir{"orders-sink": *oneJob("/chk", RetainedCheckpoint{N: 15, Committables: []Committable{cm(tx.ID, tx.ProducerID, tx.ProducerEpoch)}})}},
			Checkpointed, ""},
		{"nothing", nil, VerdictUnknown, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ev := CommitEvidenceOf(c.view, j, tx)
			if ev.Verdict.Kind != c.kind || ev.FlinkState != c.state {
				t.Errorf("evidence %+v, want %s with Flink state %q", ev, c.kind, c.state)
			}
		})
	}
}

// A commit carries its committable's producer id and epoch, and is refused
// when the transaction open at the coordinator is not that committable's:
// at the plan, and at the re-check before the request.
func TestCommitSendsTheCommittable(t *testing.T) {
	tx := cmTxn()
	held := func(pid int64, epoch int16) CommitEvidence {
		ev := checkpointed(15)
		ev.Verdict.Basis.Committable = &Committable{ID: tx.ID, ProducerID: pid, Epoch: epoch, Checkpoint: 15}
		return ev
	}
	a, err := PlanCommit(tx, held(9001, 3), false)
	if err != nil {
		t.Fatal(err)
	}
	if pid, epoch := CommitTarget(a); pid != 9001 || epoch != 3 {
		t.Fatalf("sends pid %d epoch %d", pid, epoch)
	}
	for _, c := range []struct {
		name   string
		ev     CommitEvidence
		refuse string
	}{
		{"the producer id rotated", held(7000, 32766), "rotated orders-sink-1-15 to producer id 9001"},
		{"another producer id far from the end of the epochs", held(7000, 12), "another producer id"},
		{"re-initialised since", held(9001, 2), "a higher epoch"},
		{"older than the checkpoint's", held(9001, 4), "a lower epoch"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := PlanCommit(tx, c.ev, false); err == nil || !strings.Contains(err.Error(), c.refuse) || !strings.Contains(err.Error(), "pid 9001 epoch 3") {
				t.Errorf("plan: %v; want %q", err, c.refuse)
			}
			if err := CheckCommitEvidence(a, c.ev); err == nil || !strings.Contains(err.Error(), c.refuse) {
				t.Errorf("re-check: %v; want %q", err, c.refuse)
			}
		})
	}
	// The operator's own word sends the transaction's own.
	u, err := PlanCommit(tx, held(7000, 1), true)
	if err != nil {
		t.Fatal(err)
	}
	if pid, epoch := CommitTarget(u); pid != 9001 || epoch != 3 {
		t.Errorf("unverified sends pid %d epoch %d", pid, epoch)
	}
}
