package model

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// Replay turns one read of the coordinators' log, from its start to its
// end, into the events it still holds. The log is compacted: where the
// cleaner has been, only the latest record of each id is left, so the events
// there are some, not all. The cleaner leaves gaps in the offsets; the part it
// has not reached yet is a run of consecutive offsets that holds every
// transition. Complete says from when every partition has such a run. A
// record that cannot be read is a gap too: nothing is claimed across it.
type Replay struct {
	log   *TxnLog
	since time.Time
	limit int // keep the newest limit events (0: all)
	evs   []Event
	times []int64   // trim's, kept for the next
	floor time.Time // the oldest of the newest limit events so far (zero: fewer kept)
	runs  map[int32]logRun
	// oldest is the time of the oldest record read.
	oldest time.Time
	unread Unreads
	// ends are the partitions' end offsets as the read began, at endsAt
	// (nil when not told: Bounds).
	ends   map[int32]int64
	endsAt time.Time
	// presumed is Presume's time (zero: not told); failed is set by
	// Result when the newest limit events turned out not all to be at or
	// after it.
	presumed time.Time
	failed   bool
}

// logRun is the last run of consecutive offsets of one partition.
type logRun struct {
	first int64     // the offset of the run's first record
	next  int64     // the offset after the last record read
	from  time.Time // the time from which the run holds every transition
	last  time.Time // the time of the last record read
}

// Replayed is what a replay of the log found.
type Replayed struct {
	// Events are the events kept, oldest first.
	Events []Event
	// Complete is the time from which the log holds every transition;
	// before it only the last transition of each id is left. Zero when the
	// log holds no record.
	Complete time.Time
	// Whole: no partition ever lost a record (never compacted, nothing
	// unread): every transition since the first one, and Complete is
	// Oldest.
	Whole bool
	// Oldest is the time of the oldest record read.
	Oldest time.Time
	// Unread are the records that could not be read, by partition.
	Unread []Unread
}

// NewReplay keeps the events at or after since, the newest limit of them
// (all when limit is 0): at 500,000 ids the log holds millions.
func NewReplay(since time.Time, limit int) *Replay {
	return &Replay{log: NewTxnLog(), since: since, limit: limit, runs: map[int32]logRun{}}
}

// Bounds tells the replay every partition's end offset when the read began,
// at: a partition whose run starts at offset 0 and reaches its end has lost
// nothing, and one that held records but has none left is complete only
// from then.
func (r *Replay) Bounds(ends map[int32]int64, at time.Time) {
	r.ends, r.endsAt = ends, at
}

// Presume tells the replay, before the first record, a time at or after
// which the newest limit events presumably all are (the caller guessed it
// from where the log's records are by time): records older than it by more
// than an abort's Grace are taken in silently from the start, as they are
// once limit events are kept (news). A log whose every record is in the
// window made events of them all, to keep the newest limit: at 2,000,000
// ids, 8,000,000 records were half a snapshot's time. Result then says, by
// Presumed, whether the guess held; when it did not, events may be missing
// and the log must be replayed again without it.
func (r *Replay) Presume(t time.Time) {
	if r.limit > 0 {
		r.presumed = t
	}
}

// Presumed reports, once Result has run, whether Presume's time held: the
// newest limit events are all at or after it, or it was no later than the
// window's start, so no event it silenced could have been kept.
func (r *Replay) Presumed() bool { return !r.failed }

// Add takes the next record of its partition in, in offset order.
func (r *Replay) Add(rec TxnLogRecord) {
	run, seen := r.runs[rec.Partition]
	at := time.UnixMilli(rec.LastUpdateMs)
	if rec.LastUpdateMs <= 0 {
		at = run.from // a tombstone without a time
	}
	if rec.Unread != "" {
		// Nothing is claimed across it: its partition holds every
		// transition only after it (dated by its own timestamp, never
		// before the record ahead of it).
		r.unread.Add(rec)
		last := maxTime(at, run.last)
		r.runs[rec.Partition] = logRun{first: rec.Offset + 1, next: rec.Offset + 1, from: last.Add(time.Millisecond), last: last}
		r.log.Apply(rec, true, last)
		return
	}
	if !seen || rec.Offset != run.next {
		// A gap: the cleaner's. Right after a record that could not be
		// read, the run still starts no earlier than that record.
		var floor time.Time
		if seen && run.first == run.next {
			floor = run.from
		}
		run = logRun{first: rec.Offset, from: maxTime(at, floor)}
	}
	run.next, run.last = rec.Offset+1, at
	r.runs[rec.Partition] = run
	if !at.IsZero() && (r.oldest.IsZero() || at.Before(r.oldest)) {
		r.oldest = at
	}
	// The coordinator's own clock measures the grace of a held abort.
	r.log.Apply(rec, r.news(rec, at), at)
	r.keep(r.log.takeBy(r.clock))
}

// news reports whether rec, read at at, can make an event the replay
// keeps. A record's events are never newer than it (its time, or its
// transaction's start), and one older than the window, or than the newest
// limit kept so far, by more than an abort's Grace changes no event that is
// kept: taken in silently, as the start-up read does, it leaves the rows as
// they would be. A week of Flink's ids is millions of transitions, and
// their events' details were most of a replay's garbage.
func (r *Replay) news(rec TxnLogRecord, at time.Time) bool {
	from := maxTime(maxTime(r.since, r.floor), r.presumed)
	if from.IsZero() {
		return true
	}
	newest := maxTime(at, msTime(rec.StartMs, time.Time{}))
	return !newest.Before(from.Add(-cmp.Or(r.log.Grace, DefaultGrace)))
}

// clock is the time a partition's read has reached.
func (r *Replay) clock(part int32) time.Time { return r.runs[part].last }

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func (r *Replay) keep(evs []Event) {
	for _, e := range evs {
		// Once limit events are kept, one older than all of them is never
		// among the newest limit.
		if !e.At.Before(r.since) && (r.floor.IsZero() || !e.At.Before(r.floor)) {
			r.evs = append(r.evs, e)
		}
	}
	// Trimming to the newest limit so far never drops one of the newest
	// limit of all.
	if r.limit > 0 && len(r.evs) >= 2*r.limit {
		r.trim()
	}
}

// trim keeps the newest limit events, in the order they came, as a stable
// sort by time would leave them (among equal times the later ones). It sorts
// only their times: stably sorting the events themselves, 2×limit at a time,
// was a quarter of a replay's CPU. It keeps them in place: a new array each
// time was half of what a replay allocated.
func (r *Replay) trim() {
	if r.limit <= 0 || len(r.evs) <= r.limit {
		return
	}
	at := r.times[:0]
	for _, e := range r.evs {
		at = append(at, nanos(e.At))
	}
	r.times = at
	slices.Sort(at)
	cut := at[len(at)-r.limit]
	// Of the events at cut, the last ones are kept: skip the first ones.
	skip := 0
	for _, t := range at[:len(at)-r.limit] {
		if t == cut {
			skip++
		}
	}
	w := 0
	for _, e := range r.evs {
		switch t := nanos(e.At); {
		case t > cut:
		case t == cut && skip == 0:
		case t == cut:
			skip--
			continue
		default:
			continue
		}
		r.evs[w] = e
		w++
	}
	clear(r.evs[w:])
	r.evs = r.evs[:w]
	r.floor = time.Unix(0, cut)
	if cut == math.MinInt64 {
		r.floor = time.Time{}
	}
}

// Result is what the replay found, once every record is in.
func (r *Replay) Result() Replayed {
	r.keep(r.log.Take(time.Unix(1<<40, 0)))
	r.trim()
	slices.SortStableFunc(r.evs, func(a, b Event) int { return a.At.Compare(b.At) })
	// Held: the silenced records' events are all older than the presumed
	// time (news), and limit events at or after it were kept, so none of
	// them was among the newest limit.
	r.failed = r.presumed.After(r.since) && (len(r.evs) < r.limit || r.evs[0].At.Before(r.presumed))
	out := Replayed{Events: r.evs, Oldest: r.oldest, Unread: r.unread.List()}
	whole := r.ends != nil
	for p, run := range r.runs {
		// Without the end offsets, a run from offset 0 may still have
		// lost its newest records: it says from when, no more.
		if r.ends != nil && run.first == 0 && run.next == r.ends[p] {
			continue // this partition never lost a record
		}
		whole = false
		out.Complete = maxTime(out.Complete, run.from)
	}
	for p, end := range r.ends {
		if _, read := r.runs[p]; !read && end > 0 {
			// It held records and none is left to read: whenever they
			// were written, every one of them is gone.
			whole = false
			out.Complete = maxTime(out.Complete, r.endsAt)
		}
	}
	if whole {
		out.Whole, out.Complete = true, r.oldest
	}
	return out
}

// nanos orders times as Compare does, within the years UnixNano holds;
// a time the log did not give is the oldest.
func nanos(t time.Time) int64 {
	if t.IsZero() {
		return math.MinInt64
	}
	return t.UnixNano()
}

// Snapshot is every id's state as the log last wrote it, once every record
// is in (TxnLog.Snapshot); ok is false when a record that could not be read
// stands between an id and its row (TxnLog.Sure), and the rows must come
// from a listing.
func (r *Replay) Snapshot(coordinator func(partition int32) int32) (s *Snapshot, ok bool) {
	if !r.log.Sure() {
		return nil, false
	}
	return r.log.Snapshot(coordinator), true
}
