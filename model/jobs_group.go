package model

import (
	"cmp"
	"slices"
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
				u = &Unit{Name: m.Unit, Subtask: m.Subtask, NewestCheckpoint: -1, NewestCommitted: -1}
				a.units[m.Unit] = u
			}
		}
		u.add(t, m.Checkpoint, open, committed)
	}
	for _, p := range pins {
		if !p.HasOwner || !p.Blocking {
			continue
		}
		if a := byJob[JobOf(p.Owner.ID).Job]; a != nil {
			a.pin(p)
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
	u.NewestCheckpoint = max(u.NewestCheckpoint, checkpoint)
	if committed {
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
		o := openTxn{id: t.ID, checkpoint: checkpoint}
		if t.HasStart() {
			o.start = t.StartTime()
			if t.TimeoutMs > 0 {
				o.deadline = o.start.Add(t.Timeout())
			}
		}
		u.open = append(u.open, o)
	}
}

func (a *jobAcc) pin(p Pin) {
	jp := JobPin{TopicPartition: p.TopicPartition, ID: p.Owner.ID}
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
		slices.Sort(u.Open)
		slices.SortFunc(u.open, func(a, b openTxn) int { return strings.Compare(a.id, b.id) })
		j.NewestCheckpoint = max(j.NewestCheckpoint, u.NewestCheckpoint)
		j.Units = append(j.Units, *u)
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
		w := jl.window(now)
		j.Commits5m, j.Aborts5m, j.Fences5m = w.commits, w.aborts, w.fences
	}
	j.LastCommit = latest(j.LastCommit, h.baselineCommit(j.committedID))
	if j.ID.Family == FlinkSink && h != nil {
		j.Takeovers, j.Shared = Collision(h.prefixes[j.ID.Name], now)
	}
	var cadences []time.Duration
	for i := range j.Units {
		u := &j.Units[i]
		u.Lingering = nil
		if ul := jl.unit(u.Name); ul != nil {
			u.LastCommit = ul.lastCommit
			u.Cadence = ul.cadence
			if j.ID.Family == FlinkSink {
				if ul.newestCommitted >= u.NewestCommitted {
					u.newestCommittedAt = ul.newestCommittedAt
				}
				u.NewestCommitted = max(u.NewestCommitted, ul.newestCommitted)
			}
		}
		u.LastCommit = latest(u.LastCommit, h.baselineCommit(u.committedID))
		j.LastCommit = latest(j.LastCommit, u.LastCommit)
		j.NewestCommitted = max(j.NewestCommitted, u.NewestCommitted)
		if u.Cadence > 0 {
			cadences = append(cadences, u.Cadence)
		}
		if !u.LastCommit.IsZero() && (j.SlowestUnit == "" || u.LastCommit.Before(j.SlowestCommit)) {
			j.SlowestUnit, j.SlowestCommit = u.Name, u.LastCommit
		}
	}
	j.Cadence = median(cadences)
	for i := range j.Units {
		j.lingerAndBehind(&j.Units[i])
	}
	slices.Sort(j.Lingering)
	return j
}

// lingerAndBehind applies the lingering and the behind rules to u, once
// the job's newest committed checkpoint is known.
func (j *Job) lingerAndBehind(u *Unit) {
	if j.ID.Family != FlinkSink {
		return
	}
	u.Behind = u.NewestCommitted >= 0 && j.NewestCommitted-u.NewestCommitted >= behindBy
	for _, o := range u.open {
		if o.checkpoint >= u.NewestCommitted {
			continue
		}
		// Begun after the newest checkpoint committed: a run restored from
		// an earlier checkpoint (a savepoint) reusing its ids, not what a
		// crashed attempt left open, which began before that commit.
		if !u.newestCommittedAt.IsZero() && !o.start.IsZero() && o.start.After(u.newestCommittedAt) {
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
