package model

import (
	"fmt"
	"testing"
	"time"
)

// snap builds a sorted snapshot taken at at.
func snap(at time.Time, txns ...Txn) *Snapshot {
	s := &Snapshot{TakenAt: at, Txns: txns}
	s.Sort()
	return s
}

// tx is one id with a 60 s timeout; start is zero unless the state is open.
func tx(id string, st State, pid int64, epoch int16, start time.Time) Txn {
	t := Txn{ID: id, State: st, ProducerID: pid, ProducerEpoch: epoch, TimeoutMs: 60000, Described: true}
	if st.Open() {
		t.SetStart(start)
	}
	return t
}

func withOutcome(t Txn, o State) Txn { t.SetOutcome(o); return t }

// tv2 marks a snapshot as read from brokers running transaction version 2.
func tv2(s *Snapshot) *Snapshot { s.EpochBumpsOnEnd = true; return s }

func kinds(evs []Event) []string {
	out := make([]string, 0, len(evs))
	for _, e := range evs {
		out = append(out, e.ID+":"+string(e.Kind))
	}
	return out
}

func TestDiff(t *testing.T) {
	p1 := t0                      // first poll
	p2 := t0.Add(2 * time.Second) // next poll
	late := t0.Add(90 * time.Second)
	start := t0.Add(-10 * time.Second)
	start2 := t0.Add(time.Second)
	tests := []struct {
		name  string
		polls []*Snapshot // consecutive snapshots; events of every step are concatenated
		want  []string
	}{
		{"new open id began",
			[]*Snapshot{snap(p1), snap(p2, tx("a", Ongoing, 1, 0, start2))},
			[]string{"a:began"}},
		{"new id already committed",
			[]*Snapshot{snap(p1), snap(p2, tx("a", CompleteCommit, 1, 0, time.Time{}))},
			[]string{"a:committed"}},
		{"new id already aborted (kfake Empty with outcome)",
			[]*Snapshot{snap(p1), snap(p2, withOutcome(tx("a", Empty, 1, 0, time.Time{}), CompleteAbort))},
			[]string{"a:aborted"}},
		{"new idle id without outcome says nothing",
			[]*Snapshot{snap(p1), snap(p2, tx("a", Empty, 1, 0, time.Time{}))},
			nil},
		{"Ongoing to CompleteCommit",
			[]*Snapshot{snap(p1, tx("a", Ongoing, 1, 0, start)), snap(p2, tx("a", CompleteCommit, 1, 0, time.Time{}))},
			[]string{"a:committed"}},
		{"Ongoing to CompleteAbort",
			[]*Snapshot{snap(p1, tx("a", Ongoing, 1, 0, start)), snap(p2, tx("a", CompleteAbort, 1, 0, time.Time{}))},
			[]string{"a:aborted"}},
		{"Ongoing past timeout to Empty with epoch bump and its ABORT marker",
			[]*Snapshot{snap(p1, tx("a", Ongoing, 1, 3, start)), snap(late, withOutcome(tx("a", Empty, 1, 4, time.Time{}), CompleteAbort))},
			[]string{"a:aborted at timeout"}},
		// The producer may have committed right before the deadline: the
		// clock alone is no outcome.
		{"Ongoing past timeout to Empty with epoch bump, no marker read: ended",
			[]*Snapshot{snap(p1, tx("a", Ongoing, 1, 3, start)), snap(late, tx("a", Empty, 1, 4, time.Time{}))},
			[]string{"a:ended"}},
		{"Ongoing past timeout to Empty, its COMMIT marker: committed",
			[]*Snapshot{snap(p1, tx("a", Ongoing, 1, 3, start)), snap(late, withOutcome(tx("a", Empty, 1, 4, time.Time{}), CompleteCommit))},
			[]string{"a:committed"}},
		{"Ongoing past timeout to CompleteAbort with epoch bump",
			[]*Snapshot{snap(p1, tx("a", Ongoing, 1, 3, start)), snap(late, tx("a", CompleteAbort, 1, 4, time.Time{}))},
			[]string{"a:aborted at timeout"}},
		{"PrepareEpochFence past timeout to CompleteAbort",
			[]*Snapshot{snap(p1, tx("a", PrepareEpochFence, 1, 3, start)), snap(late, tx("a", CompleteAbort, 1, 4, time.Time{}))},
			[]string{"a:aborted at timeout"}},
		{"Ongoing to Empty with epoch bump and its ABORT marker before timeout is fenced",
			[]*Snapshot{snap(p1, tx("a", Ongoing, 1, 3, start)), snap(p2, withOutcome(tx("a", Empty, 1, 4, time.Time{}), CompleteAbort))},
			[]string{"a:fenced"}},
		// The force-terminate observed in the demo: the InitProducerId shows,
		// how the transaction ended does not (it may have committed first).
		{"Ongoing to Empty with epoch bump, no marker read: ended",
			[]*Snapshot{snap(p1, tx("a", Ongoing, 1, 3, start)), snap(p2, tx("a", Empty, 1, 4, time.Time{}))},
			[]string{"a:ended"}},
		{"Ongoing to Empty with epoch bump, its COMMIT marker: committed before the InitProducerId",
			[]*Snapshot{snap(p1, tx("a", Ongoing, 1, 3, start)), snap(p2, withOutcome(tx("a", Empty, 1, 4, time.Time{}), CompleteCommit))},
			[]string{"a:committed"}},
		{"PrepareCommit then Empty an epoch up: the commit was decided",
			[]*Snapshot{snap(p1, tx("a", PrepareCommit, 1, 3, start)), snap(p2, tx("a", Empty, 1, 4, time.Time{}))},
			[]string{"a:committed"}},
		{"PrepareCommit then CompleteAbort: committed, and a later one aborted",
			[]*Snapshot{snap(p1, tx("a", PrepareCommit, 1, 3, start)), snap(p2, tx("a", CompleteAbort, 1, 3, time.Time{}))},
			[]string{"a:committed", "a:aborted"}},
		{"PrepareEpochFence then CompleteCommit: fenced, and the new producer's transaction committed",
			[]*Snapshot{tv2(snap(p1, tx("a", PrepareEpochFence, 1, 3, start))), tv2(snap(p2, tx("a", CompleteCommit, 1, 6, time.Time{})))},
			[]string{"a:fenced", "a:committed"}},
		{"PrepareAbort then CompleteCommit: aborted, and a later one committed",
			[]*Snapshot{snap(p1, tx("a", PrepareAbort, 1, 3, start)), snap(p2, tx("a", CompleteCommit, 1, 3, time.Time{}))},
			[]string{"a:aborted", "a:committed"}},
		{"PrepareEpochFence to CompleteAbort before timeout is fenced",
			[]*Snapshot{snap(p1, tx("a", PrepareEpochFence, 1, 3, start)), snap(p2, tx("a", CompleteAbort, 1, 4, time.Time{}))},
			[]string{"a:fenced"}},
		{"epoch jump of two with an abort outcome is fenced",
			[]*Snapshot{snap(p1, tx("a", Ongoing, 1, 3, start)), snap(p2, tx("a", CompleteAbort, 1, 5, time.Time{}))},
			[]string{"a:fenced"}},
		{"new producer id while open is fenced",
			[]*Snapshot{snap(p1, tx("a", Ongoing, 1, 3, start)), snap(p2, tx("a", CompleteAbort, 2, 0, time.Time{}))},
			[]string{"a:fenced"}},
		{"transaction version 2: epoch +1 on every commit is not fencing",
			[]*Snapshot{
				tv2(snap(p1, tx("a", Ongoing, 1, 5, start))),
				tv2(snap(p2, tx("a", CompleteCommit, 1, 6, time.Time{}))),
				tv2(snap(p2.Add(2*time.Second), tx("a", Ongoing, 1, 6, p2.Add(time.Second)))),
				tv2(snap(p2.Add(4*time.Second), tx("a", CompleteCommit, 1, 7, time.Time{}))),
			},
			[]string{"a:committed", "a:began", "a:committed"}},
		{"transaction version 2: epoch +1 on abort is a plain abort",
			[]*Snapshot{tv2(snap(p1, tx("a", Ongoing, 1, 5, start))), tv2(snap(p2, tx("a", CompleteAbort, 1, 6, time.Time{})))},
			[]string{"a:aborted"}},
		{"transaction version 1: aborted one epoch up is a fence (force-terminate stops there)",
			[]*Snapshot{snap(p1, tx("a", Ongoing, 1, 5, start)), snap(p2, tx("a", CompleteAbort, 1, 6, time.Time{}))},
			[]string{"a:fenced"}},
		// The second is a revision of the first (Event.Revises): History
		// keeps one fence (TestHistoryOneFenceAfterForceTerminate).
		{"transaction version 1: the fence's abort, then the new producer's InitProducerId",
			[]*Snapshot{snap(p1, tx("a", Ongoing, 1, 5, start)), snap(p2, tx("a", CompleteAbort, 1, 6, time.Time{})),
				snap(p2.Add(2*time.Second), tx("a", Empty, 1, 7, time.Time{}))},
			[]string{"a:fenced", "a:fenced"}},
		{"Ongoing, PrepareCommit with epoch bump, CompleteCommit: one commit",
			[]*Snapshot{
				snap(p1, tx("a", Ongoing, 1, 5, start)),
				snap(p2, tx("a", PrepareCommit, 1, 6, start)),
				snap(p2.Add(2*time.Second), tx("a", CompleteCommit, 1, 6, time.Time{})),
			},
			[]string{"a:committed"}},
		{"Ongoing, PrepareAbort, CompleteAbort: one abort",
			[]*Snapshot{
				snap(p1, tx("a", Ongoing, 1, 5, start)),
				snap(p2, tx("a", PrepareAbort, 1, 5, start)),
				snap(p2.Add(2*time.Second), tx("a", CompleteAbort, 1, 5, time.Time{})),
			},
			[]string{"a:aborted"}},
		{"PrepareCommit then a new Ongoing: the prepared one committed",
			[]*Snapshot{
				snap(p1, tx("a", PrepareCommit, 1, 6, start)),
				snap(p2, tx("a", Ongoing, 1, 7, start2)),
			},
			[]string{"a:committed", "a:began"}},
		{"PrepareAbort then a new Ongoing: the prepared one aborted",
			[]*Snapshot{
				snap(p1, tx("a", PrepareAbort, 1, 6, start)),
				snap(p2, tx("a", Ongoing, 1, 6, start2)),
			},
			[]string{"a:aborted", "a:began"}},
		{"PrepareAbort then a new Ongoing an epoch up: an InitProducerId came in, fenced",
			[]*Snapshot{
				snap(p1, tx("a", PrepareAbort, 1, 6, start)),
				snap(p2, tx("a", Ongoing, 1, 7, start2)),
			},
			[]string{"a:fenced", "a:began"}},
		{"Ongoing to Ongoing with a new start: ended and began",
			[]*Snapshot{snap(p1, tx("a", Ongoing, 1, 5, start)), snap(p2, tx("a", Ongoing, 1, 5, start2))},
			[]string{"a:ended", "a:began"}},
		{"Ongoing to Ongoing with a new producer id and the ABORT marker: fenced and began",
			[]*Snapshot{snap(p1, tx("a", Ongoing, 1, 5, start)), snap(p2, withPrev(tx("a", Ongoing, 2, 0, start2), CompleteAbort))},
			[]string{"a:fenced", "a:began"}},
		{"Ongoing to Ongoing with a new producer id, no marker read: ended and began",
			[]*Snapshot{snap(p1, tx("a", Ongoing, 1, 5, start)), snap(p2, tx("a", Ongoing, 2, 0, start2))},
			[]string{"a:ended", "a:began"}},
		{"Ongoing unchanged",
			[]*Snapshot{snap(p1, tx("a", Ongoing, 1, 5, start)), snap(p2, tx("a", Ongoing, 1, 5, start))},
			nil},
		{"Ongoing, start not described yet, then described",
			[]*Snapshot{snap(p1, tx("a", Ongoing, 1, 5, time.Time{})), snap(p2, tx("a", Ongoing, 1, 5, start))},
			nil},
		{"Empty with commit outcome (kfake inference)",
			[]*Snapshot{snap(p1, tx("a", Ongoing, 1, 5, start)), snap(p2, withOutcome(tx("a", Empty, 1, 5, time.Time{}), CompleteCommit))},
			[]string{"a:committed"}},
		{"Empty with abort outcome (kfake inference)",
			[]*Snapshot{snap(p1, tx("a", Ongoing, 1, 5, start)), snap(p2, withOutcome(tx("a", Empty, 1, 5, time.Time{}), CompleteAbort))},
			[]string{"a:aborted"}},
		{"Ongoing to Empty, no outcome, no bump: ended",
			[]*Snapshot{snap(p1, tx("a", Ongoing, 1, 5, start)), snap(p2, tx("a", Empty, 1, 5, time.Time{}))},
			[]string{"a:ended"}},
		{"id disappearing says nothing",
			[]*Snapshot{snap(p1, tx("a", Ongoing, 1, 5, start), tx("b", CompleteCommit, 2, 0, time.Time{})), snap(p2)},
			nil},
		{"whole transaction between polls",
			[]*Snapshot{snap(p1, tx("a", CompleteCommit, 1, 5, time.Time{})), snap(p2, tx("a", CompleteCommit, 1, 6, time.Time{}))},
			[]string{"a:committed"}},
		{"commit then abort between polls",
			[]*Snapshot{snap(p1, tx("a", CompleteCommit, 1, 5, time.Time{})), snap(p2, tx("a", CompleteAbort, 1, 5, time.Time{}))},
			[]string{"a:aborted"}},
		{"idle and unchanged",
			[]*Snapshot{snap(p1, tx("a", CompleteCommit, 1, 5, time.Time{})), snap(p2, tx("a", CompleteCommit, 1, 5, time.Time{}))},
			nil},
		{"idle to Ongoing began",
			[]*Snapshot{snap(p1, tx("a", CompleteCommit, 1, 5, time.Time{})), snap(p2, tx("a", Ongoing, 1, 5, start2))},
			[]string{"a:began"}},
		// The sequences below are what Kafka 4.4 shows (DescribeTransactions polled
		// every few milliseconds, integration tests): a client's commit or abort
		// bumps the epoch once; a second producer's InitProducerId on an open
		// transaction goes Ongoing e → PrepareAbort e+1 → CompleteAbort e+1 →
		// Empty e+2; a timeout goes Ongoing e → PrepareAbort e+1 → CompleteAbort e+1.
		{"transaction version 2: a busy producer's next transaction is not a fence",
			[]*Snapshot{tv2(snap(p1, tx("a", Ongoing, 1, 12, start))), tv2(snap(p2, tx("a", Ongoing, 1, 19, start2)))},
			[]string{"a:ended", "a:began"}},
		{"transaction version 2: one end between two open transactions",
			[]*Snapshot{tv2(snap(p1, tx("a", Ongoing, 1, 5, start))), tv2(snap(p2, tx("a", Ongoing, 1, 6, start2)))},
			[]string{"a:ended", "a:began"}},
		{"transaction version 1: an open transaction replaced with an epoch bump, its ABORT marker: fenced",
			[]*Snapshot{snap(p1, tx("a", Ongoing, 1, 5, start)), snap(p2, withPrev(tx("a", Ongoing, 1, 6, start2), CompleteAbort))},
			[]string{"a:fenced", "a:began"}},
		{"transaction version 1: an open transaction replaced with an epoch bump, no marker read: ended",
			[]*Snapshot{snap(p1, tx("a", Ongoing, 1, 5, start)), snap(p2, tx("a", Ongoing, 1, 6, start2))},
			[]string{"a:ended", "a:began"}},
		{"transaction version 2: the id back in Empty two epochs up is fenced",
			[]*Snapshot{tv2(snap(p1, tx("a", Ongoing, 1, 0, start))), tv2(snap(p2, withOutcome(tx("a", Empty, 1, 2, time.Time{}), CompleteAbort)))},
			[]string{"a:fenced"}},
		{"transaction version 2: Empty with a bump and no outcome is ended",
			[]*Snapshot{tv2(snap(p1, tx("a", Ongoing, 1, 0, start))), tv2(snap(p2, tx("a", Empty, 1, 1, time.Time{})))},
			[]string{"a:ended"}},
		{"transaction version 2: Empty two epochs up and no outcome is ended",
			[]*Snapshot{tv2(snap(p1, tx("a", Ongoing, 1, 0, start))), tv2(snap(p2, tx("a", Empty, 1, 2, time.Time{})))},
			[]string{"a:ended"}},
		{"transaction version 2: Empty one epoch up after an abort (kfake) is an abort",
			[]*Snapshot{tv2(snap(p1, tx("a", Ongoing, 1, 0, start))), tv2(snap(p2, withOutcome(tx("a", Empty, 1, 1, time.Time{}), CompleteAbort)))},
			[]string{"a:aborted"}},
		{"transaction version 2: Empty after a commit the log shows is a commit",
			[]*Snapshot{tv2(snap(p1, tx("a", Ongoing, 1, 0, start))), tv2(snap(p2, withOutcome(tx("a", Empty, 1, 2, time.Time{}), CompleteCommit)))},
			[]string{"a:committed"}},
		// Transaction version 1 (Kafka 3.9, or 4.x left at version 1): a
		// restored run fenced the Ongoing one and committed its own before
		// the next poll. The CompleteCommit is the newer transaction's.
		{"transaction version 1: fenced, then a newer one committed, no marker read",
			[]*Snapshot{snap(p1, tx("a", Ongoing, 1, 1, start)), snap(p2, tx("a", CompleteCommit, 1, 3, time.Time{}))},
			[]string{"a:ended", "a:committed"}},
		{"transaction version 1: fenced (its ABORT marker), then a newer one committed",
			[]*Snapshot{snap(p1, tx("a", Ongoing, 1, 1, start)), snap(p2, withPrev(tx("a", CompleteCommit, 1, 3, time.Time{}), CompleteAbort))},
			[]string{"a:fenced", "a:committed"}},
		{"transaction version 1: its own abort at timeout is one epoch up",
			[]*Snapshot{snap(p1, tx("a", Ongoing, 1, 1, start)), snap(late, tx("a", CompleteAbort, 1, 2, time.Time{}))},
			[]string{"a:aborted at timeout"}},
		{"transaction version 2: several aborts between polls are aborts",
			[]*Snapshot{tv2(snap(p1, tx("a", Ongoing, 1, 0, start))), tv2(snap(p2, tx("a", CompleteAbort, 1, 3, time.Time{})))},
			[]string{"a:aborted"}},
		{"transaction version 2: a new producer id after an ABORT marker is fenced",
			[]*Snapshot{tv2(snap(p1, tx("a", Ongoing, 1, 9, start))), tv2(snap(p2, withPrev(tx("a", Ongoing, 2, 0, start2), CompleteAbort)))},
			[]string{"a:fenced", "a:began"}},
		{"transaction version 2: a new producer id after a COMMIT marker (epochs exhausted) is a commit",
			[]*Snapshot{tv2(snap(p1, tx("a", Ongoing, 1, 32766, start))), tv2(snap(p2, withPrev(tx("a", Ongoing, 2, 0, start2), CompleteCommit)))},
			[]string{"a:committed", "a:began", "a:pid rotated"}},
		{"transaction version 2: timeout past the deadline",
			[]*Snapshot{tv2(snap(p1, tx("a", Ongoing, 1, 0, start))), tv2(snap(late, tx("a", CompleteAbort, 1, 1, time.Time{})))},
			[]string{"a:aborted at timeout"}},
		{"timeout abort caught in PrepareAbort is aborted at timeout",
			[]*Snapshot{
				snap(p1, tx("a", Ongoing, 1, 0, start)),
				snap(late, tx("a", PrepareAbort, 1, 1, start)),
				snap(late.Add(2*time.Second), tx("a", CompleteAbort, 1, 1, time.Time{})),
			},
			[]string{"a:aborted at timeout"}},
		{"PrepareAbort before the deadline, complete after it: a plain abort",
			[]*Snapshot{
				snap(p1, tx("a", Ongoing, 1, 0, start)),
				snap(p2, tx("a", PrepareAbort, 1, 1, start)),
				snap(late, tx("a", CompleteAbort, 1, 1, time.Time{})),
			},
			[]string{"a:aborted"}},
		{"timeout abort caught in PrepareAbort, then a new transaction",
			[]*Snapshot{
				snap(late, tx("a", PrepareAbort, 1, 1, start)),
				snap(late.Add(2*time.Second), tx("a", Ongoing, 1, 1, late.Add(time.Second))),
			},
			[]string{"a:aborted at timeout", "a:began"}},
		{"several ids, reported in id order",
			[]*Snapshot{
				snap(p1, tx("b", Ongoing, 2, 0, start), tx("c", Ongoing, 3, 0, start), tx("d", Empty, 4, 0, time.Time{})),
				snap(p2, tx("a", Ongoing, 1, 0, start2), tx("c", CompleteCommit, 3, 0, time.Time{}), tx("d", Ongoing, 4, 0, start2), tx("e", Ongoing, 5, 0, start2)),
			},
			[]string{"a:began", "c:committed", "d:began", "e:began"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []Event
			for i := 1; i < len(tt.polls); i++ {
				got = append(got, Diff(tt.polls[i-1], tt.polls[i])...)
			}
			if g := kinds(got); fmt.Sprint(g) != fmt.Sprint(tt.want) {
				t.Errorf("events = %v want %v", g, tt.want)
			}
			// Every event is stamped with the poll that saw it and the id's producer then.
			for _, e := range got {
				if e.At.Before(tt.polls[1].TakenAt) {
					t.Errorf("%s: At %v before the poll that saw it", e.Kind, e.At)
				}
			}
		})
	}
}

func TestDiffBaseline(t *testing.T) {
	s := snap(t0, tx("a", Ongoing, 1, 0, t0), tx("b", CompleteCommit, 2, 0, time.Time{}))
	if evs := Diff(nil, s); evs != nil {
		t.Errorf("Diff(nil, s) = %v", kinds(evs))
	}
	if evs := Diff(s, nil); evs != nil {
		t.Errorf("Diff(s, nil) = %v", kinds(evs))
	}
}

func TestDiffEventFields(t *testing.T) {
	start := t0.Add(-70 * time.Second)
	at := t0.Add(2 * time.Second)
	aborted := withOutcome(tx("a", Empty, 7, 4, time.Time{}), CompleteAbort)
	evs := Diff(snap(t0, tx("a", Ongoing, 7, 3, start)), snap(at, aborted))
	if len(evs) != 1 {
		t.Fatalf("events = %v", kinds(evs))
	}
	e := evs[0]
	if e.Kind != TimedOut || e.ID != "a" || e.ProducerID != 7 || e.ProducerEpoch != 4 || !e.At.Equal(at) {
		t.Errorf("event = %+v", e)
	}
	if e.Detail != "open 1m12s, timeout 1m0s" {
		t.Errorf("detail = %q", e.Detail)
	}
	evs = Diff(snap(t0, tx("a", Ongoing, 7, 3, t0)), snap(at, aborted))
	if len(evs) != 1 || evs[0].Detail != "epoch 3→4" {
		t.Errorf("fenced events = %+v", evs)
	}
}

// TestDiffTimeoutDuringTheListing: a poll that began a few milliseconds before the deadline
// and read the id after the coordinator's timeout abort calls it aborted at timeout (CI: the
// abort came 5–8 ms after the deadline, the poll's start just before it); its events carry
// the time the rows were read.
func TestDiffTimeoutDuringTheListing(t *testing.T) {
	start := t0.Add(-60 * time.Second) // deadline t0
	aborted := withOutcome(tx("a", Empty, 7, 4, time.Time{}), CompleteAbort)
	next := snap(t0.Add(-3*time.Millisecond), aborted)
	next.ReadAt = t0.Add(40 * time.Millisecond)
	evs := Diff(snap(t0.Add(-time.Second), tx("a", Ongoing, 7, 3, start)), next)
	if len(evs) != 1 || evs[0].Kind != TimedOut || !evs[0].At.Equal(next.ReadAt) {
		t.Fatalf("events = %+v, want one aborted at timeout at the read time", evs)
	}
	// Read before the deadline too: the producer (here, a fence) ended it.
	next.ReadAt = t0.Add(-time.Millisecond)
	if evs := Diff(snap(t0.Add(-time.Second), tx("a", Ongoing, 7, 3, start)), next); len(evs) != 1 || evs[0].Kind == TimedOut {
		t.Errorf("read before the deadline: events = %v", kinds(evs))
	}
}

// TestDiffUnknownEnd: without a marker or a state saying how a transaction ended, the event is
// ended, its detail says what the epoch and the clock show, and a re-initialized id still counts
// as a takeover for the collision rule.
func TestDiffUnknownEnd(t *testing.T) {
	at := t0.Add(2 * time.Second)
	for _, tc := range []struct {
		name   string
		start  time.Time
		next   Txn
		detail string
		reinit bool
	}{
		{"re-initialized", t0, tx("a", Empty, 7, 4, time.Time{}),
			"epoch 3→4: the id was initialized again; no COMMIT/ABORT marker read", true},
		{"past its timeout", t0.Add(-70 * time.Second), tx("a", Empty, 7, 4, time.Time{}),
			"open 1m12s, past its timeout 1m0s; no COMMIT/ABORT marker read", false},
		{"no bump", t0, tx("a", Empty, 7, 3, time.Time{}), "outcome not reported by the cluster", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs := Diff(snap(t0, tx("a", Ongoing, 7, 3, tc.start)), snap(at, tc.next))
			if len(evs) != 1 || evs[0].Kind != Ended || evs[0].Detail != tc.detail || evs[0].Reinit != tc.reinit {
				t.Fatalf("events = %+v, want one ended, detail %q, reinit %v", evs, tc.detail, tc.reinit)
			}
			if IsTakeover(evs[0]) != tc.reinit {
				t.Errorf("takeover %v, want %v", IsTakeover(evs[0]), tc.reinit)
			}
			h := NewHistory(8)
			h.Add(evs)
			if st := h.Stats("a"); st.Commits != 0 || st.Aborts != 0 || st.Last != Ended {
				t.Errorf("stats %+v: an unknown end is counted or shown as an outcome", st)
			}
		})
	}
}

func TestEventKindIsAbort(t *testing.T) {
	for k, want := range map[EventKind]bool{Began: false, Committed: false, Ended: false, Aborted: true, TimedOut: true, Fenced: true} {
		if got := k.IsAbort(); got != want {
			t.Errorf("%s.IsAbort() = %v", k, got)
		}
	}
}

// TestEventsBetweenLogEvents: a snapshot whose states were listed while the
// log's reader stayed live takes the log's events, not a Diff: the Diff
// would count again the commit the log reads later.
func TestEventsBetweenLogEvents(t *testing.T) {
	t0 := time.Unix(1000, 0)
	prev := &Snapshot{TakenAt: t0, Txns: []Txn{{ID: "a", State: Ongoing, ProducerID: 1}}}
	prev.Txns[0].SetStart(t0)
	next := &Snapshot{TakenAt: t0.Add(time.Second), Txns: []Txn{{ID: "a", State: CompleteCommit, ProducerID: 1}}}
	if evs := EventsBetween(prev, next); len(evs) != 1 || evs[0].Kind != Committed {
		t.Fatalf("polls: %v", evs)
	}
	next.Source.LogEvents = true
	if evs := EventsBetween(prev, next); len(evs) != 0 {
		t.Errorf("log events, none read yet: %v", evs)
	}
	logged := []Event{{At: t0.Add(500 * time.Millisecond), ID: "a", Kind: Committed}}
	next.Events = logged
	if evs := EventsBetween(prev, next); len(evs) != 1 || evs[0] != logged[0] {
		t.Errorf("log events: %v", evs)
	}
}

func TestUnansweredText(t *testing.T) {
	for _, c := range []struct {
		ids  []int32
		want string
	}{{nil, ""}, {[]int32{2}, "broker 2"}, {[]int32{1, 3}, "brokers 1, 3"}} {
		var bs []BrokerError
		for _, id := range c.ids {
			bs = append(bs, BrokerError{ID: id})
		}
		if got := UnansweredText(bs); got != c.want {
			t.Errorf("%v: %q, want %q", c.ids, got, c.want)
		}
	}
}
