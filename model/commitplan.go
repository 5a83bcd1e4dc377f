package model

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// A commit and a job's resolution are planned here once, for the TUI and
// the one-shot commands alike, from one reading of the cluster and of
// Flink's JobManagers and checkpoints; each action then carries a
// re-verifier that reads Flink afresh before every request.

// Reading is what a commit or a resolve is planned on: a snapshot of the
// cluster, Flink's JobManagers and retained checkpoints read with it (nil:
// none given), and, in the TUI, the pins and what the history saw of each
// job (nil in a one-shot command, which has no history).
type Reading struct {
	Snap    *Snapshot
	Flink   *FlinkView
	Pins    []Pin
	History *History
	Now     time.Time
}

// ReadFlink reads Flink's JobManagers and checkpoint directories afresh (nil
// when none were given).
type ReadFlink func(ctx context.Context) *FlinkView

// Job is want as the jobs view groups it with r; found is false when no id
// of the snapshot belongs to it (a bare Job of that id then).
func (r Reading) Job(want JobID) (job Job, found bool) {
	g := Group(r.Snap, r.Pins)
	g.Flink = r.Flink
	for _, j := range g.Jobs(r.History, r.Now) {
		if j.ID == want {
			return j, true
		}
	}
	return Job{ID: want}, false
}

// Evidence is what r says of t, an open transaction, and the job it is of.
func (r Reading) Evidence(t Txn) (Job, CommitEvidence) {
	job, _ := r.Job(JobOf(t.ID).Job)
	return job, CommitEvidenceOf(r.Flink, job, t)
}

// PlanCommit is the commit of id as r shows it; read reads the evidence
// again before every request (unverified: the operator's word, not read).
func (r Reading) PlanCommit(id string, unverified bool, read ReadFlink) (Action, error) {
	t, ok := r.Snap.Txn(id)
	if !ok {
		return Action{}, fmt.Errorf("%s is not known to any coordinator", id)
	}
	job, ev := r.Evidence(t)
	a, err := PlanCommit(t, ev, unverified)
	if err != nil {
		return a, err
	}
	a.LastWrite = r.lastWrite(a)
	if !unverified {
		a.Reverify = Reverifier(read, job)
	}
	return a, nil
}

// PlanResolve plans the resolution of job want as r shows it (PlanResolve,
// the function, says how); every action carries a re-verifier reading with
// read.
func (r Reading) PlanResolve(want JobID, read ReadFlink) ([]ResolveStep, error) {
	job, found := r.Job(want)
	if !found {
		return nil, fmt.Errorf("no transactional id of a Flink job with prefix %q is known to the coordinators", want.Name)
	}
	steps, err := PlanResolve(job, r.Snap.Txns, func(t Txn) CommitEvidence { return CommitEvidenceOf(r.Flink, job, t) })
	if err != nil {
		return nil, err
	}
	// Each step rests on its verdict: asked again before its request, the
	// aborts' as well as the commits'.
	for i := range steps {
		if a := steps[i].Action; a != nil {
			a.Reverify = Reverifier(read, job)
		}
	}
	return steps, nil
}

// lastWrite is when the brokers last saw a's producer write to one of its
// partitions (zero: not known).
func (r Reading) lastWrite(a Action) time.Time {
	var last int64
	for _, p := range r.Snap.Partitions {
		if pr, ok := p.Producer(a.ProducerID); ok && slices.Contains(a.Partitions, p.TopicPartition) {
			last = max(last, pr.LastWriteMs)
		}
	}
	if last <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(last)
}

// Reverifier reads the evidence of an open transaction of job j afresh with
// read at every call, never from an earlier answer.
func Reverifier(read ReadFlink, j Job) Reverify {
	return func(ctx context.Context, fresh Txn) (CommitEvidence, error) {
		var view *FlinkView
		if read != nil {
			view = read(ctx)
		}
		if view == nil {
			return CommitEvidence{}, errors.New("no --flink or --flink-checkpoints to read it from")
		}
		return CommitEvidenceOf(view, j, fresh), nil
	}
}

// CommitEvidenceOf is what view (a fresh read of the JobManagers and the
// checkpoint directories) says of t, an open transaction of j.
func CommitEvidenceOf(view *FlinkView, j Job, t Txn) CommitEvidence {
	ev := CommitEvidence{Verdict: j.VerdictOf(t, view.Facts(j.ID.Name))}
	if view != nil {
		ev.At = view.At
	}
	ev.FlinkState = ev.Verdict.Basis.FlinkState
	return ev
}

// ResolveStep is what resolving a job does to one of its open
// transactions: Action, or nothing (nil) and why.
type ResolveStep struct {
	Txn     Txn
	Verdict Verdict
	Action  *Action
	Why     string
}

// PlanResolve plans, for every open transaction of Flink job j (txns), the
// commit of the checkpointed ones and the force-terminate of the ones whose
// checkpoint never completed; the ones txnscope cannot judge are left open,
// each with why. evOf reads each one's evidence. A job Flink says runs is
// refused whole: its committer commits, and a restart aborts the rest.
func PlanResolve(j Job, txns []Txn, evOf func(Txn) CommitEvidence) ([]ResolveStep, error) {
	if j.ID.Family != FlinkSink {
		return nil, fmt.Errorf("%s is not a Flink job: only a Flink job's checkpoints say which transactions to commit", j.ID.Name)
	}
	var steps []ResolveStep
	for _, t := range txns {
		if JobOf(t.ID).Job != j.ID || !t.State.Open() {
			continue
		}
		ev := evOf(t)
		if b := ev.Verdict.Basis; b.NoFlink != "" {
			return nil, jobWide("what its checkpoints hold is not known: %s", b.NoFlink)
		}
		if ev.mayRun() {
			return nil, jobWide("not while the job may run: Flink says %s: %s", ev.flinkJob(), runsMeaning(ev.state(), "its transactions", "resolve"))
		}
		s := ResolveStep{Txn: t, Verdict: ev.Verdict}
		switch {
		case t.State != Ongoing:
			s.Why = fmt.Sprintf("it is %s: the coordinator is ending it already", t.State)
		case ev.Verdict.Kind == Checkpointed:
			a, err := PlanCommit(t, ev, false)
			if err != nil {
				s.Why = err.Error()
				break
			}
			s.Action = &a
		case ev.Verdict.Kind == NotCheckpointed:
			a, err := PlanForceTerminate(t)
			if err != nil {
				s.Why = err.Error()
				break
			}
			a.Verdict, a.FlinkState = ev.Verdict, ev.FlinkState
			s.Action = &a
		default:
			s.Why = "whether its checkpoint completed is not known: " + ev.Verdict.Evidence
		}
		steps = append(steps, s)
	}
	if len(steps) == 0 {
		return nil, fmt.Errorf("job %s has no open transaction", j.ID.Name)
	}
	slices.SortFunc(steps, func(a, b ResolveStep) int { return strings.Compare(a.Txn.ID, b.Txn.ID) })
	return steps, nil
}
