package model

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// The commit-or-abort question for a Flink job's open transaction: did the
// checkpoint it belongs to complete? Flink pre-commits the open transaction
// when a checkpoint's barrier reaches the sink and opens the next; once the
// checkpoint completes, the transaction is in Flink's state and only the
// commit call remains. Aborting such a transaction loses records Flink
// counts as delivered; aborting one whose checkpoint never completed loses
// nothing (Flink replays from its last completed checkpoint).

// VerdictKind is what is known of an open transaction's checkpoint.
type VerdictKind string

const (
	// Checkpointed: its checkpoint completed; aborting loses its records.
	Checkpointed VerdictKind = "checkpointed"
	// NotCheckpointed: its checkpoint did not complete and never will
	// (the job no longer runs) or not yet (it runs); aborting loses nothing
	// Flink counts as delivered.
	NotCheckpointed VerdictKind = "not_checkpointed"
	// VerdictUnknown: txnscope cannot tell; Evidence says why.
	VerdictUnknown VerdictKind = "unknown"
)

// Verdict is one open transaction's answer, and what it rests on.
type Verdict struct {
	ID   string
	Kind VerdictKind
	// Checkpoint is the checkpoint the transaction belongs to (0: not
	// known); CompletedIn, when checkpointed, the completed checkpoint
	// whose state holds it: its own, or a later one when its own failed.
	// Restoring the job from it commits the transaction.
	Checkpoint, CompletedIn int64
	Evidence                string
}

// ClockMargin is how far apart the brokers' and the JobManager's clocks may
// be: a transaction that began within it of a checkpoint's trigger may
// belong to either checkpoint.
const ClockMargin = 2 * time.Second

// CheckpointFacts is what is known of a job's checkpoints: from its
// JobManager (Flink, nil when not asked or not matched) and from a
// retained-checkpoint directory (Retained: its chk-N with a _metadata;
// RetainedDir "" when none was given).
type CheckpointFacts struct {
	Flink       *FlinkMatch
	Retained    []RetainedCheckpoint
	RetainedDir string
}

// RetainedCheckpoint is a chk-N directory holding a _metadata, written at
// AtMs (Unix ms, the file's modification time).
type RetainedCheckpoint struct {
	N, AtMs int64
}

// Verdicts says, for each open transaction of a Flink job, whether its
// checkpoint completed (nil for other families, or with no facts at all).
func (j Job) Verdicts(f CheckpointFacts) []Verdict {
	if j.ID.Family != FlinkSink || (f.Flink == nil && f.RetainedDir == "") {
		return nil
	}
	var out []Verdict
	for _, u := range j.Units {
		for _, o := range u.open {
			out = append(out, j.verdict(o, f))
		}
	}
	slices.SortFunc(out, func(a, b Verdict) int { return strings.Compare(a.ID, b.ID) })
	return out
}

func (j Job) verdict(o openTxn, f CheckpointFacts) Verdict {
	v := Verdict{ID: o.id, Kind: VerdictUnknown}
	running := f.Flink != nil && FlinkRunning(f.Flink.Job.State)
	if o.ending {
		v.Evidence = "the coordinator is ending it already"
		return v
	}
	// Flink's statistics are of the run it lists: a transaction begun
	// before that run started belongs to an earlier one, whose checkpoint
	// numbers may mean other checkpoints (a fresh start counts from 1).
	if f.Flink != nil && (o.start.IsZero() || f.Flink.Job.StartMs <= 0 || o.start.Before(time.UnixMilli(f.Flink.Job.StartMs).Add(-ClockMargin))) {
		f.Flink = nil
		running = false
		if f.RetainedDir == "" {
			v.Evidence = "it began before the run Flink lists started: Flink's checkpoints are another run's"
			if o.start.IsZero() {
				v.Evidence = "the coordinator reports no start for it, so which run of the job it belongs to is not known"
			}
			return v
		}
	}
	if !j.Pooling && o.checkpoint > 0 {
		// INCREMENTING: the id's number is the checkpoint that pre-commits
		// it (observed on Flink 1.20 and 2.2: killed after checkpoint N
		// completed, the open ids are numbered N+1, and a restore from N
		// commits them with checkpoint N+1).
		v.Checkpoint = o.checkpoint
		return j.byNumber(v, o.start, f, running)
	}
	return j.byTimes(v, o.start, f, running)
}

// byNumber judges checkpoint v.Checkpoint from what Flink and the directory
// say of it. Flink's committer keeps what a checkpoint pre-committed until
// a checkpoint completes, its own or, when its own failed, the next: so a
// transaction is in Flink's state once any checkpoint at or after its own
// completed (in its run).
func (j Job) byNumber(v Verdict, start time.Time, f CheckpointFacts, running bool) Verdict {
	n := v.Checkpoint
	if f.Flink != nil {
		fj := f.Flink.Job
		// Begun before the job's last restore: an earlier attempt's. The
		// restore brought back the committer's state of checkpoint R: what
		// R holds is Flink's (it commits it on restore), what came after R
		// is not and is replayed.
		if r := fj.Restored; r != nil && r.RestoreMs > 0 && !start.IsZero() && start.Before(time.UnixMilli(r.RestoreMs).Add(-ClockMargin)) {
			if n <= r.ID {
				v.Kind, v.CompletedIn = Checkpointed, r.ID
				v.Evidence = fmt.Sprintf("it began before the job restored from checkpoint %d, which holds what checkpoint %d pre-committed (Flink commits it on restore)", r.ID, n)
			} else {
				v.Kind = NotCheckpointed
				v.Evidence = fmt.Sprintf("it began before the job restored from checkpoint %d: checkpoint %d is not in the restored state, and Flink replays its records", r.ID, n)
			}
			return v
		}
		if fj.Latest != nil && fj.Latest.ID >= n {
			v.Kind, v.CompletedIn = Checkpointed, fj.Latest.ID
			v.Evidence = fmt.Sprintf("Flink (%s) says checkpoint %d completed", fj.Source, fj.Latest.ID)
			if fj.Latest.ID > n {
				v.Evidence += fmt.Sprintf(", which holds what checkpoint %d pre-committed", n)
			}
			return v
		}
		for _, c := range fj.History {
			if c.ID == n && c.Status == "IN_PROGRESS" {
				v.Evidence = fmt.Sprintf("Flink says checkpoint %d is in progress", n)
				return v
			}
		}
		switch {
		case fj.Latest != nil:
			v.Kind = NotCheckpointed
			if running {
				v.Evidence = fmt.Sprintf("Flink's latest completed checkpoint is %d; %d has not completed yet (the job runs: it commits or aborts it)", fj.Latest.ID, n)
			} else {
				v.Evidence = fmt.Sprintf("Flink's latest completed checkpoint is %d and the job is %s: %d never completed", fj.Latest.ID, fj.State, n)
			}
			return v
		case fj.Err == "" && fj.Completed == 0:
			v.Kind, v.Evidence = NotCheckpointed, fmt.Sprintf("Flink reports no checkpoint completed in this run (the job is %s)", fj.State)
			return v
		}
	}
	// A directory is believed only of a chk-M written after the transaction
	// began: a chk-M of an earlier run with the same number is another
	// checkpoint.
	if f.RetainedDir != "" && !start.IsZero() {
		newest, holding := int64(-1), int64(-1)
		for _, r := range f.Retained {
			if time.UnixMilli(r.AtMs).Before(start.Add(-ClockMargin)) {
				continue
			}
			newest = max(newest, r.N)
			if r.N >= n && (holding < 0 || r.N < holding) {
				holding = r.N
			}
		}
		if holding > 0 {
			v.Kind, v.CompletedIn = Checkpointed, holding
			v.Evidence = fmt.Sprintf("%s holds chk-%d/_metadata, written after it began", f.RetainedDir, holding)
			return v
		}
		// Flink writes a checkpoint's _metadata before it calls it
		// complete, and keeps the newest it completed: a newer one written
		// since it began, and none at or after its own, means its own had
		// not completed.
		if newest > 0 {
			v.Kind, v.Evidence = NotCheckpointed, fmt.Sprintf("the newest checkpoint in %s is chk-%d, written after it began, and it has no chk-%d: checkpoint %d had not completed when txnscope looked",
				f.RetainedDir, newest, n, n)
			return v
		}
	}
	switch {
	case f.Flink != nil && f.Flink.Job.Err != "":
		v.Evidence = "Flink's checkpoint statistics could not be read: " + f.Flink.Job.Err
	case f.Flink != nil:
		v.Evidence = "Flink lists checkpoints but not the latest completed one"
	default:
		v.Evidence = fmt.Sprintf("no chk-M/_metadata written after it began in %s (checkpoints may have been pruned), and no --flink", f.RetainedDir)
	}
	return v
}

// byTimes judges a transaction whose id carries no checkpoint (POOLING) by
// its start against the checkpoints' trigger times: the first checkpoint
// triggered after it began pre-committed it, and the first completed one
// from then on holds it.
func (j Job) byTimes(v Verdict, start time.Time, f CheckpointFacts, running bool) Verdict {
	if f.Flink == nil || len(f.Flink.Job.History) == 0 {
		v.Evidence = "its id names a slot, not a checkpoint, and Flink's checkpoint history (--flink) is not known"
		return v
	}
	if start.IsZero() {
		v.Evidence = "the coordinator reports no start for it"
		return v
	}
	hist := slices.Clone(f.Flink.Job.History)
	slices.SortFunc(hist, func(a, b FlinkCheckpoint) int { return cmp.Compare(a.TriggerMs, b.TriggerMs) })
	for _, c := range hist {
		trigger := time.UnixMilli(c.TriggerMs)
		if d := trigger.Sub(start); d > -ClockMargin && d < ClockMargin {
			v.Evidence = fmt.Sprintf("it began within %s of checkpoint %d's trigger: the clocks cannot tell which checkpoint it belongs to", ClockMargin, c.ID)
			return v
		}
		if trigger.Before(start) {
			continue
		}
		if v.Checkpoint == 0 {
			v.Checkpoint = c.ID
		}
		switch c.Status {
		case "COMPLETED":
			v.Kind, v.CompletedIn = Checkpointed, c.ID
			v.Evidence = fmt.Sprintf("it began before checkpoint %d was triggered and is still open; Flink says %d completed", v.Checkpoint, c.ID)
			return v
		case "IN_PROGRESS":
			v.Evidence = fmt.Sprintf("checkpoint %d, triggered after it began, is in progress", c.ID)
			return v
		}
	}
	if running {
		v.Kind, v.Evidence = NotCheckpointed, "no checkpoint triggered since it began has completed (the job runs: it commits or aborts it)"
	} else {
		v.Kind, v.Evidence = NotCheckpointed, fmt.Sprintf("no checkpoint triggered after it began completed, and the job is %s", f.Flink.Job.State)
	}
	return v
}

// VerdictOf is the verdict of t, one open transaction of Flink job j, as
// just re-read from its coordinator: what Verdicts would say of it.
func (j Job) VerdictOf(t Txn, f CheckpointFacts) Verdict {
	if j.ID.Family != FlinkSink || (f.Flink == nil && f.RetainedDir == "") {
		return Verdict{ID: t.ID, Kind: VerdictUnknown}
	}
	o := openTxn{id: t.ID, checkpoint: JobOf(t.ID).Checkpoint, ending: t.State != Ongoing}
	if t.HasStart() {
		o.start = t.StartTime()
	}
	return j.verdict(o, f)
}
