package model

import (
	"fmt"
	"time"
)

// A fence on real Kafka is seldom seen as one. A new producer's InitProducerId on
// an id with an open transaction makes the coordinator abort that transaction,
// bumping the epoch as every abort does under transaction version 2, and tells the
// new producer to retry; its retry, a client backoff later, bumps the epoch once
// more. A poll in between sees Ongoing e → CompleteAbort e+1, exactly what the
// producer's own abort looks like (Kafka 4.4 with the Java client: most restarts
// of a Flink job looked like that). Only the next poll shows the InitProducerId:
// the epoch went up more than the transactions ended since account for. The abort
// is then relabelled a fence.

// initAfter reports whether n shows an InitProducerId since p, whose abort was
// decided or done at p's epoch: a new producer id, or more epoch bumps than the
// ends seen since (one under transaction version 2 when n ended a transaction,
// none otherwise; version 1 never bumps on an end). A producer that aborts, then
// also ends another transaction between two polls looks alike under version 2;
// that is rare next to restarts and zombies, and shows as a fence.
func initAfter(p, n Txn, tv2 bool) bool {
	if n.ProducerID != p.ProducerID {
		return !rotated(p, n, tv2)
	}
	ends := 0
	if tv2 {
		switch n.State {
		case PrepareCommit, PrepareAbort, CompleteCommit, CompleteAbort:
			ends = 1
		}
	}
	return int(n.ProducerEpoch)-int(p.ProducerEpoch) > ends
}

// appendRevision adds a revising Fenced event when p shows a finished abort and n
// an InitProducerId since.
func appendRevision(out []Event, at time.Time, p, n Txn, tv2 bool) []Event {
	if p.State != CompleteAbort || !initAfter(p, n, tv2) {
		return out
	}
	e := ev(at, n, Fenced, fmt.Sprintf("another producer initialized the id right after the abort (epoch %d→%d)",
		p.ProducerEpoch, n.ProducerEpoch))
	e.Revises = true
	return append(out, e)
}

// revise relabels the id's last abort a fence. Only a plain abort is: one at
// timeout stays one (a job restarted after its transaction timed out), and an
// abort txnscope never recorded has nothing to relabel.
func (h *History) revise(e Event) {
	if h.stats(e.ID).Last != Aborted {
		return
	}
	st := h.own(e.ID)
	st.Last = Fenced
	relabel := func(old Event) Event {
		old.Kind, old.Detail = Fenced, e.Detail
		return old
	}
	var revised *Event
	// A fresh slice: Stats hands the old one out to callers.
	recent := append([]Event(nil), st.Recent...)
	for i := len(recent) - 1; i >= 0; i-- {
		if recent[i].Kind == Aborted {
			recent[i] = relabel(recent[i])
			revised = &recent[i]
			break
		}
	}
	st.Recent = recent
	if revised == nil {
		// The abort was in the first snapshot (Baseline): no event to relabel.
		h.recordTakeover(relabel(Event{At: st.LastAt, ID: e.ID, ProducerID: e.ProducerID, ProducerEpoch: e.ProducerEpoch}))
		return
	}
	for k := 1; k <= h.Len(); k++ {
		i := (h.next - k + len(h.ring)) % len(h.ring)
		if r := h.ring[i]; r.ID == e.ID && r.Kind == Aborted && r.At.Equal(revised.At) {
			h.ring[i] = relabel(r)
			break
		}
	}
	h.recordTakeover(*revised)
}
