package model

import (
	"cmp"
	"slices"
	"time"
)

// jobLog is what History keeps per job of the outcomes it is told, as they
// come: the jobs view's figures would otherwise take a pass over every id
// at each refresh (100,000 Flink ids, when a key may wait 50 ms).
type jobLog map[JobID]*jobOutcomes

type jobOutcomes struct {
	lastCommit time.Time
	// lastEnded is the last Ended event: a transaction that ended and
	// another that began between two polls, whose outcome was not seen (a
	// Streams thread commits every second, polls come every 2): its
	// producer is alive. lastLoss is the last timeout or fence.
	lastEnded, lastLoss time.Time
	// quietEnds counts the transactions that ended other than by a commit
	// or a timeout since the last commit: a turnover that commits nothing
	// (the POOLING shared-prefix rule), the first of them at quietSince.
	quietEnds  int
	quietSince time.Time
	// lossy names the units with loss rounds (unitOutcomes.rounds).
	lossy []string
	// mins are the minutes with outcomes, oldest first, none Window5m
	// older than the newest.
	mins  []jobMinute
	units map[string]*unitOutcomes
}

// jobMinute is one minute of a job's outcomes; min is Unix minutes.
type jobMinute struct {
	min                               int32
	commits, aborts, fences, timeouts int32
}

type unitOutcomes struct {
	lastCommit time.Time
	// lastEnded and lastLoss as jobOutcomes'; first is its first event,
	// to tell a process started after another stopped (Streams).
	lastEnded, lastLoss, first time.Time
	// newestCommitted is the newest checkpoint seen committed (-1: none).
	newestCommitted int64
	// newestCommittedAt is when newestCommitted committed (the latest, if
	// an id was reused).
	newestCommittedAt time.Time
	// commits are the last cadenceCommits commit times, Unix ms, oldest
	// first; cadence is the median gap between them (0: too few).
	commits []int64
	cadence time.Duration
	// rounds are when the unit lost a transaction (a timeout or a fence)
	// that began after its previous loss, within Window5m of the newest:
	// the job ran again and lost again (the crash-loop rule).
	rounds []time.Time
}

// The commit cadence, which the "not committing" problem falls back on
// when the checkpoint interval is not given: the median of the gaps between
// a subtask's last cadenceCommits commits, once minCadenceGaps of them are
// known; gaps of 0 (two commits reported by one poll) tell nothing and are
// left out. The job's cadence is the median of its subtasks'.
const (
	cadenceCommits = 16
	minCadenceGaps = 2
)

// fence reports whether k is an abort another producer made; a timeout,
// the coordinator's own abort, is counted apart: a SIGTERM-stopped job's
// transactions time out, and nobody fenced them.
func fence(k EventKind) bool { return k == Fenced || k == ForceTerminated }

// add records e, an event that ends a transaction (or Ended: one whose
// outcome is not known).
func (l *jobLog) add(e Event) {
	m := JobOf(e.ID)
	if *l == nil {
		*l = jobLog{}
	}
	jo := (*l)[m.Job]
	if jo == nil {
		jo = &jobOutcomes{units: map[string]*unitOutcomes{}}
		(*l)[m.Job] = jo
	}
	switch {
	case e.Kind == Committed:
		jo.quietEnds, jo.quietSince = 0, time.Time{}
	case e.Kind != TimedOut:
		if jo.quietEnds == 0 {
			jo.quietSince = e.At
		}
		jo.quietEnds++
	}
	if e.Kind == Ended {
		jo.lastEnded = latest(jo.lastEnded, e.At)
		if m.Unit != "" {
			uo := jo.own(m.Unit, e.At)
			uo.lastEnded = latest(uo.lastEnded, e.At)
		}
		return // no outcome: nothing to count
	}
	jo.count(minuteOf(e.At), e.Kind)
	if e.Kind == TimedOut || fence(e.Kind) {
		jo.lost(m.Unit, e)
	}
	if e.Kind != Committed {
		return
	}
	jo.lastCommit = latest(jo.lastCommit, e.At)
	if m.Unit != "" {
		jo.own(m.Unit, e.At).commit(e.At, m.Checkpoint)
	}
}

// own is the unit's outcomes, made at its first event, at.
func (jo *jobOutcomes) own(unit string, at time.Time) *unitOutcomes {
	uo := jo.units[unit]
	if uo == nil {
		uo = &unitOutcomes{newestCommitted: -1, first: at}
		jo.units[unit] = uo
	}
	return uo
}

func (jo *jobOutcomes) lost(unit string, e Event) {
	if !slices.Contains(jo.lossy, unit) {
		jo.lossy = append(jo.lossy, unit)
	}
	jo.lastLoss = latest(jo.lastLoss, e.At)
	uo := jo.own(unit, e.At)
	uo.lastLoss = latest(uo.lastLoss, e.At)
	uo.lost(e)
}

// lossRounds is the most loss rounds of one unit within Window5m of now.
func (jo *jobOutcomes) lossRounds(now time.Time) int {
	n := 0
	for _, name := range jo.lossy {
		if uo := jo.units[name]; uo != nil {
			n = max(n, uo.lossRounds(now))
		}
	}
	return n
}

// lost records a transaction of the unit ended by others. One crash can
// leave two open per subtask (one pre-committed, the next begun): both
// begun before either was lost, they are one round.
func (uo *unitOutcomes) lost(e Event) {
	began := cmp.Or(e.Begun, e.started)
	if n := len(uo.rounds); n > 0 && (began.IsZero() || !began.After(uo.rounds[n-1])) {
		return
	}
	uo.rounds = append(uo.rounds, e.At)
	cut := 0
	for cut < len(uo.rounds) && uo.rounds[cut].Before(e.At.Add(-Window5m)) {
		cut++
	}
	uo.rounds = slices.Delete(uo.rounds, 0, cut)
}

// lossRounds is how many of the unit's rounds are within Window5m of now.
func (uo *unitOutcomes) lossRounds(now time.Time) int {
	n := 0
	for _, at := range uo.rounds {
		if now.Sub(at) < Window5m {
			n++
		}
	}
	return n
}

// fenced makes an abort of id counted at its minute a fence: what History
// learnt later of it (Event.Revises).
func (l jobLog) fenced(id string, at time.Time) {
	jo := l[JobOf(id).Job]
	if jo == nil {
		return
	}
	for i := range jo.mins {
		if c := &jo.mins[i]; c.min == minuteOf(at) && c.fences+c.timeouts < c.aborts {
			c.fences++
		}
	}
	jo.lost(JobOf(id).Unit, Event{At: at})
}

func (jo *jobOutcomes) count(m int32, k EventKind) {
	newest := m
	if n := len(jo.mins); n > 0 {
		newest = max(newest, jo.mins[n-1].min)
	}
	window := int32(Window5m / time.Minute)
	if m <= newest-window {
		return
	}
	i, found := slices.BinarySearchFunc(jo.mins, m, func(c jobMinute, m int32) int { return int(c.min - m) })
	if !found {
		jo.mins = slices.Insert(jo.mins, i, jobMinute{min: m})
	}
	switch {
	case k == Committed:
		jo.mins[i].commits++
	case fence(k):
		jo.mins[i].aborts++
		jo.mins[i].fences++
	case k == TimedOut:
		jo.mins[i].aborts++
		jo.mins[i].timeouts++
	default:
		jo.mins[i].aborts++
	}
	cut := 0
	for cut < len(jo.mins) && jo.mins[cut].min <= newest-window {
		cut++
	}
	jo.mins = slices.Delete(jo.mins, 0, cut)
}

// jobWindow is a job's last 5 minutes; lossMinutes counts those of them
// with a fence or a timeout (the crash-loop rule).
type jobWindow struct{ commits, aborts, fences, timeouts, lossMinutes int }

// window counts the outcomes whose minute is less than 5 minutes before
// now's, as IDStats.Window does per id.
func (jo *jobOutcomes) window(now time.Time) jobWindow {
	var w jobWindow
	at := minuteOf(now)
	for _, c := range jo.mins {
		if max(at-c.min, 0) < int32(Window5m/time.Minute) {
			w.commits += int(c.commits)
			w.aborts += int(c.aborts)
			w.fences += int(c.fences)
			w.timeouts += int(c.timeouts)
			if c.fences+c.timeouts > 0 {
				w.lossMinutes++
			}
		}
	}
	return w
}

func (uo *unitOutcomes) commit(at time.Time, checkpoint int64) {
	uo.lastCommit = latest(uo.lastCommit, at)
	switch {
	case checkpoint > uo.newestCommitted:
		uo.newestCommitted, uo.newestCommittedAt = checkpoint, at
	case checkpoint == uo.newestCommitted:
		uo.newestCommittedAt = latest(uo.newestCommittedAt, at)
	}
	ms := at.UnixMilli()
	i, _ := slices.BinarySearch(uo.commits, ms)
	uo.commits = slices.Insert(uo.commits, i, ms)
	if len(uo.commits) > cadenceCommits {
		uo.commits = slices.Delete(uo.commits, 0, len(uo.commits)-cadenceCommits)
	}
	uo.cadence = cadenceOf(uo.commits)
}

// cadenceOf is the median gap between commits (sorted Unix ms), 0 with
// fewer than minCadenceGaps gaps above 0.
func cadenceOf(commits []int64) time.Duration {
	var gaps []time.Duration
	for i := 1; i < len(commits); i++ {
		if g := commits[i] - commits[i-1]; g > 0 {
			gaps = append(gaps, time.Duration(g)*time.Millisecond)
		}
	}
	if len(gaps) < minCadenceGaps {
		return 0
	}
	return median(gaps)
}

// keep forgets the jobs and units s no longer names: Streams names a
// thread's ids after its process, new at each restart.
func (l jobLog) keep(s *Snapshot) {
	if len(l) == 0 {
		return
	}
	type unitKey struct {
		job  JobID
		unit string
	}
	live := map[unitKey]bool{}
	for i := range s.Txns {
		m := JobOf(s.Txns[i].ID)
		live[unitKey{m.Job, ""}] = true
		live[unitKey{m.Job, m.Unit}] = true
	}
	for id, jo := range l {
		if !live[unitKey{id, ""}] {
			delete(l, id)
			continue
		}
		for name := range jo.units {
			if !live[unitKey{id, name}] {
				delete(jo.units, name)
			}
		}
		jo.lossy = slices.DeleteFunc(jo.lossy, func(name string) bool { return jo.units[name] == nil })
	}
}

// jobLog is what h saw of job id (nil: nothing, or h nil).
func (h *History) jobLog(id JobID) *jobOutcomes {
	if h == nil {
		return nil
	}
	return h.jobs[id]
}

// unit is what jo saw of its unit name (nil: nothing).
func (jo *jobOutcomes) unit(name string) *unitOutcomes {
	if jo == nil {
		return nil
	}
	return jo.units[name]
}

// baselineCommit is when h saw id commit, for the ids whose only commit is
// in a baseline (the first snapshot): the zero time when id is "", h saw no
// commit of it last, or saw it only in a snapshot, which says that it
// committed but not when (a job stopped for an hour is not "6s" ago).
func (h *History) baselineCommit(id string) time.Time {
	if h == nil || id == "" {
		return time.Time{}
	}
	st := h.stats(id)
	if st.Last != Committed || slices.ContainsFunc(h.baseAts, st.LastAt.Equal) {
		return time.Time{}
	}
	return st.LastAt
}
