package model

import (
	"cmp"
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
		Verdict: ev.Verdict, FlinkState: ev.state(), Unverified: unverified,
	}
	if unverified {
		return a, nil
	}
	if err := commitAllowed(t.ID, ev); err != nil {
		return Action{}, err
	}
	if err := committableFits(t.ID, t.ProducerID, t.ProducerEpoch, ev.Verdict.Basis.Committable); err != nil {
		return Action{}, err
	}
	return a, nil
}

// JobWideError is a refusal that holds for every transaction of the job,
// not only the one re-checked: Flink says the job may run, or what the
// evidence rested on went silent or changed. A batch stops at it.
type JobWideError struct{ msg string }

func (e *JobWideError) Error() string { return e.msg }

func jobWide(format string, args ...any) error { return &JobWideError{fmt.Sprintf(format, args...)} }

// CheckCommitEvidence refuses unless ev, read just now, still says a's
// transaction may be committed: on the same basis as planned (the same
// Flink job of the same JobManager, the same checkpoint directory),
// checkpointed in a checkpoint at least as late as the one planned on, and
// no Flink job that may run and commit it itself. An unverified commit
// rests on the operator's word, not on ev.
func CheckCommitEvidence(a Action, ev CommitEvidence) error {
	if a.Unverified {
		return nil
	}
	if err := sameBasis(a, ev); err != nil {
		return err
	}
	if err := commitAllowed(a.TransactionalID, ev); err != nil {
		return err
	}
	if err := committableFits(a.TransactionalID, a.ProducerID, a.ProducerEpoch, ev.Verdict.Basis.Committable); err != nil {
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

// CheckEvidence is the re-check of the evidence a rests on: a commit's
// (CheckCommitEvidence) or a resolve's force-terminate's (CheckAbortEvidence).
func CheckEvidence(a Action, ev CommitEvidence) error {
	if a.Kind == Commit {
		return CheckCommitEvidence(a, ev)
	}
	return CheckAbortEvidence(a, ev)
}

// CheckAbortEvidence refuses a resolve's force-terminate unless ev, read
// just now, still says on the same basis that its checkpoint never
// completed and no Flink job may run that ends it itself.
func CheckAbortEvidence(a Action, ev CommitEvidence) error {
	if err := sameBasis(a, ev); err != nil {
		return err
	}
	v := ev.Verdict
	switch {
	case v.Basis.NoFlink != "":
		return jobWide("refused: %s", v.Basis.NoFlink)
	case ev.mayRun():
		return jobWide("refused: Flink says %s: %s; aborting would fence a live producer", ev.flinkJob(), runsMeaning(ev.state(), a.TransactionalID, "end"))
	case v.Kind == Checkpointed:
		return fmt.Errorf("refused: its checkpoint completed since it was shown (%s): aborting would lose records Flink counts as delivered; commit it instead", v.Evidence)
	case v.Kind != NotCheckpointed:
		return fmt.Errorf("refused: whether its checkpoint completed is no longer known (%s)", v.Evidence)
	}
	return nil
}

// sameBasis refuses when ev no longer rests on the Flink job and directory
// a was planned on: a JobManager that stops answering or drops the job is
// what a failover looks like, and a directory that changed is another
// question; neither is the answer the operator confirmed.
func sameBasis(a Action, ev CommitEvidence) error {
	was, now := a.Verdict.Basis, ev.Verdict.Basis
	if was.Same(now) {
		return nil
	}
	why := now.String()
	if ev.Verdict.Kind == VerdictUnknown && ev.Verdict.Evidence != "" {
		why = ev.Verdict.Evidence
	}
	return jobWide("refused: the evidence it was planned on is gone: it rested on %s; at the re-check, %s", was, why)
}

// mayRun reports whether the Flink job of ev may have live producers: a
// JobManager lists it in any state but FAILED, CANCELED and FINISHED.
func (ev CommitEvidence) mayRun() bool {
	return (ev.Verdict.Basis.FlinkJobID != "" || ev.FlinkState != "") && !FlinkEnded(ev.state())
}

func (ev CommitEvidence) state() string { return cmp.Or(ev.FlinkState, ev.Verdict.Basis.FlinkState) }

// flinkJob names the Flink job of ev.
func (ev CommitEvidence) flinkJob() string {
	if j := ev.Verdict.Basis.FlinkJob(); j != "" {
		return j
	}
	return "its job is " + orUnknown(ev.state())
}

// runsMeaning says why a job in state may end id itself (what: commit,
// end or resolve).
func runsMeaning(state, id, what string) string {
	if FlinkRunning(state) {
		switch what {
		case "commit":
			return fmt.Sprintf("its own committer commits %s once it can", id)
		case "resolve":
			return "the job runs: it resolves its own transactions (its committer commits the checkpointed ones, a restart aborts the rest)"
		}
		return fmt.Sprintf("the job ends %s itself", id)
	}
	return fmt.Sprintf("a job %s may run again (only FAILED, CANCELED and FINISHED are over) and %s %s itself", orUnknown(state), what, id)
}

func orUnknown(state string) string {
	if state == "" {
		return "in no known state"
	}
	return state
}

// CommitTarget is the producer id and epoch a's EndTxn carries: its
// committable's, what Flink's committer would send on restore, when the
// verdict rests on one; else the transaction's own, as planned.
func CommitTarget(a Action) (pid int64, epoch int16) {
	if cm := a.Verdict.Basis.Committable; cm != nil && !a.Unverified {
		return cm.ProducerID, cm.Epoch
	}
	return a.ProducerID, a.ProducerEpoch
}

// committableFits refuses a commit whose committable is not the very
// transaction open at the coordinator: after a producer-id rotation, a
// re-initialisation or a later transaction of the id, EndTxn with the
// broker's producer id and epoch would commit records Flink did not
// checkpoint.
func committableFits(id string, pid int64, epoch int16, cm *Committable) error {
	if cm == nil || cm.Is(id, pid, epoch) {
		return nil
	}
	var which string
	switch {
	case cm.ID != id:
		which = "it is another id's"
	case RotatedAway(cm, pid):
		return fmt.Errorf("refused: the checkpoint's committable is %s, but the coordinator has since rotated %s to producer id %d (pid %d's epochs ran out at %d under transaction version 2, FLINK-40689), "+
			"and its open transaction is pid %d epoch %d: the checkpoint's transaction ended with the old producer id, and an EndTxn for it now could only fail or end another transaction; "+
			"nothing of it is left to commit: leave the open one to the job, or abort it once the job is known gone for good",
			cm, id, pid, cm.ProducerID, EpochRotatesAt, pid, epoch)
	case cm.ProducerID != pid:
		which = "another producer id: the id expired and came back, or the coordinator gave it a new one when its epochs ran out"
	case epoch > cm.Epoch:
		which = "a higher epoch: the id was initialised again after the checkpoint (a restored job, a fence, or the slot's next transaction)"
	default:
		which = "a lower epoch: the open transaction is older than the checkpoint's"
	}
	return fmt.Errorf("refused: the checkpoint's committable is %s, the open transaction of %s is pid %d epoch %d (%s): the checkpointed transaction is not the one open, so nothing of it is left to commit; leave the open one to the job, or abort it once the job is known gone for good",
		cm, id, pid, epoch, which)
}

func commitAllowed(id string, ev CommitEvidence) error {
	v := ev.Verdict
	switch {
	case v.Basis.NoFlink != "":
		return jobWide("refused: %s", v.Basis.NoFlink)
	case ev.mayRun():
		return jobWide("refused: Flink says %s: %s; committing here would race it", ev.flinkJob(), runsMeaning(ev.state(), id, "commit"))
	case v.Kind == Checkpointed:
		return nil
	case v.Kind == NotCheckpointed:
		return fmt.Errorf("refused: %s is not checkpointed (%s): committing it would deliver records Flink replays; abort it instead", id, v.Evidence)
	case v.Evidence != "":
		return fmt.Errorf("refused: whether %s's checkpoint completed is not known (%s); commit only with --unverified, if you know it did", id, v.Evidence)
	}
	return fmt.Errorf("refused: there is no checkpoint evidence for %s (give --flink or --flink-checkpoints); commit only with --unverified, if you know its checkpoint completed", id)
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

// basisFact is the line of the facts that names what the verdict rests on:
// the Flink job (name and id) and the checkpoint directory.
func (a Action) basisFact() string { return "rests on     " + a.Verdict.Basis.String() }

func (a Action) commitConsequences() []string {
	out := []string{
		fmt.Sprintf("The coordinator commits this open transaction of %s: read_committed consumers see its records, and the LSO of its partitions moves on.", a.TransactionalID),
	}
	flink := JobOf(a.TransactionalID).Job.Family == FlinkSink
	switch {
	case a.Unverified && !flink:
		return append(out, a.foreignCommit()...)
	case a.Unverified:
		out = append(out, "txnscope has not verified that Flink checkpointed it: if its checkpoint did not complete, a restored job writes these records again and consumers see them twice.")
	default:
		out = append(out, fmt.Sprintf("Flink counts these records as delivered (checkpoint %d): a job restored from it later finds them committed and writes them once.", a.Verdict.CompletedIn))
	}
	b := a.Verdict.Basis
	switch {
	case b.FlinkJobID != "":
		out = append(out, fmt.Sprintf("It rests on %s.", b.FlinkJob()))
	case a.FlinkState != "":
		out = append(out, fmt.Sprintf("Flink says the job is %s.", a.FlinkState))
	case len(b.JobManagers) > 0:
		out = append(out, fmt.Sprintf("No Flink job of the JobManagers asked (%s) is this prefix's, so none says whether the job runs: be sure it is stopped, or its own committer races this one.", strings.Join(b.JobManagers, ", ")))
	default:
		out = append(out, "No JobManager was asked whether the job runs: be sure it is stopped, or its own committer races this one.")
	}
	return out
}

// foreignCommit is what an unverified commit of an id that is not a Flink
// sink's means: txnscope knows nothing of why it is open.
func (a Action) foreignCommit() []string {
	last := "When its producer last wrote is not known."
	if !a.LastWrite.IsZero() {
		last = fmt.Sprintf("Its producer last wrote at %s (the brokers' last write of producer %d on its partitions).", a.LastWrite.Format("2006-01-02 15:04:05.000 MST"), a.ProducerID)
	}
	return []string{
		fmt.Sprintf("%s is not a Flink sink's id: nothing tells txnscope whether its producer meant to commit or to abort this transaction.", a.TransactionalID),
		last,
		"If that producer is live, the commit ends its transaction under it: records it may have meant to abort become visible, and its own abort later fails (its epoch is stale) without undoing the commit.",
	}
}
