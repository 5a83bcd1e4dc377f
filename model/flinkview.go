package model

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// FlinkJob is what one JobManager's REST API says of one of its jobs
// (internal/flinkrest reads it): its state, its vertices, its checkpoint
// configuration and statistics. Times are the JobManager's clock, Unix ms.
type FlinkJob struct {
	// Source is the JobManager's URL as given to --flink.
	Source string
	ID     string
	Name   string
	// State is Flink's: CREATED, RUNNING, RESTARTING, FAILING, FAILED,
	// CANCELLING, CANCELED, FINISHED, SUSPENDED, RECONCILING, INITIALIZING.
	State   string
	StartMs int64
	// Vertices are the job graph's vertices (chained operators are one).
	Vertices []FlinkVertex
	// IntervalMs and CheckpointTimeoutMs are the checkpoint configuration
	// (0: not known, or checkpointing off).
	IntervalMs, CheckpointTimeoutMs int64
	Completed, Failed, InProgress   int64
	// Latest is the latest completed checkpoint, Restored the one the job
	// last started from (nil: none).
	Latest, Restored *FlinkCheckpoint
	// History is the recent checkpoints, newest first, as Flink keeps them.
	History []FlinkCheckpoint
	// Err is what went wrong reading the job's details ("" when nothing).
	Err string
}

// FlinkView is what the JobManagers given with --flink said at one read.
type FlinkView struct {
	Jobs []FlinkJob
	// Errs says, per JobManager that did not answer, why ("" for those that
	// did), in --flink's order; Sources are their URLs.
	Errs, Sources []string
	At            time.Time
	// Prefixes are --flink-prefix's: a Flink job's name or id → the
	// transactional-id prefix of its sink.
	Prefixes map[string]string
	// Retained are --flink-checkpoints': a prefix → its job's retained
	// checkpoint directory, as read.
	Retained map[string]RetainedDir
	// External are the checkpoint directories of ended Flink jobs, by
	// Flink job id, read where Flink says their latest completed
	// checkpoint is (its external path), every committable kept.
	External map[string]RetainedDir
}

// Only is r with the committables of prefix's sink alone.
func (r RetainedDir) Only(prefix string) RetainedDir {
	out := r
	out.Jobs = nil
	for _, j := range r.Jobs {
		j.Checkpoints = slices.Clone(j.Checkpoints)
		for i, c := range j.Checkpoints {
			var cs []Committable
			for _, cm := range c.Committables {
				if m := JobOf(cm.ID); m.Job.Family == FlinkSink && m.Job.Name == prefix {
					cs = append(cs, cm)
				}
			}
			j.Checkpoints[i].Committables = cs
		}
		out.Jobs = append(out.Jobs, j)
	}
	return out
}

// RetainedDir is what --flink-checkpoints PREFIX=DIR found in DIR: the
// checkpoint directories of the jobs in it (DIR itself when it holds chk-N,
// and each subdirectory that does: Flink writes DIR/<job id>/chk-N). Err is
// why DIR itself could not be read; Problems name the entries of DIR that
// could not be read, so that a job's directory may hide among them.
type RetainedDir struct {
	Dir      string
	Jobs     []RetainedJob
	Problems []string
	Err      string
	// FromFlink: Flink named it, as where the job's latest completed
	// checkpoint is; one that holds none contradicts Flink.
	FromFlink bool
}

// RetainedJob is one job's checkpoint directory: its completed checkpoints
// (a chk-N holding Flink's _metadata), oldest first, and every entry that
// could not be read or understood (a verdict resting on it is unknown).
type RetainedJob struct {
	Dir string
	// JobID is the directory's name when it is a Flink job id.
	JobID       string
	Checkpoints []RetainedCheckpoint
	Problems    []string
}

// RetainedCheckpoint is a completed checkpoint and the KafkaSink
// committables of the prefix found in its _metadata: what Flink commits
// when it restores from it.
type RetainedCheckpoint struct {
	N            int64
	Committables []Committable
}

// Committable is what Flink's KafkaSink committer keeps of a pre-committed
// transaction: the transaction's id, producer id and epoch, and the
// checkpoint that pre-committed it. Together id, producer id and epoch name
// one transaction in both naming strategies: a producer id is never handed
// out twice, and the connector initialises its producer (which bumps the
// epoch) for every transaction, a POOLING slot's next one included. Neither
// a file's time nor a directory's name can say as much.
type Committable struct {
	ID         string
	ProducerID int64
	Epoch      int16
	// Checkpoint pre-committed it (0: not known).
	Checkpoint int64
	// Finished: Flink's committer marked it committed or failed, and does
	// not commit it on restore.
	Finished bool
}

// String is the committable as evidence names it: "f-orders-2-7 pid 4003
// epoch 18".
func (c Committable) String() string {
	return fmt.Sprintf("%s pid %d epoch %d", c.ID, c.ProducerID, c.Epoch)
}

// Is reports whether c is the committable of the transaction of id,
// producer id pid and epoch.
func (c Committable) Is(id string, pid int64, epoch int16) bool {
	return c.ID == id && c.ProducerID == pid && c.Epoch == epoch
}

// Find is the committable c holds for the transaction of id, producer id
// pid and epoch.
func (c RetainedCheckpoint) Find(id string, pid int64, epoch int16) (Committable, bool) {
	for _, cm := range c.Committables {
		if cm.Is(id, pid, epoch) {
			return cm, true
		}
	}
	return Committable{}, false
}

// Holds reports whether c holds the committable of the open transaction of
// id, producer id pid and epoch.
func (c RetainedCheckpoint) Holds(id string, pid int64, epoch int16) bool {
	_, ok := c.Find(id, pid, epoch)
	return ok
}

// Of is the committable c holds for id, whatever its producer id and
// epoch (the newest epoch when several).
func (c RetainedCheckpoint) Of(id string) (Committable, bool) {
	var out Committable
	found := false
	for _, cm := range c.Committables {
		if cm.ID == id && (!found || cm.ProducerID == out.ProducerID && cm.Epoch > out.Epoch) {
			out, found = cm, true
		}
	}
	return out, found
}

// FlinkVertex is a vertex of a Flink job graph.
type FlinkVertex struct {
	Name        string
	Parallelism int
}

// FlinkCheckpoint is one checkpoint as Flink's statistics show it.
type FlinkCheckpoint struct {
	ID     int64
	Status string // COMPLETED, IN_PROGRESS, FAILED
	// TriggerMs is when the JobManager triggered it; AckMs when the last
	// subtask acknowledged it (for a completed one, about when it
	// completed); RestoreMs when a job started from it.
	TriggerMs, AckMs, RestoreMs int64
	Path                        string // external path, "" when none
	Savepoint                   bool
}

// FlinkEnded reports whether Flink says the job is over for good (FAILED,
// CANCELED, FINISHED): nothing of it will run again unless someone starts
// it. Every other state, SUSPENDED (a JobManager that lost its HA
// leadership; the job recovers), an empty or an unknown one included, may
// have producers that live or will: nothing is ended for such a job.
func FlinkEnded(state string) bool {
	switch state {
	case "FAILED", "CANCELED", "FINISHED":
		return true
	}
	return false
}

// FlinkRunning reports whether state is one in which the job's tasks run
// or are about to: its producers may be live.
func FlinkRunning(state string) bool {
	switch state {
	case "RUNNING", "RESTARTING", "FAILING", "CREATED", "INITIALIZING", "RECONCILING", "CANCELLING":
		return true
	}
	return false
}

// SinkParallelism is the parallelism of the vertex that holds a sink
// ("Writer" or "Sink" in its name; chained, the vertex holds the source
// too), else the highest of the job's (0: no vertex known).
func (f FlinkJob) SinkParallelism() int {
	best := 0
	for _, v := range f.Vertices {
		if strings.Contains(v.Name, "Writer") || strings.Contains(v.Name, "Sink") {
			return v.Parallelism
		}
		best = max(best, v.Parallelism)
	}
	return best
}

// Interval is the checkpoint interval Flink reports (0: not known).
func (f FlinkJob) Interval() time.Duration {
	if f.IntervalMs <= 0 || f.IntervalMs > int64(24*time.Hour/time.Millisecond) {
		return 0 // Flink says Long.MAX_VALUE when checkpointing is off
	}
	return time.Duration(f.IntervalMs) * time.Millisecond
}

// FlinkMatch is the Flink job txnscope takes a prefix's job to be, and how
// it knows.
type FlinkMatch struct {
	Job FlinkJob
	// By is "--flink-prefix" (the operator said so) or "name" (the job's
	// name holds the prefix as a word).
	By string
}

// MatchFlink finds prefix's Flink job among jobs: the one the operator
// mapped to it (explicit: Flink job name or id → prefix), else one whose
// name holds the prefix as a word. Runs of one job share its name: of a
// failed run and the one that replaced it, the running one, then the
// newest, wins. Jobs of different names are different jobs, and the
// newest of them is not the prefix's for being newest: err says so, and
// the operator names the one with --flink-prefix.
func MatchFlink(prefix string, jobs []FlinkJob, explicit map[string]string) (m FlinkMatch, found bool, err error) {
	var cands []FlinkJob
	by := "--flink-prefix"
	for _, j := range jobs {
		if p, ok := explicit[j.ID]; ok && p == prefix {
			// A job id names one job, whatever else is mapped.
			return FlinkMatch{Job: j, By: by}, true, nil
		}
	}
	for _, j := range jobs {
		if p, ok := explicit[j.Name]; ok && p == prefix {
			cands = append(cands, j)
		}
	}
	if len(cands) == 0 {
		by = "name"
		for _, j := range jobs {
			if _, mapped := explicit[j.Name]; mapped {
				continue
			}
			if _, mapped := explicit[j.ID]; !mapped && hasWord(j.Name, prefix) {
				cands = append(cands, j)
			}
		}
	}
	if len(cands) == 0 {
		return FlinkMatch{}, false, nil
	}
	if names := distinctNames(cands); len(names) > 1 {
		return FlinkMatch{}, false, fmt.Errorf("several Flink jobs match prefix %q, %s: which one is its job is not known; name it with --flink-prefix JOB=%s (JOB a job's id or name)",
			prefix, strings.Join(names, " and "), prefix)
	}
	best := slices.MaxFunc(cands, func(a, b FlinkJob) int {
		return cmp.Or(cmp.Compare(rank(a.State), rank(b.State)), cmp.Compare(a.StartMs, b.StartMs))
	})
	return FlinkMatch{Job: best, By: by}, true, nil
}

// distinctNames are the different names among jobs, each with one of its
// ids, in their order.
func distinctNames(jobs []FlinkJob) []string {
	var names, seen []string
	for _, j := range jobs {
		if slices.Contains(seen, j.Name) {
			continue
		}
		seen = append(seen, j.Name)
		names = append(names, fmt.Sprintf("%q (%s)", j.Name, j.ID))
	}
	return names
}

// Ref is the job as verdicts, dialogs and the audit log name it.
func (f FlinkJob) Ref() string {
	return fmt.Sprintf("Flink job %q (%s, %s) at %s", f.Name, f.ID, f.State, f.Source)
}

func rank(state string) int {
	if FlinkRunning(state) {
		return 1
	}
	return 0
}

// hasWord reports whether word appears in s with no letter, digit, '-',
// '_' or '.' on either side: "orders" is in "sink orders (prod)", not in
// "orders-v2".
func hasWord(s, word string) bool {
	if word == "" {
		return false
	}
	inWord := func(r byte) bool {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.'
	}
	for i := 0; ; {
		k := strings.Index(s[i:], word)
		if k < 0 {
			return false
		}
		at, end := i+k, i+k+len(word)
		if (at == 0 || !inWord(s[at-1])) && (end == len(s) || !inWord(s[end])) {
			return true
		}
		i = at + 1
	}
}
