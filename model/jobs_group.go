package model

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Grouping is what the snapshot alone says of its jobs: the ids grouped,
// their subtasks, checkpoints, open transactions and the partitions they
// pin. It is a pass over every id, so the TUI works it out off the UI
// goroutine, with the refresh; Jobs then adds History's figures for the
// price of a look-up per job and subtask. It is never changed once made.
type Grouping struct {
	jobs []Job
	// Flink is what the JobManagers said (nil: no --flink); Jobs matches
	// each Flink sink's prefix to its Flink job in it.
	Flink *FlinkView
}

type jobAcc struct {
	job   Job
	units map[string]*Unit
}

// Group groups s's ids into jobs; pins are s's pinned partitions (PinsOf).
// Whether a checkpoint is committed is the snapshot's word (its state, or
// the log's outcome on a cluster that shows Empty after a commit): a Flink
// id is committed once and keeps that state until it expires.
func Group(s *Snapshot, pins []Pin) *Grouping {
	g := &Grouping{}
	if s == nil {
		return g
	}
	byJob := map[JobID]*jobAcc{}
	// Ids come sorted, so a job's subtask's ids mostly follow each other:
	// the last job and unit save two map look-ups an id.
	var a *jobAcc
	var u *Unit
	var memo memberMemo
	for i := range s.Txns {
		t := &s.Txns[i]
		m := memo.of(t.ID)
		if a == nil || a.job.ID != m.Job {
			a, u = byJob[m.Job], nil
			if a == nil {
				a = &jobAcc{job: Job{ID: m.Job, NewestCheckpoint: -1, NewestCommitted: -1}, units: map[string]*Unit{}}
				byJob[m.Job] = a
			}
		}
		open := t.State.Open()
		committed := t.State == CompleteCommit || (!open && t.Outcome() == CompleteCommit)
		a.add(t, open, committed)
		if m.Unit == "" {
			continue
		}
		if u == nil || u.Name != m.Unit {
			u = a.units[m.Unit]
			if u == nil {
				u = &Unit{Name: m.Unit, Subtask: m.Subtask, NewestCheckpoint: -1, NewestCommitted: -1, nextNewest: -1}
				a.units[m.Unit] = u
			}
		}
		u.add(t, m.Checkpoint, open, committed)
	}
	for _, a := range byJob {
		if a.job.ID.Family == FlinkSink {
			a.predecessors(s)
		}
	}
	for _, p := range pins {
		if !p.HasOwner || !p.Blocking {
			continue
		}
		if a := byJob[JobOf(p.Owner.ID).Job]; a != nil {
			a.pin(p)
		}
	}
	for k, ms := range s.UnitCommits {
		if a := byJob[k.Job]; a != nil {
			if u := a.units[k.Unit]; u != nil {
				u.logCommit = time.UnixMilli(ms)
			}
		}
	}
	g.jobs = make([]Job, 0, len(byJob))
	for _, a := range byJob {
		g.jobs = append(g.jobs, a.done())
	}
	return g
}

func (a *jobAcc) add(t *Txn, open, committed bool) {
	j := &a.job
	j.IDs++
	if t.TimeoutMs > 0 {
		if j.MinTimeoutMs == 0 || t.TimeoutMs < j.MinTimeoutMs {
			j.MinTimeoutMs = t.TimeoutMs
		}
		j.MaxTimeoutMs = max(j.MaxTimeoutMs, t.TimeoutMs)
	}
	if committed && j.committedID == "" {
		j.committedID = t.ID
	}
	if open {
		j.Open = append(j.Open, t.ID)
		if j.Oldest.ID == "" || t.StartUnixMs < j.Oldest.StartUnixMs {
			j.Oldest = *t
		}
	}
}

func (u *Unit) add(t *Txn, checkpoint int64, open, committed bool) {
	u.IDs++
	if t.Described && (u.topEpoch.ID == "" || t.ProducerEpoch > u.topEpoch.ProducerEpoch) {
		u.topEpoch = Txn{ID: t.ID, ProducerID: t.ProducerID, ProducerEpoch: t.ProducerEpoch}
	}
	switch {
	case checkpoint > u.NewestCheckpoint:
		u.nextNewest, u.NewestCheckpoint = u.NewestCheckpoint, checkpoint
	case checkpoint < u.NewestCheckpoint && checkpoint > u.nextNewest:
		u.nextNewest = checkpoint
	}
	// Empty at any epoch: Flink's probes initialize ids again and again
	// (two jobs on one prefix made 651 in 40s), never writing.
	if t.State != Empty || committed || t.Outcome() != NoState {
		u.held = true
		u.zeroSlot = u.zeroSlot || checkpoint == 0
	}
	if committed {
		u.committedStart = max(u.committedStart, t.StartUnixMs)
		if u.committedID == "" || checkpoint > u.NewestCommitted {
			u.committedID = t.ID
		}
		u.NewestCommitted = max(u.NewestCommitted, checkpoint)
	}
	if open {
		u.Open = append(u.Open, t.ID)
		if u.Oldest.ID == "" || t.StartUnixMs < u.Oldest.StartUnixMs {
			u.Oldest = *t
		}
		o := openTxn{id: t.ID, checkpoint: checkpoint, ending: t.State != Ongoing, pid: t.ProducerID, epoch: t.ProducerEpoch}
		if t.HasStart() {
			o.start = t.StartTime()
			if t.TimeoutMs > 0 {
				o.deadline = o.start.Add(t.Timeout())
			}
		}
		u.open = append(u.open, o)
	}
}

// probe reports whether u is no subtask but Flink's probe ids: none of its
// ids holds or held a transaction. A subtask with no records to write (a
// rescale to more subtasks than the source has splits) is alike, but gets a
// new id every checkpoint: once it has two in a row, up to the job's
// newest, it counts as a subtask; a probe gets one id a restore.
func (u *Unit) probe(newest int64) bool {
	return !u.held && (u.nextNewest != u.NewestCheckpoint-1 || u.NewestCheckpoint < newest-1)
}

// predecessors marks the open transactions whose previous checkpoint's id
// is committed: one look-up per open transaction, not per id.
func (a *jobAcc) predecessors(s *Snapshot) {
	for _, u := range a.units {
		for i := range u.open {
			o := &u.open[i]
			if o.checkpoint < 1 {
				continue
			}
			id := o.id[:strings.LastIndexByte(o.id, '-')+1] + strconv.FormatInt(o.checkpoint-1, 10)
			if t, ok := s.Txn(id); ok {
				o.predCommitted = t.State == CompleteCommit || (!t.State.Open() && t.Outcome() == CompleteCommit)
			}
		}
	}
}

func (a *jobAcc) pin(p Pin) {
	jp := JobPin{TopicPartition: p.TopicPartition, ID: p.Owner.ID, LastWriteMs: p.Pinner.LastWriteMs, StartMs: p.Owner.StartUnixMs}
	for _, g := range p.Stuck {
		jp.Groups = append(jp.Groups, g.Group)
		if !slices.Contains(a.job.StuckGroups, g.Group) {
			a.job.StuckGroups = append(a.job.StuckGroups, g.Group)
		}
	}
	a.job.Pinned = append(a.job.Pinned, jp)
}

// done is the job with its units in order.
func (a *jobAcc) done() Job {
	j := a.job
	for _, u := range a.units {
		if j.ID.Family == FlinkSink {
			j.Pooling = j.Pooling || u.zeroSlot
		}
		slices.Sort(u.Open)
		slices.SortFunc(u.open, func(a, b openTxn) int { return strings.Compare(a.id, b.id) })
		j.NewestCheckpoint = max(j.NewestCheckpoint, u.NewestCheckpoint)
		j.Units = append(j.Units, *u)
	}
	if j.ID.Family == FlinkSink {
		for i := range j.Units {
			j.Units[i].Probe = j.Units[i].probe(j.NewestCheckpoint)
		}
	}
	slices.SortFunc(j.Units, func(a, b Unit) int {
		return cmp.Or(cmp.Compare(a.Subtask, b.Subtask), strings.Compare(a.Name, b.Name))
	})
	slices.Sort(j.Open)
	slices.SortFunc(j.Pinned, func(a, b JobPin) int {
		if a.TopicPartition == b.TopicPartition {
			return 0
		}
		if a.TopicPartition.Less(b.TopicPartition) {
			return -1
		}
		return 1
	})
	slices.Sort(j.StuckGroups)
	return j
}

// Jobs are g's jobs with what h saw of them (h may be nil), most urgent
// first: lingering transactions, then the oldest open transaction's share
// of its timeout, then the name. The work is per job and subtask, not per
// id: History keeps its figures per job as the events come (jobLog).
func (g *Grouping) Jobs(h *History, now time.Time) []Job {
	if g == nil {
		return nil
	}
	out := make([]Job, len(g.jobs))
	for i := range g.jobs {
		out[i] = g.jobs[i].withHistory(h, now)
		if out[i].ID.Family == FlinkSink && g.Flink != nil {
			facts := g.Flink.Facts(out[i].ID.Name)
			out[i].Flink, out[i].FlinkNote = facts.Flink, facts.NoFlink
			out[i].OpenVerdicts = out[i].Verdicts(facts)
		}
	}
	// A Flink job's commits under each of the prefixes it is matched to:
	// one that commits under another prefix than this one's runs on there.
	byFlink := map[string][]int{}
	for i := range out {
		if f := out[i].Flink; f != nil && f.Job.ID != "" {
			byFlink[f.Job.ID] = append(byFlink[f.Job.ID], i)
		}
	}
	for i := range out {
		var elsewhere time.Time
		if f := out[i].Flink; f != nil && FlinkRunning(f.Job.State) {
			for _, k := range byFlink[f.Job.ID] {
				if k != i {
					elsewhere = latest(elsewhere, out[k].LastCommit)
				}
			}
		}
		out[i].findOrphans(now, elsewhere)
	}
	slices.SortFunc(out, func(a, b Job) int {
		if c := cmp.Compare(len(b.Lingering), len(a.Lingering)); c != 0 {
			return c
		}
		ra, _ := a.Oldest.Ratio(now)
		rb, _ := b.Oldest.Ratio(now)
		if c := cmp.Compare(rb, ra); c != 0 {
			return c
		}
		return cmp.Or(strings.Compare(string(a.ID.Family), string(b.ID.Family)), strings.Compare(a.ID.Name, b.ID.Name))
	})
	return out
}

// behindBy is how many checkpoints a subtask's newest commit may trail the
// job's before it is "behind": one is the checkpoint committing right now.
const behindBy = 2

// withHistory is j, shared with the Grouping and so copied where written,
// with h's figures, the lingering rule and the slowest subtask.
func (j Job) withHistory(h *History, now time.Time) Job {
	jl := h.jobLog(j.ID)
	j.Units = slices.Clone(j.Units)
	j.Lingering = nil
	if jl != nil {
		j.LastCommit = jl.lastCommit
		j.LastActive = latest(jl.lastCommit, jl.lastEnded)
		j.LastLoss = jl.lastLoss
		w := jl.window(now)
		j.Commits5m, j.Aborts5m, j.Fences5m, j.Timeouts5m, j.LossMinutes = w.commits, w.aborts, w.fences, w.timeouts, w.lossMinutes
		j.QuietEnds, j.QuietSince = jl.quietEnds, jl.quietSince
		j.LossRounds = jl.lossRounds(now)
	}
	j.LastCommit = latest(j.LastCommit, h.baselineCommit(j.committedID))
	if j.ID.Family == FlinkSink && h != nil {
		j.Takeovers, j.Shared = Collision(h.prefixes[j.ID.Name], now)
	}
	var cadences []time.Duration
	for i := range j.Units {
		u := &j.Units[i]
		u.Lingering = nil
		ul := jl.unit(u.Name)
		if ul != nil {
			u.LastCommit = ul.lastCommit
			u.Cadence = ul.cadence
			if j.ID.Family == FlinkSink && !j.Pooling {
				if ul.newestCommitted >= u.NewestCommitted {
					u.newestCommittedAt = ul.newestCommittedAt
				}
				u.NewestCommitted = max(u.NewestCommitted, ul.newestCommitted)
			}
		}
		u.LastCommit = latest(latest(u.LastCommit, h.baselineCommit(u.committedID)), u.logCommit)
		j.LastCommit = latest(j.LastCommit, u.LastCommit)
		u.LastActive = u.LastCommit
		if ul != nil {
			u.LastActive = latest(u.LastActive, ul.lastEnded)
			u.LastLoss, u.FirstSeen = ul.lastLoss, ul.first
		}
		for _, o := range u.open {
			u.LastActive = latest(u.LastActive, o.start)
		}
		j.LastActive = latest(j.LastActive, u.LastActive)
		j.LastLoss = latest(j.LastLoss, u.LastLoss)
		if !j.Pooling {
			j.NewestCommitted = max(j.NewestCommitted, u.NewestCommitted)
		}
		if u.Cadence > 0 {
			cadences = append(cadences, u.Cadence)
		}
		if u.topEpoch.ID != "" {
			if o := OutlookOf(u.topEpoch, h.Stats(u.topEpoch.ID).Finished()); o.Sooner(j.Epoch) {
				j.Epoch = o
			}
		}
		if !u.LastCommit.IsZero() && (j.SlowestUnit == "" || u.LastCommit.Before(j.SlowestCommit)) {
			j.SlowestUnit, j.SlowestCommit = u.Name, u.LastCommit
		}
	}
	j.Cadence = median(cadences)
	j.Tasks = 0
	j.committedStart = 0
	for _, u := range j.Units {
		j.committedStart = max(j.committedStart, u.committedStart)
	}
	for i := range j.Units {
		u := &j.Units[i]
		j.lingerAndBehind(u, now)
		// Under POOLING a subtask always has a slot open (the next
		// transaction begins at the barrier, before the last commits):
		// one with none, whose last commit began well before the job's,
		// writes no more (a rescale to fewer subtasks, Flink 2.2 left
		// subtask 1's ids idle when restored 3 → 2).
		if j.Pooling && j.ID.Family == FlinkSink && !u.Probe && len(u.open) == 0 && j.retiredSlots(*u) {
			u.Retired = true
		}
		if !u.Probe && !u.Retired {
			j.Tasks++
		}
	}
	slices.Sort(j.Lingering)
	j.Shared = j.Shared || j.poolsFence(now)
	j.streamsStuck(now)
	return j
}

// retiredSlots: the job committed a transaction begun (the coordinators'
// log gives committed starts) or committed (History's commits, which polls
// see) longer than a live transaction lasts after u's last one.
func (j *Job) retiredSlots(u Unit) bool {
	live := j.liveFor()
	return u.committedStart > 0 && time.Duration(j.committedStart-u.committedStart)*time.Millisecond > live ||
		!u.LastCommit.IsZero() && j.LastCommit.Sub(u.LastCommit) > live
}

// lingerAndBehind applies the lingering, the behind and the retired rules
// to u, once the job's newest committed checkpoint is known. Under POOLING
// the numbers are slots, which say nothing of order: only the lingering
// rule's evidence from start times applies.
func (j *Job) lingerAndBehind(u *Unit, now time.Time) {
	if j.ID.Family != FlinkSink || u.Probe {
		return
	}
	if !j.Pooling && u.NewestCommitted >= 0 && j.NewestCommitted-u.NewestCommitted >= behindBy {
		u.Behind = len(u.open) > 0
		u.Retired = len(u.open) == 0
	}
	two := j.twoSequences(u)
	if two && j.Sequences == "" {
		j.Sequences = j.liveSequences(u, now)
		j.Shared = j.Shared || j.Sequences != ""
	}
	for _, o := range u.open {
		// With no cadence known (one look) liveFor is a guess: another job
		// on the prefix may checkpoint slower than it, and only silence
		// tells its live transaction from a leftover.
		if !j.nobodyDrives(u, o, now) || two && o.predCommitted && j.Cadence == 0 && !j.silent(o.id, now) {
			continue
		}
		u.Lingering = append(u.Lingering, o.id)
		j.Lingering = append(j.Lingering, o.id)
		if o.deadline.IsZero() {
			continue
		}
		if j.LingeringFrom.IsZero() || o.deadline.Before(j.LingeringFrom) {
			j.LingeringFrom = o.deadline
		}
		j.LingeringUntil = latest(j.LingeringUntil, o.deadline)
	}
}

// nobodyDrives reports whether the evidence says no producer drives o any
// more (the lingering rule). A subtask commits its transactions in order,
// so one that began after o and committed means o was left behind; and o
// must be older than a live transaction of the job gets (liveFor).
func (j *Job) nobodyDrives(u *Unit, o openTxn, now time.Time) bool {
	if o.start.IsZero() || now.Sub(o.start) < j.liveFor() {
		return false
	}
	if u.committedStart > 0 {
		return o.start.UnixMilli() < u.committedStart
	}
	if j.Pooling || o.checkpoint >= u.NewestCommitted {
		return false
	}
	// Begun after the newest checkpoint committed: a run restored from
	// an earlier checkpoint (a savepoint) reusing its ids, not what a
	// crashed attempt left open, which began before that commit.
	return u.newestCommittedAt.IsZero() || o.start.Before(u.newestCommittedAt)
}

// liveFor is how old a transaction of the job gets while a producer drives
// it: it commits when the next checkpoint completes, so a few times the
// job's commit cadence (a slow checkpoint stretches one), and never less
// than minLive; with no cadence known, minNotCommitting. The age itself is
// the coordinator's, to the millisecond, not a poll's.
func (j *Job) liveFor() time.Duration {
	if j.Cadence > 0 {
		return max(3*j.Cadence, minLive)
	}
	return minNotCommitting
}

// minLive is the least liveFor with a cadence known.
const minLive = 10 * time.Second

// silent reports whether the producer of id's open transaction has written
// nothing for longer than liveFor, where it pins a partition (the brokers
// say when a producer last wrote only there): no pin of it says live, and
// one at least says silent (pinSilence).
func (j *Job) silent(id string, now time.Time) bool {
	said := false
	for _, p := range j.Pinned {
		if p.ID != id {
			continue
		}
		switch j.pinSilence(p, now) {
		case -1:
			return false
		case 1:
			said = true
		}
	}
	return said
}

// pinSilence is what p says of its producer: -1 it wrote within liveFor,
// 1 it has not since, 0 nothing. A last write within sameAsStart of the
// transaction's start says nothing: kfake reports the start as the last
// write of every producer (the demo's backfill, writing every 10s, looked
// silent), and a real one that wrote a single batch there looks alike (a
// Flink subtask killed a second in had one partition so).
func (j *Job) pinSilence(p JobPin, now time.Time) int {
	switch {
	case p.LastWriteMs <= 0:
		return 0
	case now.Sub(time.UnixMilli(p.LastWriteMs)) < j.liveFor():
		return -1
	case p.StartMs > 0 && p.LastWriteMs-p.StartMs < sameAsStart.Milliseconds():
		return 0
	}
	return 1
}

// sameAsStart: see silent.
const sameAsStart = 50 * time.Millisecond

// liveSequences says which checkpoints u has open far apart, each younger
// than a live transaction of the job gets: two runs, both writing, on one
// subtask's ids ("" when not).
func (j *Job) liveSequences(u *Unit, now time.Time) string {
	var live []int64
	for _, o := range u.open {
		if o.start.IsZero() || now.Sub(o.start) >= j.liveFor() {
			continue
		}
		live = append(live, o.checkpoint)
	}
	lo, hi, ok := widestGap(live)
	if !ok {
		return ""
	}
	return fmt.Sprintf("subtask %s writes checkpoints %d and %d at once", u.Name, lo, hi)
}

// widestGap finds the widest gap between the checkpoints cps (any order):
// ok when it is wider than behindBy, lo and hi the checkpoints either side
// of it. A subtask whose commits lag has its open checkpoints one after
// another, however many; two runs on one prefix leave a gap between
// theirs.
func widestGap(cps []int64) (lo, hi int64, ok bool) {
	if len(cps) < 2 {
		return 0, 0, false
	}
	cps = slices.Clone(cps)
	slices.Sort(cps)
	for i := 1; i < len(cps); i++ {
		if g := cps[i] - cps[i-1]; g > behindBy && (!ok || g > hi-lo) {
			lo, hi, ok = cps[i-1], cps[i], true
		}
	}
	return lo, hi, ok
}

// twoSequences reports whether u has transactions open on checkpoints too
// far apart for one job, with a gap between them (widestGap: a subtask
// whose commits lag has them one after another): the same subtask of two
// jobs on one prefix, each of which commits side by side with the other
// (real Flink: about 11 checkpoints apart), or transactions a crashed run
// left. An old one that goes on from a committed checkpoint (predCommitted)
// may then be the other job's live transaction, when its checkpoints are
// far apart and no cadence is known: only its producer's silence says it
// is not.
func (j *Job) twoSequences(u *Unit) bool {
	if j.Pooling || len(u.open) < 2 {
		return false
	}
	cps := make([]int64, len(u.open))
	for i, o := range u.open {
		cps[i] = o.checkpoint
	}
	_, _, ok := widestGap(cps)
	return ok
}

// LingeringPins are the job's pinned partitions held by its lingering
// transactions.
func (j *Job) LingeringPins() []JobPin {
	var out []JobPin
	for _, p := range j.Pinned {
		if slices.Contains(j.Lingering, p.ID) {
			out = append(out, p)
		}
	}
	return out
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// median is the middle of ds (the lower of the two middles), 0 for none.
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return ds[(len(ds)-1)/2]
}

// memberMemo is JobOf for ids in sorted order: the ids of one Flink
// subtask follow each other, and an id that starts with the previous Flink
// id's "<prefix>-<subtask>-" and goes on with digits only is of the same
// subtask (JobOf would split it at the same dashes and find the same
// prefix no Streams id), so only its checkpoint is read.
type memberMemo struct {
	head string // the previous Flink id up to its last dash, "" when none
	m    Member
}

func (mm *memberMemo) of(id string) Member {
	if mm.head != "" && len(id) > len(mm.head) && id[:len(mm.head)] == mm.head {
		if cp, ok := checkpointOf(id[len(mm.head):]); ok {
			m := mm.m
			m.Checkpoint = cp
			return m
		}
	}
	m := JobOf(id)
	mm.head = ""
	if m.Job.Family == FlinkSink {
		mm.head, mm.m = id[:strings.LastIndexByte(id, '-')+1], m
	}
	return m
}

// checkpointOf reads s, digits only, as ParseFlinkID does; ok is false for
// anything else, and for numbers that might not fit (left to JobOf).
func checkpointOf(s string) (int64, bool) {
	if s == "" || len(s) > 18 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}
