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
//
// Evidence that cannot be read, or tied to this job and this run, makes a
// verdict unknown, never a guess: a JobManager that does not answer, a name
// that several Flink jobs hold, a directory of several jobs' checkpoints, an
// entry that cannot be read, numbers of another run.

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
	Basis                   Basis
	// Exact: it rests on the committables a completed checkpoint holds,
	// read from the checkpoint itself; otherwise it is inferred from the
	// id's number, times and Flink's statistics, and its evidence says so.
	Exact bool
}

// Basis is what a verdict rests on: the Flink job a JobManager listed for
// the prefix, and the one job's checkpoint directory read. A request rests
// on the evidence read just before it, and on the same basis as the plan.
type Basis struct {
	// The Flink job ("" when no JobManager listed one): its JobManager,
	// id, name and state.
	FlinkURL, FlinkJobID, FlinkJobName, FlinkState string
	// JobManagers are the JobManagers asked, whether or not one listed
	// the job; NoFlink why none of them is taken at its word (one did not
	// answer, several jobs match the prefix): it holds for every
	// transaction of the job.
	JobManagers []string
	NoFlink     string
	// Dir is the job's checkpoint directory read ("" when none was
	// given, or none of the one given could be taken for the job's).
	Dir string
	// Committable is the transaction's own committable, found in a
	// checkpoint of Dir (nil: none).
	Committable *Committable
}

// Same reports whether b and o rest on the same Flink job and directory.
func (b Basis) Same(o Basis) bool {
	return b.FlinkURL == o.FlinkURL && b.FlinkJobID == o.FlinkJobID && b.Dir == o.Dir
}

// FlinkJob names the Flink job ("" when none).
func (b Basis) FlinkJob() string {
	if b.FlinkJobID == "" {
		return ""
	}
	return fmt.Sprintf("Flink job %q (%s, %s) at %s", b.FlinkJobName, b.FlinkJobID, b.FlinkState, b.FlinkURL)
}

// String says what b is, for a dialog, a prompt or a line of the plan.
func (b Basis) String() string {
	var parts []string
	switch {
	case b.FlinkJobID != "":
		parts = append(parts, b.FlinkJob())
	case len(b.JobManagers) > 0:
		parts = append(parts, "no Flink job listed by "+strings.Join(b.JobManagers, ", "))
	default:
		parts = append(parts, "no JobManager asked")
	}
	if b.Dir != "" {
		parts = append(parts, "checkpoints in "+b.Dir)
	}
	return strings.Join(parts, "; ")
}

// ClockMargin is how far apart the brokers' and the JobManager's clocks may
// be: a transaction that began within it of a checkpoint's trigger may
// belong to either checkpoint.
const ClockMargin = 2 * time.Second

// CheckpointFacts is what is known of a job's checkpoints at one read
// (FlinkView.Facts): from its JobManager and from its checkpoint directory.
type CheckpointFacts struct {
	// Flink is the Flink job a JobManager listed for the prefix (nil: none).
	Flink *FlinkMatch
	// NoFlink is why no JobManager's word may be taken although some were
	// asked: one did not answer (what a JobManager failing over looks
	// like), or several Flink jobs match the prefix. Every verdict is
	// unknown then.
	NoFlink string
	// Asked are the JobManagers asked.
	Asked []string
	// Retained is the prefix's --flink-checkpoints directory (nil: none).
	Retained *RetainedDir
}

// Facts is what v says of the Flink job whose sink writes with prefix.
func (v *FlinkView) Facts(prefix string) CheckpointFacts {
	var f CheckpointFacts
	if v == nil {
		return f
	}
	f.Asked = v.Sources
	// The match stands for what the jobs view shows of the job; with a
	// JobManager silent, no verdict rests on it (another job of the prefix
	// may be there).
	m, ok, err := MatchFlink(prefix, v.Jobs, v.Prefixes)
	switch {
	case err != nil:
		f.NoFlink = err.Error()
	case ok:
		f.Flink = &m
	}
	for i, e := range v.Errs {
		if e != "" && i < len(v.Sources) {
			f.NoFlink = fmt.Sprintf("the JobManager at %s did not answer (%s): whether the job runs, and what it checkpointed, is not known (if it is gone for good, leave out its --flink)",
				v.Sources[i], strings.TrimPrefix(e, v.Sources[i]+": "))
			break
		}
	}
	if r, ok := v.Retained[prefix]; ok {
		f.Retained = &r
	} else if r, ok := v.External[flinkJobID(f.Flink)]; ok && f.NoFlink == "" {
		// The ended job's own checkpoints, where Flink says they are.
		r = r.Only(prefix)
		r.FromFlink = true
		f.Retained = &r
	}
	return f
}

func flinkJobID(m *FlinkMatch) string {
	if m == nil {
		return ""
	}
	return m.Job.ID
}

func (f CheckpointFacts) given() bool {
	return f.Flink != nil || f.NoFlink != "" || f.Retained != nil
}

func (f CheckpointFacts) basis() Basis {
	b := Basis{JobManagers: f.Asked, NoFlink: f.NoFlink}
	if f.Flink != nil {
		fj := f.Flink.Job
		b.FlinkURL, b.FlinkJobID, b.FlinkJobName, b.FlinkState = fj.Source, fj.ID, fj.Name, fj.State
	}
	return b
}

// Verdicts says, for each open transaction of a Flink job, whether its
// checkpoint completed (nil for other families, or with nothing asked of
// the job).
func (j Job) Verdicts(f CheckpointFacts) []Verdict {
	if j.ID.Family != FlinkSink || !f.given() {
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

// VerdictOf is the verdict of t, one open transaction of Flink job j, as
// just re-read from its coordinator: what Verdicts would say of it.
func (j Job) VerdictOf(t Txn, f CheckpointFacts) Verdict {
	if j.ID.Family != FlinkSink {
		return Verdict{ID: t.ID, Kind: VerdictUnknown, Evidence: fmt.Sprintf("%s is not a Flink sink's transactional id", t.ID)}
	}
	o := openTxn{id: t.ID, checkpoint: JobOf(t.ID).Checkpoint, ending: t.State != Ongoing, pid: t.ProducerID, epoch: t.ProducerEpoch}
	if t.HasStart() {
		o.start = t.StartTime()
	}
	return j.verdict(o, f)
}

// judged is one source's answer: Flink's or the directory's. veto is set
// when the source could not be read or contradicts itself: the verdict is
// unknown whatever the other says.
type judged struct {
	kind        VerdictKind // "" when the source was not given
	checkpoint  int64
	completedIn int64
	evidence    string
	veto        bool
	dir         string
	committable *Committable
	exact       bool
}

func unknown(veto bool, format string, args ...any) judged {
	return judged{kind: VerdictUnknown, veto: veto, evidence: fmt.Sprintf(format, args...)}
}

func (j Job) verdict(o openTxn, f CheckpointFacts) Verdict {
	v := Verdict{ID: o.id, Kind: VerdictUnknown, Basis: f.basis()}
	if !j.Pooling && o.checkpoint > 0 {
		v.Checkpoint = o.checkpoint
	}
	switch {
	case o.ending:
		v.Evidence = "the coordinator is ending it already"
		return v
	case f.NoFlink != "":
		v.Evidence = f.NoFlink
		return v
	case f.Flink == nil && f.Retained == nil && len(f.Asked) > 0:
		v.Evidence = fmt.Sprintf("no Flink job listed by %s matches prefix %q (name it with --flink-prefix JOB=%s)", strings.Join(f.Asked, ", "), j.ID.Name, j.ID.Name)
		return v
	case f.Flink == nil && f.Retained == nil:
		v.Evidence = "no --flink or --flink-checkpoints to judge it by"
		return v
	}
	var fl, dir judged
	if f.Flink != nil {
		fl = j.byFlink(o, f.Flink.Job)
	}
	if f.Retained != nil {
		dir = j.byDir(o, f)
		v.Basis.Dir, v.Basis.Committable = dir.dir, dir.committable
	}
	if v.Checkpoint == 0 {
		v.Checkpoint = cmp.Or(fl.checkpoint, dir.checkpoint)
	}
	return combine(v, fl, dir)
}

// combine is the verdict from Flink's answer and the directory's: one that
// could not be read vetoes, two that disagree make it unknown. What the
// checkpoint itself holds comes first; Flink's statistics only infer.
func combine(v Verdict, fl, dir judged) Verdict {
	take := func(a judged) Verdict {
		v.Kind, v.CompletedIn, v.Evidence, v.Exact = a.kind, a.completedIn, a.evidence, a.exact
		if !a.exact && a.kind != VerdictUnknown {
			v.Evidence = "inferred: " + v.Evidence
		}
		return v
	}
	switch {
	case dir.veto:
		return take(dir)
	case fl.veto:
		return take(fl)
	case dir.kind == "":
		return take(fl)
	case fl.kind == "":
		return take(dir)
	case fl.kind == VerdictUnknown && dir.kind == VerdictUnknown:
		v.Evidence = fl.evidence + "; and " + dir.evidence
		return v
	case fl.kind == VerdictUnknown:
		return take(dir)
	case dir.kind == VerdictUnknown:
		return take(fl)
	case fl.kind != dir.kind:
		v.Evidence = fmt.Sprintf("Flink and the checkpoint directory disagree: %s; but %s", fl.evidence, dir.evidence)
		return v
	}
	v = take(dir)
	v.CompletedIn = cmp.Or(dir.completedIn, fl.completedIn)
	v.Evidence = dir.evidence + "; and " + fl.evidence
	return v
}

// byFlink judges o from what its JobManager says of job fj.
func (j Job) byFlink(o openTxn, fj FlinkJob) judged {
	switch {
	case fj.Err != "":
		return unknown(false, "Flink's checkpoint statistics could not be read: %s", fj.Err)
	case o.start.IsZero():
		return unknown(false, "the coordinator reports no start for it, so which run of the job it belongs to is not known")
	case fj.StartMs <= 0 || o.start.Before(time.UnixMilli(fj.StartMs).Add(-ClockMargin)):
		// Flink's statistics are of the run it lists: a transaction begun
		// before that run started belongs to an earlier one, whose
		// checkpoint numbers may mean other checkpoints (a fresh start
		// counts from 1).
		return unknown(false, "it began before the run Flink lists started: Flink's checkpoints are another run's")
	case !j.Pooling && o.checkpoint > 0:
		// INCREMENTING: the id's number is the checkpoint that pre-commits
		// it (observed on Flink 1.20 and 2.2: killed after checkpoint N
		// completed, the open ids are numbered N+1, and a restore from N
		// commits them with checkpoint N+1).
		r := j.byNumber(o.checkpoint, o.start, fj)
		r.checkpoint = o.checkpoint
		return r
	}
	return j.byTimes(o.start, fj)
}

// byNumber judges checkpoint n from what Flink says of it. Flink's
// committer keeps what a checkpoint pre-committed until a checkpoint
// completes, its own or, when its own failed, the next: so a transaction is
// in Flink's state once any checkpoint at or after its own completed (in
// its run), after it began.
func (j Job) byNumber(n int64, start time.Time, fj FlinkJob) judged {
	ended := FlinkEnded(fj.State)
	// Begun before the job's last restore: an earlier attempt's. The
	// restore brought back the committer's state of checkpoint R: what R
	// holds is Flink's (it commits it on restore), what came after R is not
	// and is replayed.
	if r := fj.Restored; r != nil && r.RestoreMs > 0 && start.Before(time.UnixMilli(r.RestoreMs).Add(-ClockMargin)) {
		if !fj.checkpointedBefore(r.RestoreMs) {
			// The first restore of a job started from a checkpoint: the
			// job's writers began after it, so what began before is not
			// theirs, and R's numbers may be another job's.
			return unknown(false, "it began before the job restored from checkpoint %d, and Flink lists no checkpoint of this job before that restore: the restored state is not known to hold it", r.ID)
		}
		if n <= r.ID {
			return judged{kind: Checkpointed, completedIn: r.ID, evidence: fmt.Sprintf(
				"it began before the job restored from checkpoint %d, which holds what checkpoint %d pre-committed (Flink commits it on restore)", r.ID, n)}
		}
		return judged{kind: NotCheckpointed, evidence: fmt.Sprintf(
			"it began before the job restored from checkpoint %d: checkpoint %d is not in the restored state, and Flink replays its records", r.ID, n)}
	}
	if l := fj.Latest; l != nil && l.ID >= n {
		switch {
		case l.AckMs <= 0:
			return unknown(true, "Flink does not say when checkpoint %d completed, so that it completed after this transaction began is not known", l.ID)
		case time.UnixMilli(l.AckMs).Before(start.Add(-ClockMargin)):
			// A checkpoint that completed before the transaction began
			// cannot hold it: the numbers are another run's (or another
			// job's).
			return unknown(true, "Flink's latest completed checkpoint, %d, completed at %s, before it began (%s): it cannot hold it, so Flink's numbers are another run's",
				l.ID, ClockMs(time.UnixMilli(l.AckMs)), ClockMs(start))
		}
		e := fmt.Sprintf("Flink (%s) says checkpoint %d completed", fj.Source, l.ID)
		if l.ID > n {
			e += fmt.Sprintf(", which holds what checkpoint %d pre-committed", n)
		}
		return judged{kind: Checkpointed, completedIn: l.ID, evidence: e}
	}
	for _, c := range fj.History {
		if c.ID == n && c.Status == "IN_PROGRESS" {
			return unknown(false, "Flink says checkpoint %d is in progress", n)
		}
	}
	switch {
	case fj.Latest != nil && j.NewestCommitted > fj.Latest.ID:
		return unknown(true, "a transaction of checkpoint %d is committed, but Flink's latest completed checkpoint is %d: Flink's numbers are another run's",
			j.NewestCommitted, fj.Latest.ID)
	case fj.Latest != nil && !ended:
		return judged{kind: NotCheckpointed, evidence: fmt.Sprintf(
			"Flink's latest completed checkpoint is %d; %d has not completed yet (the job is %s: it commits or aborts it)", fj.Latest.ID, n, fj.State)}
	case fj.Latest != nil:
		return judged{kind: NotCheckpointed, evidence: fmt.Sprintf(
			"Flink's latest completed checkpoint is %d and the job is %s: %d never completed", fj.Latest.ID, fj.State, n)}
	case fj.Completed == 0 && j.NewestCommitted >= n:
		return unknown(true, "a transaction of checkpoint %d is committed, but Flink reports no checkpoint completed in this run: Flink's numbers are another run's", j.NewestCommitted)
	case fj.Completed == 0:
		return judged{kind: NotCheckpointed, evidence: fmt.Sprintf("Flink reports no checkpoint completed in this run (the job is %s)", fj.State)}
	}
	return unknown(false, "Flink lists checkpoints but not the latest completed one")
}

// checkpointedBefore reports whether Flink's history shows a checkpoint of
// this job triggered before t (Unix ms): a restore after it is a failover
// of the job, not the first start from another run's checkpoint.
func (f FlinkJob) checkpointedBefore(t int64) bool {
	for _, c := range f.History {
		if c.TriggerMs > 0 && c.TriggerMs < t && !c.Savepoint {
			return true
		}
	}
	return false
}

// byTimes judges a transaction whose id carries no checkpoint (POOLING) by
// its start against the checkpoints' trigger times: the first checkpoint
// triggered after it began pre-committed it, and the first completed one
// from then on holds it.
func (j Job) byTimes(start time.Time, fj FlinkJob) judged {
	if len(fj.History) == 0 {
		return unknown(false, "its id names a slot, not a checkpoint, and Flink lists no checkpoint history")
	}
	hist := slices.Clone(fj.History)
	slices.SortFunc(hist, func(a, b FlinkCheckpoint) int { return cmp.Compare(a.TriggerMs, b.TriggerMs) })
	var r judged
	for _, c := range hist {
		trigger := time.UnixMilli(c.TriggerMs)
		if d := trigger.Sub(start); d > -ClockMargin && d < ClockMargin {
			return unknown(false, "it began within %s of checkpoint %d's trigger: the clocks cannot tell which checkpoint it belongs to", ClockMargin, c.ID)
		}
		if trigger.Before(start) {
			continue
		}
		if r.checkpoint == 0 {
			r.checkpoint = c.ID
		}
		switch c.Status {
		case "COMPLETED":
			r.kind, r.completedIn = Checkpointed, c.ID
			r.evidence = fmt.Sprintf("it began before checkpoint %d was triggered and is still open; Flink says %d completed", r.checkpoint, c.ID)
			return r
		case "IN_PROGRESS":
			r.kind, r.evidence = VerdictUnknown, fmt.Sprintf("checkpoint %d, triggered after it began, is in progress", c.ID)
			return r
		}
	}
	r.kind = NotCheckpointed
	if FlinkEnded(fj.State) {
		r.evidence = fmt.Sprintf("no checkpoint triggered after it began completed, and the job is %s", fj.State)
	} else {
		r.evidence = fmt.Sprintf("no checkpoint triggered since it began has completed (the job is %s: it commits or aborts it)", fj.State)
	}
	return r
}

// byDir judges o from the checkpoints of the job's directory: exactly,
// by the committable of the very transaction (its id, producer id and
// epoch) in a checkpoint's _metadata, never by a file's time or name alone.
func (j Job) byDir(o openTxn, f CheckpointFacts) judged {
	r := f.Retained
	if r.Err != "" {
		return unknown(true, "the checkpoint directory %s could not be read: %s", r.Dir, r.Err)
	}
	flinkJobID := ""
	if f.Flink != nil {
		flinkJobID = f.Flink.Job.ID
	}
	d, why := r.choose(o, flinkJobID, j.ID.Name)
	if d == nil {
		return why
	}
	out := j.inDir(o, *d, flinkJobID)
	if r.FromFlink && out.kind == VerdictUnknown {
		out.veto = true
	}
	out.dir = d.Dir
	return out
}

// choose is the one job's directory of r that o's verdict may rest on: the
// one whose checkpoint holds o's committable, else the one named for the
// Flink job, else the only one; otherwise why none can be chosen.
func (r *RetainedDir) choose(o openTxn, flinkJobID, prefix string) (*RetainedJob, judged) {
	for i := range r.Jobs {
		if cs := r.Jobs[i].Checkpoints; len(cs) > 0 && cs[len(cs)-1].Holds(o.id, o.pid, o.epoch) {
			return &r.Jobs[i], judged{}
		}
	}
	if flinkJobID != "" {
		for i := range r.Jobs {
			if r.Jobs[i].JobID == flinkJobID {
				return &r.Jobs[i], judged{}
			}
		}
	}
	var dirs []string
	for _, d := range r.Jobs {
		dirs = append(dirs, d.Dir)
	}
	switch {
	case len(r.Problems) > 0:
		return nil, unknown(true, "in %s, %s: the job's checkpoints may be there, so which of its directories is this job's is not known", r.Dir, problemList(r.Problems))
	case len(r.Jobs) == 1:
		return &r.Jobs[0], judged{}
	case len(r.Jobs) == 0:
		// Where Flink says its latest completed checkpoint is, none: Flink's
		// word is worth no more than the checkpoint.
		return nil, unknown(r.FromFlink, "%s holds no completed checkpoint (chk-N/_metadata, or <job id>/chk-N/_metadata)", r.Dir)
	}
	return nil, unknown(true, "%s holds the checkpoints of several jobs (%s) and none holds its committable: which is this job's is not known; give the job's own directory (--flink-checkpoints %s=%s)",
		r.Dir, strings.Join(dirs, ", "), prefix, dirs[0])
}

// inDir judges o from the completed checkpoints of one job's directory d,
// exactly: by the committables the newest holds, which is what Flink
// commits when it restores from it. Flink's committer keeps a committable
// in its state until the commit succeeds, so an open transaction that was
// ever checkpointed is in the newest completed checkpoint.
func (j Job) inDir(o openTxn, d RetainedJob, flinkJobID string) judged {
	if len(d.Problems) > 0 {
		return unknown(true, "in %s, %s: txnscope cannot read or understand it, so which checkpoints completed is not known", d.Dir, problemList(d.Problems))
	}
	if len(d.Checkpoints) == 0 {
		return unknown(false, "%s holds no completed checkpoint (chk-N/_metadata)", d.Dir)
	}
	newest := d.Checkpoints[len(d.Checkpoints)-1]
	switch {
	case len(newest.Committables) == 0:
		return unknown(false, "%s/chk-%d/_metadata holds no committable of %s: that it is this sink's checkpoint is not known",
			d.Dir, newest.N, j.ID.Name)
	case flinkJobID != "" && d.JobID != "" && d.JobID != flinkJobID:
		return unknown(false, "%s holds the checkpoints of job %s, and Flink lists job %s for %s", d.Dir, d.JobID, flinkJobID, j.ID.Name)
	}
	if cm, ok := newest.Find(o.id, o.pid, o.epoch); ok {
		return j.held(o, d.Dir, newest.N, cm)
	}
	for _, c := range d.Checkpoints[:len(d.Checkpoints)-1] {
		if cm, ok := c.Find(o.id, o.pid, o.epoch); ok {
			return unknown(true, "chk-%d holds %s, but the newest, chk-%d, does not: Flink's committer was done with it, yet it is open: %s is not as the job left it",
				c.N, cm, newest.N, d.Dir)
		}
	}
	same := ""
	if cm, ok := newest.Of(o.id); ok {
		why, veto := differs(cm, o)
		if veto {
			return unknown(true, "chk-%d: %s, and the open transaction of %s is pid %d epoch %d: %s", newest.N, cm, o.id, o.pid, o.epoch, why)
		}
		same = fmt.Sprintf(" (it holds %s: %s)", cm, why)
	}
	n := o.checkpoint
	switch {
	case j.Sequences != "" || j.Shared:
		return unknown(true, "chk-%d does not hold it, but its prefix looks shared by two jobs: that it is this directory's job's transaction is not known", newest.N)
	case !j.Pooling && n > 0 && newest.N >= n:
		return unknown(true, "%s/chk-%d, at or after its checkpoint %d, does not hold its committable (pid %d epoch %d)%s: the directory is another run's",
			d.Dir, newest.N, n, o.pid, o.epoch, same)
	case !j.Pooling && j.NewestCommitted > newest.N:
		return unknown(true, "a transaction of checkpoint %d is committed, but the newest checkpoint in %s is chk-%d: the directory is out of date or another run's",
			j.NewestCommitted, d.Dir, newest.N)
	}
	held := fmt.Sprintf("holds %d %s of %s, not %s pid %d epoch %d%s", len(newest.Committables), plural(len(newest.Committables), "committable", "committables"),
		j.ID.Name, o.id, o.pid, o.epoch, same)
	if !j.Pooling && n > 0 {
		return judged{kind: NotCheckpointed, exact: true, checkpoint: n, evidence: fmt.Sprintf(
			"the newest completed checkpoint in %s is chk-%d, before its own (%d), and %s: checkpoint %d had not completed when the directory was read",
			d.Dir, newest.N, n, held, n)}
	}
	return judged{kind: NotCheckpointed, exact: true, evidence: fmt.Sprintf(
		"the newest completed checkpoint in %s, chk-%d, %s: its checkpoint had not completed when the directory was read", d.Dir, newest.N, held)}
}

// held is the verdict on o, whose committable cm the newest completed
// checkpoint n of dir holds.
func (j Job) held(o openTxn, dir string, n int64, cm Committable) judged {
	switch {
	case cm.Finished:
		return unknown(true, "chk-%d: %s is marked committed or failed by Flink's committer, yet it is open: Flink does not commit it on restore", n, cm)
	case !j.Pooling && o.checkpoint > 0 && cm.Checkpoint > 0 && cm.Checkpoint != o.checkpoint:
		return unknown(true, "chk-%d: %s was pre-committed for checkpoint %d, but its id counts checkpoint %d: these are not the checkpoints its id counts", n, cm, cm.Checkpoint, o.checkpoint)
	case !j.Pooling && o.checkpoint > n:
		return unknown(true, "chk-%d holds %s, but its id counts checkpoint %d, after it: these are not the checkpoints its id counts", n, cm, o.checkpoint)
	}
	c := cm
	r := judged{kind: Checkpointed, completedIn: n, committable: &c, exact: true}
	r.checkpoint = cm.Checkpoint
	if r.checkpoint == 0 && !j.Pooling {
		r.checkpoint = o.checkpoint
	}
	pre := ""
	if cm.Checkpoint > 0 {
		pre = fmt.Sprintf(", pre-committed for checkpoint %d", cm.Checkpoint)
	}
	r.evidence = fmt.Sprintf("chk-%d: %s%s (%s/chk-%d/_metadata): Flink commits it when restored from that checkpoint", n, cm, pre, dir, n)
	return r
}

// differs says how the committable cm a checkpoint holds for o's id tells
// from o, the open transaction of that id, and whether that makes the
// directory's word on o worthless (veto).
func differs(cm Committable, o openTxn) (why string, veto bool) {
	const left = "The checkpointed transaction is no longer open, so nothing of it is left to commit; the open one is not in the checkpoint: " +
		"leave it to the job, or abort it once the job is known gone for good"
	switch {
	case RotatedAway(&cm, o.pid):
		return fmt.Sprintf("the coordinator has since rotated %s to producer id %d: pid %d's epochs ran out at %d under transaction version 2 "+
			"(FLINK-40689: a restore from this checkpoint fails to commit it). %s", cm.ID, o.pid, cm.ProducerID, EpochRotatesAt, left), true
	case cm.ProducerID != o.pid:
		return "another producer id: the id expired and came back, or the coordinator gave it a new one when its epochs ran out. " + left, true
	case cm.Epoch > o.epoch:
		return "the checkpoint holds a later transaction of the id than the open one, which is not in it: the directory is not of the run that began it", true
	}
	return "the id's earlier transaction: the open one began after it", false
}

// problemList names the first few problems, and how many more there are.
func problemList(ps []string) string {
	const show = 3
	if len(ps) <= show {
		return strings.Join(ps, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(ps[:show], "; "), len(ps)-show)
}
