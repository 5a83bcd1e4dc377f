package model

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// FLINK-40626: after a rescale or a prefix change, Flink may leave a
// transaction open that no running subtask will ever end; it pins its
// partitions until transaction.timeout.ms aborts it, and a checkpoint that
// held it loses its records then. The id's number says nothing here: on
// Flink 2.2 POOLING, restored 3 → 2, the two subtasks wrote the ids of
// subtasks 0 and 2 and left subtask 1's idle. What the ids do tells.

// OrphanCause says how a job's orphaned transactions are known to be.
type OrphanCause string

const (
	// OrphanedRun: the job committed transactions it began after them
	// (under POOLING: a rescale renumbered the subtasks' ids).
	OrphanedRun OrphanCause = "rescaled"
	// OrphanedPrefix: the Flink job this prefix is matched to runs, and
	// commits under another prefix since they began; this one does not.
	OrphanedPrefix OrphanCause = "prefix changed"
)

// ProblemOrphaned is the job-level problem of orphaned transactions.
const ProblemOrphaned ProblemKind = "orphaned"

// findOrphans applies the rule to j's open transactions, once Flink's word
// on the job is in: each must be older than a live transaction of the job
// gets, its producer not seen writing where it pins a partition (the
// brokers' word; a slot's transaction may pin nothing, another one at the
// LSO before it), and either a run of the job committed a transaction it
// began after it (POOLING, where the lingering rule asks the id's own
// subtask only), or the Flink job j is matched to committed under another
// prefix since (elsewhere, its last commit there) while nothing of j's did.
// A running job whose checkpoints hang commits nowhere: not orphaned.
func (j *Job) findOrphans(now, elsewhere time.Time) {
	j.Orphaned, j.OrphanedBy = nil, ""
	if j.ID.Family != FlinkSink {
		return
	}
	for _, u := range j.Units {
		for _, o := range u.open {
			if o.ending || o.start.IsZero() || now.Sub(o.start) < j.liveFor() || slices.Contains(j.Lingering, o.id) || j.writing(o.id, now) {
				continue
			}
			switch {
			case j.Pooling && (j.committedStart > o.start.UnixMilli() || j.LastCommit.After(o.start.Add(j.liveFor()))):
				// A commit that long after o began is of a transaction
				// begun after it: a live one lasts less (polls see commit
				// times, the log their starts too).
				j.OrphanedBy = OrphanedRun
			case elsewhere.After(o.start.Add(j.liveFor())) && !j.LastCommit.After(o.start.Add(j.liveFor())) && j.committedStart < o.start.UnixMilli():
				if j.OrphanedBy == "" {
					j.OrphanedBy = OrphanedPrefix
				}
			default:
				continue
			}
			j.Orphaned = append(j.Orphaned, o.id)
		}
	}
	slices.Sort(j.Orphaned)
}

// orphanProblem says which are orphaned, why, and the way out their
// verdicts allow.
func (j Job) orphanProblem(now time.Time, loc *time.Location) Problem {
	n := len(j.Orphaned)
	p := Problem{Kind: ProblemOrphaned, What: fmt.Sprintf("%d orphaned: no running subtask will end %s", n, plural(n, "it", "them"))}
	open := fmt.Sprintf("open for over %s, their producers not seen writing", short(j.liveFor()))
	switch j.OrphanedBy {
	case OrphanedPrefix:
		p.Why = fmt.Sprintf("%s, while Flink's job %s commits under another transactional-id prefix and no id of this one committed "+
			"since they began: the job runs under the other prefix now, and nothing ends this one's (FLINK-40626)", open, j.Flink.Job.Name)
	default:
		p.Why = open + ", and the job has committed transactions it began after them: a rescale gave the subtasks other ids " +
			"(under POOLING an id's number is not its subtask's), and a superseded id is never ended (FLINK-40626)"
	}
	var deadline time.Time
	for _, u := range j.Units {
		for _, o := range u.open {
			if slices.Contains(j.Orphaned, o.id) && !o.deadline.IsZero() {
				deadline = latest(deadline, o.deadline)
			}
		}
	}
	if !deadline.IsZero() && now.Before(deadline) {
		p.Why += fmt.Sprintf("; they pin their partitions until transaction.timeout.ms aborts them at %s (in %s)", clock(deadline, loc), short(until(now, deadline)))
	}
	var done, notDone, unknown []string
	for _, v := range j.OpenVerdicts {
		if !slices.Contains(j.Orphaned, v.ID) {
			continue
		}
		switch v.Kind {
		case Checkpointed:
			done = append(done, v.ID)
		case NotCheckpointed:
			notDone = append(notDone, v.ID)
		default:
			unknown = append(unknown, v.ID)
		}
	}
	var ways []string
	if len(notDone) > 0 {
		ways = append(ways, fmt.Sprintf("force-terminate %s (a on each): %s never completed, nothing of %s is lost",
			strings.Join(notDone, ", "), plural(len(notDone), "its checkpoint", "their checkpoints"), plural(len(notDone), "it", "them")))
	}
	if len(done) > 0 {
		ways = append(ways, fmt.Sprintf("commit %s (c on each): %s completed, and the timeout loses %s records; "+
			"txnscope refuses while Flink reports the job running, as it cannot rule out its committer", strings.Join(done, ", "),
			plural(len(done), "its checkpoint", "their checkpoints"), plural(len(done), "its", "their")))
	}
	if len(unknown) > 0 || len(j.OpenVerdicts) == 0 {
		ways = append(ways, "whether their checkpoints completed is not known (give --flink-checkpoints): force-terminate only those whose "+
			"checkpoint you know did not complete, or let the timeout abort them")
	}
	p.WayOut = strings.Join(ways, "; ")
	return p
}

// writing reports whether a pin of id's open transaction says its producer
// wrote within a live transaction's life.
func (j *Job) writing(id string, now time.Time) bool {
	for _, p := range j.Pinned {
		if p.ID == id && j.pinSilence(p, now) < 0 {
			return true
		}
	}
	return false
}
