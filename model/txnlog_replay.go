package model

import (
	"slices"
	"time"
)

// Replay turns one read of the coordinators' log, from its start to its
// end, into the events it still holds. The log is compacted: where the
// cleaner has been, only the latest record of each id is left, so the events
// there are some, not all. The cleaner leaves gaps in the offsets; the part it
// has not reached yet is a run of consecutive offsets that holds every
// transition. Complete says from when every partition has such a run.
type Replay struct {
	log   *TxnLog
	since time.Time
	limit int // keep the newest limit events (0: all)
	evs   []Event
	runs  map[int32]logRun
	// oldest is the time of the oldest record read.
	oldest time.Time
}

// logRun is the last run of consecutive offsets of one partition.
type logRun struct {
	next int64     // the offset after the last record read
	from time.Time // the time of the run's first record
}

// NewReplay keeps the events at or after since, the newest limit of them
// (all when limit is 0): at 500,000 ids the log holds millions.
func NewReplay(since time.Time, limit int) *Replay {
	return &Replay{log: NewTxnLog(), since: since, limit: limit, runs: map[int32]logRun{}}
}

// Add takes the next record of its partition in, in offset order.
func (r *Replay) Add(rec TxnLogRecord) {
	at := time.UnixMilli(rec.LastUpdateMs)
	if rec.LastUpdateMs <= 0 {
		at = r.runs[rec.Partition].from // a tombstone without a time
	}
	if run, ok := r.runs[rec.Partition]; !ok || rec.Offset != run.next {
		r.runs[rec.Partition] = logRun{next: rec.Offset + 1, from: at}
	} else {
		run.next = rec.Offset + 1
		r.runs[rec.Partition] = run
	}
	if !at.IsZero() && (r.oldest.IsZero() || at.Before(r.oldest)) {
		r.oldest = at
	}
	// The coordinator's own clock measures the grace of a held abort.
	r.log.Apply(rec, true, at)
	r.keep(r.log.Take(at))
}

func (r *Replay) keep(evs []Event) {
	for _, e := range evs {
		if !e.At.Before(r.since) {
			r.evs = append(r.evs, e)
		}
	}
	// Trimming to the newest limit so far never drops one of the newest
	// limit of all.
	if r.limit > 0 && len(r.evs) >= 2*r.limit {
		r.trim()
	}
}

func (r *Replay) trim() {
	slices.SortStableFunc(r.evs, func(a, b Event) int { return a.At.Compare(b.At) })
	if r.limit > 0 && len(r.evs) > r.limit {
		r.evs = slices.Clone(r.evs[len(r.evs)-r.limit:])
	}
}

// Events are the events kept, oldest first, and the time from which they are
// all there (complete); before it only the last transition of each id is
// left. oldest is the time of the oldest record read.
func (r *Replay) Events() (evs []Event, complete, oldest time.Time) {
	r.keep(r.log.Take(time.Unix(1<<40, 0)))
	for _, run := range r.runs {
		if run.from.After(complete) {
			complete = run.from
		}
	}
	r.trim()
	return r.evs, complete, r.oldest
}
