package model

import (
	"slices"
	"testing"
	"time"
)

func pendingRow(id string, s State, pid int64) Txn {
	return Txn{ID: id, State: s, ProducerID: pid, Coordinator: 1, Pending: true}
}

func describedRow(id string, s State, pid int64, epoch int16) Txn {
	t := Txn{ID: id, State: s, ProducerID: pid, ProducerEpoch: epoch, Coordinator: 1, TimeoutMs: 60000, Described: true}
	if s.Open() {
		t.SetStart(t0.Add(-50 * time.Second))
		t.Partitions = []TopicPartition{{"orders", 0}}
	}
	return t
}

// A row not described yet knows its state and producer id only: Diff says
// nothing unless one of those changed, and then never draws on the epoch,
// start or timeout it does not know.
func TestDiffOfPendingRows(t *testing.T) {
	for _, tc := range []struct {
		name string
		p, n Txn
		want []EventKind
	}{
		{"listed, then described the same", pendingRow("a", Ongoing, 7), describedRow("a", Ongoing, 7, 9), nil},
		{"idle listed, then described the same", pendingRow("a", CompleteCommit, 7), describedRow("a", CompleteCommit, 7, 9), nil},
		{"described, then pending the same", describedRow("a", CompleteAbort, 7, 9), pendingRow("a", CompleteAbort, 7), nil},
		{"described open, then pending the same", describedRow("a", Ongoing, 7, 9), pendingRow("a", Ongoing, 7), nil},
		{"pending both", pendingRow("a", Empty, 7), pendingRow("a", Empty, 7), nil},
		// Real changes the listing shows are still reported, without a
		// made-up epoch jump (no fence) or deadline (no timeout).
		{"listed open, described committed", pendingRow("a", Ongoing, 7), describedRow("a", CompleteCommit, 7, 9), []EventKind{Committed}},
		{"listed open, described aborted", pendingRow("a", Ongoing, 7), describedRow("a", CompleteAbort, 7, 9), []EventKind{Aborted}},
		{"described open, listed aborted", describedRow("a", Ongoing, 7, 3), pendingRow("a", CompleteAbort, 7), []EventKind{Aborted}},
		{"listed idle, described open", pendingRow("a", CompleteCommit, 7), describedRow("a", Ongoing, 7, 9), []EventKind{Began}},
		{"new producer id", pendingRow("a", Ongoing, 7), describedRow("a", Ongoing, 8, 0), []EventKind{Ended, Began}},
		{"described open, listed with a new producer", describedRow("a", Ongoing, 7, 3), pendingRow("a", Ongoing, 8), []EventKind{Ended, Began}},
	} {
		prev := &Snapshot{TakenAt: t0, Txns: []Txn{tc.p}}
		next := &Snapshot{TakenAt: t0.Add(2 * time.Second), Txns: []Txn{tc.n}}
		var got []EventKind
		for _, e := range Diff(prev, next) {
			got = append(got, e.Kind)
			if tc.n.Pending && e.ProducerEpoch != UnknownEpoch {
				t.Errorf("%s: %s event of a listed-only row says epoch %d", tc.name, e.Kind, e.ProducerEpoch)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: events %v, want %v", tc.name, got, tc.want)
		}
	}
}

// An id new since the last poll, listed only, is reported from its listed
// state, its epoch unknown.
func TestDiffOfANewPendingRow(t *testing.T) {
	prev := &Snapshot{TakenAt: t0}
	next := &Snapshot{TakenAt: t0.Add(2 * time.Second), Txns: []Txn{pendingRow("a", Ongoing, 7), pendingRow("b", CompleteCommit, 8)}}
	evs := Diff(prev, next)
	if len(evs) != 2 || evs[0].Kind != Began || evs[1].Kind != Committed {
		t.Fatalf("events %+v, want a began and a committed", evs)
	}
	for _, e := range evs {
		if e.ProducerEpoch != UnknownEpoch {
			t.Errorf("%s: epoch %d, want unknown", e.ID, e.ProducerEpoch)
		}
	}
}

func TestFillReplacesPendingRowsOnly(t *testing.T) {
	s := &Snapshot{TakenAt: t0, Txns: []Txn{
		pendingRow("a", Ongoing, 1),
		describedRow("b", CompleteCommit, 2, 4),
		pendingRow("c", CompleteCommit, 3),
		pendingRow("d", Empty, 4),
		pendingRow("e", Ongoing, 5),
		pendingRow("f", CompleteAbort, 6),
	}}
	d := Descriptions{At: t0.Add(time.Second), Txns: []Txn{
		describedRow("a", Ongoing, 1, 2),
		describedRow("b", CompleteAbort, 2, 5), // a refresh took b since: left alone
		describedRow("c", Ongoing, 3, 1),       // began since it was listed
		{ID: "e", Err: "describe: no answer within the timeout"},
	}, Gone: []string{"d"}}
	out, evs := Fill(s, d)
	if len(s.Txns) != 6 || !s.Txns[0].Pending {
		t.Fatalf("Fill changed the snapshot it was given")
	}
	var ids []string
	for _, tx := range out.Txns {
		ids = append(ids, tx.ID)
	}
	if !slices.Equal(ids, []string{"a", "b", "c", "e", "f"}) {
		t.Fatalf("rows %v, want d dropped (expired) and the rest kept in order", ids)
	}
	if a := out.Txns[0]; !a.Described || a.Pending || a.ProducerEpoch != 2 {
		t.Errorf("a not filled: %+v", a)
	}
	if b := out.Txns[1]; b.State != CompleteCommit {
		t.Errorf("a row that was not pending was overwritten: %+v", b)
	}
	if e := out.Txns[3]; e.Pending || e.Described || e.Err == "" || e.State != Ongoing || e.ProducerID != 5 {
		t.Errorf("a failed describe should keep the listing with its error and stop being pending: %+v", e)
	}
	if f := out.Txns[4]; !f.Pending {
		t.Errorf("a row not asked about stopped being pending: %+v", f)
	}
	if len(evs) != 1 || evs[0].ID != "c" || evs[0].Kind != Began {
		t.Errorf("events %+v, want only c's begin", evs)
	}
	if PendingCount(out) != 1 || PendingCount(s) != 5 {
		t.Errorf("pending %d and %d, want 1 and 5", PendingCount(out), PendingCount(s))
	}
}

func TestNextPendingOrder(t *testing.T) {
	s := &Snapshot{Txns: []Txn{
		pendingRow("a", CompleteCommit, 1),
		pendingRow("b", Ongoing, 2),
		describedRow("c", Ongoing, 3, 0),
		pendingRow("d", Empty, 4),
		pendingRow("e", PrepareCommit, 5),
		pendingRow("f", CompleteAbort, 6),
	}}
	for _, tc := range []struct {
		first []string
		n     int
		want  []string
	}{
		{nil, 10, []string{"b", "e", "a", "d", "f"}},
		{nil, 3, []string{"b", "e", "a"}},
		{[]string{"f", "c", "d", "f"}, 4, []string{"f", "d", "b", "e"}},
		{[]string{"x"}, 1, []string{"b"}},
		{nil, 0, nil},
	} {
		var got []string
		for _, r := range NextPending(s, tc.first, tc.n) {
			got = append(got, r.ID)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("NextPending(%v, %d) = %v, want %v", tc.first, tc.n, got, tc.want)
		}
	}
}

// A describe batch copies every row: the copy keeps an index of its own (a
// lookup per listed id on the next refresh must not fall back to a search),
// and the snapshot on screen keeps its.
func TestFillKeepsTheIndex(t *testing.T) {
	for _, gone := range [][]string{nil, {"d"}} {
		s := &Snapshot{TakenAt: t0, Txns: []Txn{pendingRow("a", Ongoing, 1), pendingRow("c", Empty, 3), pendingRow("d", Empty, 4)}}
		s.Sort()
		out, _ := Fill(s, Descriptions{Txns: []Txn{describedRow("c", Empty, 3, 0)}, Gone: gone})
		if !out.index.fits(out.Txns) || !s.index.fits(s.Txns) {
			t.Fatalf("gone %v: the filled copy or the original lost its index", gone)
		}
		if c, ok := out.Txn("c"); !ok || !c.Described {
			t.Errorf("gone %v: Txn(c) = %+v, %v; want the filled row", gone, c, ok)
		}
		if _, ok := out.Txn("d"); ok == (len(gone) > 0) {
			t.Errorf("gone %v: Txn(d) found = %v", gone, ok)
		}
		if c, _ := s.Txn("c"); c.Described {
			t.Errorf("gone %v: the original snapshot's row was filled", gone)
		}
	}
}
