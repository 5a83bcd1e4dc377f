package model

import (
	"fmt"
	"strconv"
	"strings"
)

// Batch is what the operator confirms at once: one action (One), or
// several (a job's lingering ids, a job's resolution). Confirming it sends
// nothing by itself: each action is still re-checked, recorded and sent on
// its own, one after the other.
type Batch struct {
	Actions []Action
	// One: a single action the operator chose on its own, confirmed with
	// its own word (Action.ConfirmWord).
	One bool
	// Results are the answers so far, in the order of Actions.
	Results []Result
	// Stopped says why the actions after the last result were not sent
	// ("" while the batch goes on, or once every one was).
	Stopped string
	// AuditFailed: the audit log could not take the last answered action's
	// record, so the log does not hold every attempt whole.
	AuditFailed bool
	// Resolve: a job's resolution (commits and force-terminates), confirmed
	// with its own word.
	Resolve bool
	// Protected is the name of the protected context it is sent in ("" for
	// none): the confirmation is the word, then the name.
	Protected string
}

// PlanBatch plans the force-terminate of each of ids as s shows it. An id
// that cannot be planned (gone, not described, no longer open) is left out,
// with why in skipped.
func PlanBatch(s *Snapshot, ids []string) (b Batch, skipped []string) {
	for _, id := range ids {
		t, ok := s.Txn(id)
		if !ok {
			skipped = append(skipped, fmt.Sprintf("%s is no longer listed by its coordinator", id))
			continue
		}
		a, err := PlanForceTerminate(t)
		if err != nil {
			skipped = append(skipped, err.Error())
			continue
		}
		b.Actions = append(b.Actions, a)
	}
	return b, skipped
}

// Single is the batch of a alone.
func Single(a Action) Batch { return Batch{Actions: []Action{a}, One: true} }

// BatchConfirmWord is what the operator types to send a batch of n: the count
// is part of it, so that confirming says how many are about to go.
func BatchConfirmWord(n int) string { return "abort " + strconv.Itoa(n) }

// ConfirmWord is what the operator types to send b: a single action's own
// word, else BatchConfirmWord (or "resolve N").
func (b Batch) ConfirmWord() string {
	word := BatchConfirmWord(len(b.Actions))
	switch {
	case b.One && len(b.Actions) == 1:
		word = b.Actions[0].ConfirmWord()
	case b.Resolve:
		word = "resolve " + strconv.Itoa(len(b.Actions))
	}
	if b.Protected != "" {
		word += " " + b.Protected
	}
	return word
}

// ResolveBatch is the batch of steps that send something, commits first
// (what a dead job still owes its consumers), and the ones left open, each
// with why.
func ResolveBatch(steps []ResolveStep) (b Batch, left []string) {
	b.Resolve = true
	for _, kind := range []ActionKind{Commit, ForceTerminate} {
		for _, s := range steps {
			if s.Action != nil && s.Action.Kind == kind {
				b.Actions = append(b.Actions, *s.Action)
			}
		}
	}
	for _, s := range steps {
		if s.Action == nil {
			left = append(left, fmt.Sprintf("%s left open: %s", s.Txn.ID, s.Why))
		}
	}
	return b, left
}

// Confirms reports whether typed is the confirmation, as the single dialog
// takes it: exactly, but for spaces around it.
func (b Batch) Confirms(typed string) bool {
	return len(b.Actions) > 0 && strings.TrimSpace(typed) == b.ConfirmWord()
}

// Next is the action to send now; ok is false once the batch is over.
func (b Batch) Next() (a Action, ok bool) {
	if b.Over() {
		return Action{}, false
	}
	return b.Actions[len(b.Results)], true
}

// Over reports that nothing more will be sent: every action was answered,
// or the batch stopped.
func (b Batch) Over() bool { return b.Stopped != "" || len(b.Results) >= len(b.Actions) }

// Add takes the answer to the action Next returned. auditErr is whatever
// the audit log could not take of it: the batch stops there, since the
// next request could not be recorded either.
func (b *Batch) Add(r Result, auditErr error) {
	b.Results = append(b.Results, r)
	b.AuditFailed = b.AuditFailed || auditErr != nil || r.AuditErr != ""
	switch {
	case auditErr != nil:
		b.Stop("the audit log failed (" + auditErr.Error() + "): nothing more is sent unrecorded")
	case r.AuditErr != "":
		b.Stop("the audit log failed (" + r.AuditErr + "): nothing more is sent unrecorded")
	case r.JobWide:
		b.Stop("what the last one was refused for holds for the whole job (" + strings.TrimPrefix(r.Summary(), "refused: ") + "): nothing more is sent")
	}
}

// Stop ends the batch before its next action (one in flight is still
// answered and Added); the first reason stays.
func (b *Batch) Stop(why string) {
	if b.Stopped == "" && !b.Over() {
		b.Stopped = why
	}
}

// BatchOutcome is how one action of a batch ended, in a word.
type BatchOutcome string

const (
	BatchTerminated BatchOutcome = "force-terminated"
	BatchCommitted  BatchOutcome = "committed"
	BatchRefused    BatchOutcome = "refused"
	BatchFailed     BatchOutcome = "failed"
	// BatchUnknown: the request went out and what it did cannot be told
	// (its answer was lost, or it may have hit a newer transaction).
	BatchUnknown BatchOutcome = "unknown"
	BatchUnsent  BatchOutcome = "not sent"
	BatchWaiting BatchOutcome = "waiting"
)

// OutcomeOf is how r ended.
func OutcomeOf(r Result) BatchOutcome {
	switch {
	case r.OK() && r.Action.Kind == Commit:
		return BatchCommitted
	case r.OK():
		return BatchTerminated
	case r.Refused:
		return BatchRefused
	case r.Unknown:
		return BatchUnknown
	}
	return BatchFailed
}

// Outcome is how action i ended so far: BatchWaiting while the batch may
// still send it, BatchUnsent once it stopped before it.
func (b Batch) Outcome(i int) BatchOutcome {
	switch {
	case i < len(b.Results):
		return OutcomeOf(b.Results[i])
	case b.Stopped != "":
		return BatchUnsent
	}
	return BatchWaiting
}

// Tally counts the outcomes so far.
type Tally struct {
	Committed, Terminated, Refused, Unknown, Failed, Unsent, Waiting int
}

// Tally counts b's outcomes.
func (b Batch) Tally() Tally {
	var t Tally
	for i := range b.Actions {
		switch b.Outcome(i) {
		case BatchCommitted:
			t.Committed++
		case BatchTerminated:
			t.Terminated++
		case BatchRefused:
			t.Refused++
		case BatchUnknown:
			t.Unknown++
		case BatchFailed:
			t.Failed++
		case BatchUnsent:
			t.Unsent++
		default:
			t.Waiting++
		}
	}
	return t
}

// String is the tally in one line: "5 force-terminated, 1 refused, 1 not
// sent"; outcomes none ended with are left out.
func (t Tally) String() string {
	var parts []string
	for _, p := range []struct {
		n    int
		word BatchOutcome
	}{{t.Committed, BatchCommitted}, {t.Terminated, BatchTerminated}, {t.Refused, BatchRefused}, {t.Unknown, BatchUnknown}, {t.Failed, BatchFailed}, {t.Unsent, BatchUnsent}, {t.Waiting, BatchWaiting}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.word))
		}
	}
	if len(parts) == 0 {
		return "nothing to send"
	}
	return strings.Join(parts, ", ")
}

// Answered is the tally of the answers alone, for a batch under way.
func (t Tally) Answered() string {
	t.Unsent, t.Waiting = 0, 0
	return t.String()
}

// OK reports that every action was sent and did what it meant to.
func (t Tally) OK() bool {
	return t.Committed+t.Terminated > 0 && t.Refused+t.Unknown+t.Failed+t.Unsent+t.Waiting == 0
}

// BatchConsequences are what the operator must know before confirming a
// batch: the single force-terminate's, for many ids.
func BatchConsequences() []string {
	return []string{
		"Each id's coordinator aborts its open transaction and bumps the id's epoch; a live producer still holding one of the ids is fenced.",
		"Records written in them are discarded; read_committed consumers and the partitions' LSO move past them.",
		"If Flink still means to commit one of them (pre-committed for a checkpoint it restores), that checkpoint's output is lost.",
	}
}

// ResolveConsequences are what the operator must know before resolving a job.
func ResolveConsequences() []string {
	return []string{
		"commit: its coordinator commits it with its own producer id and epoch; read_committed consumers see its records. Flink counts them as delivered: a restore from that checkpoint finds them committed.",
		"force-terminate: its coordinator aborts it and bumps the id's epoch; its records are discarded. Its checkpoint never completed: a restored job replays them.",
		"Each is re-read just before its request, its checkpoint evidence asked again, and refused if either changed. One refused does not stop the others, unless what refused it holds for the whole job (Flink says it may run, its JobManager went silent).",
	}
}
