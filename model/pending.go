package model

import (
	"slices"
	"strings"
	"time"
)

// A progressive load: ListTransactions alone gives every id's state, producer
// id and coordinator, so a snapshot can show all rows at once, marked
// Pending, and describe them in batches afterwards. Nothing here may turn
// "not described yet" into a fact: a pending row's epoch, start, timeout and
// partitions are unknown, not zero.

// Descriptions is what DescribeTransactions said of some pending ids.
type Descriptions struct {
	At time.Time
	// Txns are the rows as described (Described set), or, when the describe
	// failed, the id with Err set.
	Txns []Txn
	// Gone are the ids the coordinator no longer knows: expired since they
	// were listed.
	Gone []string
}

// Fill returns a copy of s whose pending rows answered by d are replaced by
// their descriptions (a failed one keeps its listing, with the error, and is
// no longer pending: the next refresh retries it), and the events the
// descriptions reveal: a row described in another state or producer than it
// was listed in changed in between. Rows that are not pending are left alone,
// a refresh took them since; s itself is not touched, the screens may be
// reading it.
func Fill(s *Snapshot, d Descriptions) (*Snapshot, []Event) {
	if s == nil {
		return nil, nil
	}
	// One copy of the rows, then a lookup per answer: a batch is a few
	// thousand ids of hundreds of thousands.
	out := *s
	out.Txns = slices.Clone(s.Txns)
	out.index = s.index.movedTo(s.Txns, out.Txns)
	answers := slices.Clone(d.Txns)
	slices.SortFunc(answers, func(a, b Txn) int { return strings.Compare(a.ID, b.ID) })
	var was, now []Txn
	for _, got := range answers {
		i, ok := out.at(got.ID)
		if !ok || !out.Txns[i].Pending {
			continue // a refresh took it since
		}
		t, n := out.Txns[i], got
		if !n.Described {
			n = t
			n.Pending, n.Err = false, got.Err
		}
		was, now = append(was, t), append(now, n)
		out.Txns[i] = n
	}
	if len(d.Gone) > 0 {
		gone := make(map[string]bool, len(d.Gone))
		for _, id := range d.Gone {
			gone[id] = true
		}
		out.Txns = slices.DeleteFunc(out.Txns, func(t Txn) bool { return t.Pending && gone[t.ID] })
		out.Sort() // still in order: this only re-indexes the shorter rows
	}
	at := d.At
	if at.IsZero() {
		at = s.TakenAt
	}
	evs := Diff(&Snapshot{TakenAt: s.TakenAt, Txns: was, EpochBumpsOnEnd: s.EpochBumpsOnEnd},
		&Snapshot{TakenAt: at, Txns: now, EpochBumpsOnEnd: s.EpochBumpsOnEnd})
	return &out, evs
}

// PendingCount is how many rows of s are still to be described.
func PendingCount(s *Snapshot) int {
	if s == nil {
		return 0
	}
	n := 0
	for i := range s.Txns {
		if s.Txns[i].Pending {
			n++
		}
	}
	return n
}

// NextPending picks up to n pending ids of s to describe next: those of
// first that are pending (the ids on screen), then the open ones, then the
// rest in id order.
func NextPending(s *Snapshot, first []string, n int) []TxnRef {
	return nextPending(s, first, n, true)
}

// NextPendingOpen is NextPending without the ids that are not open (the
// ones on screen still first): while the log is read (Source.Reading), it
// will describe those.
func NextPendingOpen(s *Snapshot, first []string, n int) []TxnRef {
	return nextPending(s, first, n, false)
}

func nextPending(s *Snapshot, first []string, n int, closed bool) []TxnRef {
	if s == nil || n <= 0 {
		return nil
	}
	out := make([]TxnRef, 0, min(n, len(s.Txns)))
	taken := make(map[string]bool, len(first))
	for _, id := range first {
		if i, ok := s.at(id); ok && s.Txns[i].Pending && !taken[id] && len(out) < n {
			out = append(out, s.Txns[i].Ref())
			taken[id] = true
		}
	}
	for _, open := range []bool{true, false} {
		if !open && !closed {
			break
		}
		for i := 0; i < len(s.Txns) && len(out) < n; i++ {
			t := &s.Txns[i]
			if t.Pending && t.State.Open() == open && !taken[t.ID] {
				out = append(out, t.Ref())
			}
		}
	}
	return out
}

// TxnRef names an id to describe and the broker that listed it, its
// coordinator then (-1 when unknown): asked first, it spares a lookup of the
// coordinator per id.
type TxnRef struct {
	ID          string
	Coordinator int32
}

// Ref names t to describe.
func (t *Txn) Ref() TxnRef { return TxnRef{ID: t.ID, Coordinator: t.Coordinator} }

// Refs names ids whose coordinators are not known.
func Refs(ids ...string) []TxnRef {
	out := make([]TxnRef, len(ids))
	for i, id := range ids {
		out[i] = TxnRef{ID: id, Coordinator: -1}
	}
	return out
}

// UnknownEpoch is an event's ProducerEpoch when the row it comes from was
// listed only: its epoch was not reported.
const UnknownEpoch int16 = -1

// appendListed is appendChange for two rows of one id of which one or both
// are pending. A pending row knows only its state and producer id: when those
// did not change, nothing can be said; when they did, the epoch nobody
// reported is taken from the other row, so that no made-up epoch jump decides
// how a transaction ended (a pending row's start and timeout are zero, which
// Diff reads as unknown already), and the events say the epoch is unknown.
func appendListed(out []Event, prevAt, at time.Time, p, n Txn, tv2 bool) []Event {
	if p.State == n.State && p.ProducerID == n.ProducerID {
		return out
	}
	switch {
	case p.Pending && !n.Pending:
		p.ProducerEpoch = n.ProducerEpoch
	case n.Pending && !p.Pending:
		n.ProducerEpoch = p.ProducerEpoch
	}
	from, listed := len(out), n.Pending
	p.Pending, n.Pending = false, false
	out = appendChange(out, prevAt, at, p, n, tv2)
	if listed {
		n.Pending = true
		unknownEpochs(out, from, n)
	}
	return out
}

// appendNewListed is appendNew for a pending row: what its listed state
// says, with the epoch unknown.
func appendNewListed(out []Event, at time.Time, n Txn) []Event {
	from, known := len(out), n
	known.Pending = false
	out = appendNew(out, at, known)
	unknownEpochs(out, from, n)
	return out
}

// unknownEpochs marks the events from index from on as not knowing the
// epoch when they come from n, a pending row.
func unknownEpochs(evs []Event, from int, n Txn) {
	if !n.Pending {
		return
	}
	for k := from; k < len(evs); k++ {
		evs[k].ProducerEpoch = UnknownEpoch
	}
}
