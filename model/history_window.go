package model

import (
	"slices"
	"time"
)

// RecentTxns bounds the finished transactions History keeps per id.
const RecentTxns = 8

// FinishedTxn is one transaction of an id that ended with a known outcome.
// Times are Unix milliseconds, so that eight of them per busy id stay small.
type FinishedTxn struct {
	// BegunMs is when it began, 0 when not known (a Diff of two polls does
	// not know it).
	BegunMs int64
	EndMs   int64
	// ProducerID and ProducerEpoch are the ending event's.
	ProducerID int64
	// Kind is the outcome and who ended it: Committed, Aborted (by its
	// producer), TimedOut, Fenced or ForceTerminated.
	Kind EventKind
	// Parts is how many partitions it held, -1 when not known (only the
	// coordinator's log tells).
	Parts         int32
	ProducerEpoch int16
	// Logged: read from the coordinator's log, not inferred from polls.
	Logged bool
}

// Begun is when the transaction began; ok is false when that is not known.
func (f FinishedTxn) Begun() (time.Time, bool) {
	if f.BegunMs == 0 {
		return time.Time{}, false
	}
	return time.UnixMilli(f.BegunMs), true
}

// End is when the transaction ended.
func (f FinishedTxn) End() time.Time { return time.UnixMilli(f.EndMs) }

// Duration is how long the transaction ran; ok is false when its begin is
// not known.
func (f FinishedTxn) Duration() (time.Duration, bool) {
	if f.BegunMs == 0 || f.EndMs < f.BegunMs {
		return 0, false
	}
	return time.Duration(f.EndMs-f.BegunMs) * time.Millisecond, true
}

func finished(e Event) FinishedTxn {
	f := FinishedTxn{EndMs: e.At.UnixMilli(), ProducerID: e.ProducerID, ProducerEpoch: e.ProducerEpoch,
		Kind: e.Kind, Parts: -1, Logged: e.Logged}
	if !e.Begun.IsZero() {
		f.BegunMs = e.Begun.UnixMilli()
	}
	if e.Logged {
		f.Parts = e.Parts
	}
	return f
}

// Recent windows of the per-id counters.
const (
	Window5m  = 5 * time.Minute
	Window60m = 60 * time.Minute
)

// Window is an id's commits and aborts over the last 5 and 60 minutes.
type Window struct {
	Commits5m, Aborts5m, Commits60m, Aborts60m int
}

// minuteCount is one minute of an id's outcomes; min is Unix minutes.
type minuteCount struct {
	min             int32
	commits, aborts uint32
}

// idLog is what History keeps of an id's finished transactions. It hangs
// off IDStats by one pointer, allocated at the id's first outcome event:
// the ids with none (most of 500,000 at rest) pay 8 bytes for it.
type idLog struct {
	txns []FinishedTxn // oldest first; the last RecentTxns count (Finished)
	// mins are the minutes with outcomes, oldest first, at most one hour
	// before the newest: at most 60.
	mins []minuteCount
	// txn0 and min0 hold the first of each: most ids end one transaction
	// between two snapshots, and then cost one allocation, not three.
	txn0 [1]FinishedTxn
	min0 [1]minuteCount
}

// minuteOf is t's minute since the epoch.
func minuteOf(t time.Time) int32 { return int32(t.Unix() / 60) }

// addFinished records e, an ending event, in st.
func (st *IDStats) addFinished(e Event) {
	l := st.log
	if l == nil {
		l = &idLog{}
		l.txns, l.mins = l.txn0[:0:1], l.min0[:0:1]
		st.log = l
	}
	if len(l.txns) >= RecentTxns && len(l.txns) == cap(l.txns) {
		// A fresh array with room for RecentTxns more: one copy per
		// RecentTxns outcomes of a busy id, not one each. Appending never
		// writes where a slice handed out by Stats can see.
		l.txns = append(make([]FinishedTxn, 0, 2*RecentTxns), l.txns[len(l.txns)-RecentTxns+1:]...)
	}
	l.txns = append(l.txns, finished(e))
	l.count(minuteOf(e.At), e.Kind == Committed)
}

// count adds one outcome to minute m, dropping the minutes an hour older
// than the newest. An outcome older than that counts only since start.
func (l *idLog) count(m int32, commit bool) {
	newest := m
	if n := len(l.mins); n > 0 {
		newest = max(newest, l.mins[n-1].min)
	}
	if m <= newest-int32(Window60m/time.Minute) {
		return
	}
	i, found := slices.BinarySearchFunc(l.mins, m, func(c minuteCount, m int32) int { return int(c.min - m) })
	if !found {
		l.mins = slices.Insert(l.mins, i, minuteCount{min: m})
	}
	if commit {
		l.mins[i].commits++
	} else {
		l.mins[i].aborts++
	}
	cut := 0
	for cut < len(l.mins) && l.mins[cut].min <= newest-int32(Window60m/time.Minute) {
		cut++
	}
	if cut > 0 {
		l.mins = slices.Delete(l.mins, 0, cut)
	}
}

// relabel makes the last finished abort by its producer a fence (a Diff
// that learnt more, fence.go).
func (l *idLog) relabel() {
	kept := l.txns[max(0, len(l.txns)-RecentTxns):]
	for i := len(kept) - 1; i >= 0; i-- {
		if kept[i].Kind == Aborted {
			// A fresh slice: Stats hands the old one out to callers.
			l.txns = slices.Clone(kept)
			l.txns[i].Kind = Fenced
			return
		}
	}
}

// Finished is the id's last RecentTxns finished transactions, oldest first.
func (s IDStats) Finished() []FinishedTxn {
	if s.log == nil {
		return nil
	}
	t := s.log.txns
	return t[max(0, len(t)-RecentTxns):]
}

// Window counts the id's commits and aborts whose minute is less than 5
// (60) minutes before now's: an outcome leaves the 5-minute count when its
// minute is 5 minutes old. Outcomes in the first snapshot (Baseline) had no
// time and count only since start.
func (s IDStats) Window(now time.Time) Window {
	var w Window
	if s.log == nil {
		return w
	}
	at := minuteOf(now)
	for _, c := range s.log.mins {
		age := at - c.min
		if age < 0 {
			age = 0 // the coordinator's clock a little ahead of ours
		}
		if age < int32(Window60m/time.Minute) {
			w.Commits60m += int(c.commits)
			w.Aborts60m += int(c.aborts)
		}
		if age < int32(Window5m/time.Minute) {
			w.Commits5m += int(c.commits)
			w.Aborts5m += int(c.aborts)
		}
	}
	return w
}

// keptInRecent reports whether an event goes to its id's Recent: the steps
// inside a transaction would push the beginnings and ends out.
func keptInRecent(k EventKind) bool {
	return k != Added && k != PreparedCommit && k != PreparedAbort
}
