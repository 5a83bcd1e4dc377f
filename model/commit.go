package model

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Committing a transaction someone else opened is safe only when its
// records are ones the producer meant to commit: a Flink transaction whose
// checkpoint completed (Flink pre-committed it, and only the commit call was
// lost). Anything else is aborted or left alone. The verdict that says so is
// asked afresh just before every request, never taken from one old answer.

// CommitEvidence is a fresh answer to "may this transaction be committed?":
// its verdict and the Flink job's state, as read at At.
type CommitEvidence struct {
	Verdict Verdict
	// FlinkState is the state Flink reports for the job ("" when txnscope
	// has no JobManager to ask: only a checkpoint directory).
	FlinkState string
	At         time.Time
}

// Reverify reads the commit's evidence again, from the sources it was
// planned on, for fresh, the transaction as just re-read from its
// coordinator.
type Reverify func(ctx context.Context, fresh Txn) (CommitEvidence, error)

// PlanCommit is the commit of t as the operator sees it, resting on ev (its
// verdict and Flink's state when planned). Unverified is the operator's own
// word that the records are to be kept, for what txnscope cannot prove.
func PlanCommit(t Txn, ev CommitEvidence, unverified bool) (Action, error) {
	switch {
	case !t.Described:
		return Action{}, fmt.Errorf("%s has not been described yet (epoch and start unknown); wait for the next refresh", t.ID)
	case t.State != Ongoing:
		return Action{}, fmt.Errorf("%s is %s: only an Ongoing transaction can be committed", t.ID, t.State)
	case !t.HasStart():
		return Action{}, fmt.Errorf("the coordinator reports no start time for %s's transaction, so it could not be told from the next one", t.ID)
	}
	a := Action{
		Kind: Commit, TransactionalID: t.ID, State: t.State, Start: t.StartTime(),
		Partitions: slices.Clone(t.Partitions), Coordinator: t.Coordinator, TimeoutMs: t.TimeoutMs,
		ProducerID: t.ProducerID, ProducerEpoch: t.ProducerEpoch,
		Verdict: ev.Verdict, FlinkState: ev.FlinkState, Unverified: unverified,
	}
	if unverified {
		return a, nil
	}
	if err := commitAllowed(t.ID, ev); err != nil {
		return Action{}, err
	}
	return a, nil
}

// CheckCommitEvidence refuses unless ev, read just now, still says a's
// transaction may be committed: checkpointed, in a checkpoint at least as
// late as the one planned on, and no Flink job running that commits it
// itself. An unverified commit rests on the operator's word, not on ev.
func CheckCommitEvidence(a Action, ev CommitEvidence) error {
	if a.Unverified {
		return nil
	}
	if err := commitAllowed(a.TransactionalID, ev); err != nil {
		return err
	}
	if ev.Verdict.CompletedIn < a.Verdict.CompletedIn {
		// Checkpoints only complete forwards: an answer naming an older one
		// comes from another run, or from a JobManager that lost track.
		return fmt.Errorf("refused: the checkpoint evidence went back from checkpoint %d to %d since it was shown (%s); look again",
			a.Verdict.CompletedIn, ev.Verdict.CompletedIn, ev.Verdict.Evidence)
	}
	return nil
}

// CheckAbortEvidence refuses a resolve's force-terminate unless ev, read
// just now, still says its checkpoint never completed and no Flink job runs
// that ends it itself.
func CheckAbortEvidence(a Action, ev CommitEvidence) error {
	v := ev.Verdict
	switch {
	case FlinkRunning(ev.FlinkState):
		return fmt.Errorf("refused: Flink says its job is %s: the job ends %s itself; aborting would fence a live producer", ev.FlinkState, a.TransactionalID)
	case v.Kind == Checkpointed:
		return fmt.Errorf("refused: its checkpoint completed since it was shown (%s): aborting would lose records Flink counts as delivered; commit it instead", v.Evidence)
	case v.Kind != NotCheckpointed:
		return fmt.Errorf("refused: whether its checkpoint completed is no longer known (%s)", v.Evidence)
	}
	return nil
}

func commitAllowed(id string, ev CommitEvidence) error {
	v := ev.Verdict
	switch {
	case FlinkRunning(ev.FlinkState):
		return fmt.Errorf("refused: Flink says its job is %s: its own committer commits %s once it can; committing here would race it", ev.FlinkState, id)
	case v.Kind == Checkpointed:
		return nil
	case v.Kind == NotCheckpointed:
		return fmt.Errorf("refused: %s is not checkpointed (%s): committing it would deliver records Flink replays; abort it instead", id, v.Evidence)
	case v.Evidence != "":
		return fmt.Errorf("refused: whether %s's checkpoint completed is not known (%s); commit only with --unverified, if you know it did", id, v.Evidence)
	}
	return fmt.Errorf("refused: there is no checkpoint evidence for %s (give --flink or --flink-checkpoints); commit only with --unverified, if you know its checkpoint completed", id)
}

// CheckCommit refuses unless fresh, the id as just re-read, is still the very
// open transaction a was planned on: same producer id, epoch, start and
// partitions, and still Ongoing. The error says what changed, and what it
// means for the records.
func CheckCommit(a Action, fresh Txn, found bool) error {
	switch {
	case !found:
		return fmt.Errorf("refused: %s is no longer known to its coordinator (expired or deleted)", a.TransactionalID)
	case fresh.ProducerID != a.ProducerID:
		return fmt.Errorf("refused: producer id changed %d→%d since it was shown: another producer took the id", a.ProducerID, fresh.ProducerID)
	case fresh.State != Ongoing && (fresh.StartTime().Equal(a.Start) || fresh.State == Empty):
		return fmt.Errorf("refused: it is %s now%s%s", fresh.State, commitMeaning(fresh.State), epochNote(a, fresh))
	case !fresh.StartTime().Equal(a.Start):
		return fmt.Errorf("refused: this is a newer transaction of %s: it started at %s, the one shown started at %s; "+
			"the one shown has ended%s", a.TransactionalID, ClockMs(fresh.StartTime()), ClockMs(a.Start), epochNote(a, fresh))
	case fresh.ProducerEpoch != a.ProducerEpoch:
		return fmt.Errorf("refused: producer epoch changed %d→%d since it was shown: the producer was fenced", a.ProducerEpoch, fresh.ProducerEpoch)
	case !slices.Equal(fresh.Partitions, a.Partitions):
		return fmt.Errorf("refused: its partitions changed since they were shown (%s); look again", partitionDiff(a.Partitions, fresh.Partitions))
	}
	return nil
}

func commitMeaning(s State) string {
	switch s {
	case PrepareCommit:
		return ": it is being committed already"
	case CompleteCommit:
		return ": it committed"
	case PrepareAbort, PrepareEpochFence:
		return ": the coordinator is aborting it (its timeout, or a new producer fenced it): its records are lost, nothing to commit"
	case CompleteAbort:
		return ": it was aborted (its timeout, or a new producer fenced it): its records are lost, nothing to commit"
	case Empty:
		return ": no transaction is open; the one shown ended (committed, or aborted by its timeout or a fence), nothing to commit"
	}
	return ""
}

// CommitWire is the EndTxn as it goes out to broker, at the request version
// chosen for the transaction's version.
func (a Action) CommitWire(broker int32, version int16) string {
	return fmt.Sprintf("EndTxn(COMMIT, transactional.id %s, producer id %d, epoch %d, v%d) to coordinator broker %d",
		strconv.Quote(a.TransactionalID), a.ProducerID, a.ProducerEpoch, version, broker)
}

// verdictFact is the line of the commit's facts that says what it rests on.
func (a Action) verdictFact() string {
	v := a.Verdict
	switch {
	case a.Unverified && v.Kind == Checkpointed:
		return fmt.Sprintf("verdict      checkpointed (%s); --unverified: not asked again", v.Evidence)
	case a.Unverified && v.Evidence != "":
		return fmt.Sprintf("verdict      NOT VERIFIED, %s: %s; committed on your word (--unverified)", v.Kind, v.Evidence)
	case a.Unverified:
		return "verdict      NOT VERIFIED: no checkpoint evidence; committed on your word (--unverified)"
	}
	s := fmt.Sprintf("verdict      checkpointed: %s", v.Evidence)
	if v.CompletedIn > 0 {
		s += fmt.Sprintf(" (checkpoint %d holds it)", v.CompletedIn)
	}
	return s
}

func (a Action) commitConsequences() []string {
	out := []string{
		fmt.Sprintf("The coordinator commits this open transaction of %s: read_committed consumers see its records, and the LSO of its partitions moves on.", a.TransactionalID),
	}
	if a.Unverified {
		out = append(out, "txnscope has not verified that Flink checkpointed it: if its checkpoint did not complete, a restored job writes these records again and consumers see them twice.")
	} else {
		out = append(out, fmt.Sprintf("Flink counts these records as delivered (checkpoint %d): a job restored from it later finds them committed and writes them once.", a.Verdict.CompletedIn))
	}
	if a.FlinkState == "" {
		out = append(out, "No JobManager was asked whether the job runs: be sure it is stopped, or its own committer races this one.")
	}
	return out
}

// CommitEvidenceOf is what view (a fresh read of the JobManagers and the
// retained-checkpoint directories) says of t, an open transaction of j.
func CommitEvidenceOf(view *FlinkView, j Job, t Txn) CommitEvidence {
	ev := CommitEvidence{Verdict: Verdict{ID: t.ID, Kind: VerdictUnknown}}
	if view == nil {
		return ev
	}
	ev.At = view.At
	facts := CheckpointFacts{}
	if m, ok := MatchFlink(j.ID.Name, view.Jobs, view.Prefixes); ok {
		facts.Flink = &m
		ev.FlinkState = m.Job.State
	}
	if r, ok := view.Retained[j.ID.Name]; ok && r.Err == "" {
		facts.Retained, facts.RetainedDir = r.Checkpoints, r.Dir
	}
	ev.Verdict = j.VerdictOf(t, facts)
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
		if FlinkRunning(ev.FlinkState) {
			return nil, fmt.Errorf("the job runs (Flink says %s is %s): it resolves its own transactions (its committer commits the checkpointed ones, a restart aborts the rest)", j.ID.Name, ev.FlinkState)
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
