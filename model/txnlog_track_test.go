package model

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// rec is a record of id "a" (producer id 7, timeout 60 s unless changed) in
// the shorthand the table uses: state, epoch, start and last update in
// seconds, partitions.
func rec(state State, epoch int16, start, at int64, parts ...string) TxnLogRecord {
	r := TxnLogRecord{ID: "a", State: state, ProducerID: 7, ProducerEpoch: epoch, TimeoutMs: 60000,
		StartMs: -1, LastUpdateMs: at * 1000, PrevProducerID: -1, NextProducerID: -1, ClientTxnVersion: 2}
	if start >= 0 {
		r.StartMs = start * 1000
	}
	for _, p := range parts {
		r.Partitions = append(r.Partitions, TopicPartition{Topic: p})
	}
	return r
}

func v1(r TxnLogRecord) TxnLogRecord { r.ClientTxnVersion = 0; return r }

func timeout(r TxnLogRecord, ms int32) TxnLogRecord { r.TimeoutMs = ms; return r }

// logKinds renders events as "kind(detail)" joined by ", ".
func logKinds(evs []Event) string {
	var out []string
	for _, e := range evs {
		s := string(e.Kind)
		if e.Detail != "" {
			s += "(" + e.Detail + ")"
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}

func TestTxnLogTellsHowEachTransactionEnded(t *testing.T) {
	const ongoing = 100 // the transactions below start at 100 s
	for _, tc := range []struct {
		name string
		recs []TxnLogRecord
		own  bool // txnscope force-terminates the transaction open at epoch 0
		want string
	}{
		{"a commit under version 2, partitions added on the way",
			[]TxnLogRecord{rec(Empty, 0, -1, 90), rec(Ongoing, 0, ongoing, 100, "x"), rec(Ongoing, 0, ongoing, 101, "x", "y"),
				rec(PrepareCommit, 1, ongoing, 102, "x", "y"), rec(CompleteCommit, 1, ongoing, 102)},
			false, "began(1 partition), partitions added(+1: 2 partitions), prepare-commit, committed(open 2s)"},
		{"the producer aborts, then begins again (version 2: no Empty between)",
			[]TxnLogRecord{rec(Ongoing, 0, ongoing, 100, "x"), rec(PrepareAbort, 1, ongoing, 103, "x"), rec(CompleteAbort, 1, ongoing, 103),
				rec(Ongoing, 1, 104, 104, "x")},
			false, "began(1 partition), prepare-abort, aborted(open 3s), began(1 partition)"},
		{"the producer aborts and goes quiet",
			[]TxnLogRecord{rec(Ongoing, 0, ongoing, 100, "x"), rec(PrepareAbort, 1, ongoing, 103, "x"), rec(CompleteAbort, 1, ongoing, 103)},
			false, "began(1 partition), prepare-abort, aborted(open 3s)"},
		{"the coordinator aborts at the timeout",
			[]TxnLogRecord{rec(Ongoing, 0, ongoing, 100, "x"), rec(PrepareAbort, 1, ongoing, 160, "x"), rec(CompleteAbort, 1, ongoing, 160)},
			false, "began(1 partition), prepare-abort(past its timeout), aborted at timeout(open 1m0s, timeout 1m0s)"},
		{"a new producer with the same id fences the open transaction",
			[]TxnLogRecord{rec(Ongoing, 0, ongoing, 100, "x"), rec(PrepareAbort, 1, ongoing, 105, "x"), rec(CompleteAbort, 1, ongoing, 105),
				rec(Empty, 2, -1, 105)},
			false, "began(1 partition), prepare-abort, fenced(epoch 0→2)"},
		{"the producer aborts and is initialized again 19 s later, the records read at once (a replay): an abort, as live",
			[]TxnLogRecord{rec(Ongoing, 0, ongoing, 100, "x"), rec(PrepareAbort, 1, ongoing, 103, "x"), rec(CompleteAbort, 1, ongoing, 103),
				rec(Empty, 2, -1, 122)},
			false, "began(1 partition), prepare-abort, aborted(open 3s), initialized(epoch 1→2)"},
		{"a fence whose Empty came 1 s after the abort, read at once",
			[]TxnLogRecord{rec(Ongoing, 0, ongoing, 100, "x"), rec(PrepareAbort, 1, ongoing, 105, "x"), rec(CompleteAbort, 1, ongoing, 105),
				rec(Empty, 2, -1, 106)},
			false, "began(1 partition), prepare-abort, fenced(epoch 0→2)"},
		{"kafka-transactions.sh force-terminates it (its own timeout)",
			[]TxnLogRecord{rec(Ongoing, 0, ongoing, 100, "x"), rec(PrepareAbort, 1, ongoing, 105, "x"), rec(CompleteAbort, 1, ongoing, 105),
				timeout(rec(Empty, 2, -1, 105), 30000)},
			false, "began(1 partition), prepare-abort, force-terminated(by an admin: timeout 1m0s→30s)"},
		{"txnscope force-terminates it (one InitProducerId: no Empty follows)",
			[]TxnLogRecord{rec(Ongoing, 0, ongoing, 100, "x"), rec(PrepareAbort, 1, ongoing, 105, "x"), rec(CompleteAbort, 1, ongoing, 105)},
			true, "began(1 partition), prepare-abort, force-terminated(by txnscope)"},
		{"txnscope force-terminates it past its timeout",
			[]TxnLogRecord{rec(Ongoing, 0, ongoing, 100, "x"), rec(PrepareAbort, 1, ongoing, 170, "x"), rec(CompleteAbort, 1, ongoing, 170)},
			true, "began(1 partition), prepare-abort(past its timeout), force-terminated(by txnscope)"},
		{"version 1: txnscope force-terminates it",
			[]TxnLogRecord{v1(rec(Ongoing, 0, ongoing, 100, "x")), v1(rec(PrepareAbort, 1, ongoing, 105, "x")), v1(rec(CompleteAbort, 1, ongoing, 105))},
			true, "began(1 partition), prepare-abort, force-terminated(by txnscope)"},
		{"version 1: the producer aborts (no epoch bump)",
			[]TxnLogRecord{v1(rec(Ongoing, 0, ongoing, 100, "x")), v1(rec(PrepareAbort, 0, ongoing, 103, "x")), v1(rec(CompleteAbort, 0, ongoing, 103)),
				v1(rec(Ongoing, 0, 104, 104, "x"))},
			false, "began(1 partition), prepare-abort, aborted(open 3s), began(1 partition)"},
		{"version 1: a fence bumps the epoch at PrepareAbort",
			[]TxnLogRecord{v1(rec(Ongoing, 0, ongoing, 100, "x")), v1(rec(PrepareAbort, 1, ongoing, 105, "x")), v1(rec(CompleteAbort, 1, ongoing, 105)),
				v1(rec(Empty, 2, -1, 105))},
			false, "began(1 partition), prepare-abort, fenced(epoch 0→2)"},
		{"version 1: a fence whose producer never came back",
			[]TxnLogRecord{v1(rec(Ongoing, 0, ongoing, 100, "x")), v1(rec(PrepareAbort, 1, ongoing, 105, "x")), v1(rec(CompleteAbort, 1, ongoing, 105))},
			false, "began(1 partition), prepare-abort, fenced(another client's InitProducerId; nobody took the id after)"},
		{"version 1: a client of version 2 fenced it (its abort is written with the fencer's version)",
			[]TxnLogRecord{v1(rec(Ongoing, 0, ongoing, 100, "x")), rec(PrepareAbort, 0, ongoing, 105, "x"), rec(CompleteAbort, 0, ongoing, 105)},
			false, "began(1 partition), prepare-abort, fenced(another client's InitProducerId; nobody took the id after)"},
		{"version 1: the timeout bumps the epoch too",
			[]TxnLogRecord{v1(rec(Ongoing, 0, ongoing, 100, "x")), v1(rec(PrepareAbort, 1, ongoing, 161, "x")), v1(rec(CompleteAbort, 1, ongoing, 161))},
			false, "began(1 partition), prepare-abort(past its timeout), aborted at timeout(open 1m1s, timeout 1m0s)"},
		{"an idle id initialized again: nothing aborted",
			[]TxnLogRecord{rec(CompleteCommit, 1, 90, 95), rec(Empty, 2, -1, 120)},
			false, "committed(open 5s), initialized(epoch 1→2)"},
		{"a Complete record written twice (the coordinator moved) is one commit",
			[]TxnLogRecord{rec(PrepareCommit, 1, ongoing, 102, "x"), rec(CompleteCommit, 1, ongoing, 102), rec(CompleteCommit, 1, ongoing, 102)},
			false, "prepare-commit, committed(open 2s)"},
		{"expiry: Dead, then the tombstone: one event",
			[]TxnLogRecord{rec(CompleteCommit, 1, 90, 95), rec(Dead, 1, -1, 700), {ID: "a", Tombstone: true, LastUpdateMs: 700000}},
			false, "committed(open 5s), expired"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := NewTxnLog()
			if tc.own {
				l.Terminated("a", 7, 0)
			}
			got := applyAll(l, tc.recs)
			if s := logKinds(got); s != tc.want {
				t.Errorf("events:\n got %s\nwant %s", s, tc.want)
			}
			for _, e := range got {
				if !e.Logged || e.ID != "a" {
					t.Errorf("event %+v: not logged, or of another id", e)
				}
			}
		})
	}
}

// applyAll gives l the records as news, then takes what it says once an
// abort's grace is over.
func applyAll(l *TxnLog, recs []TxnLogRecord) []Event {
	now := time.Unix(1000, 0)
	for _, r := range recs {
		l.Apply(r, true, now)
	}
	return l.Take(now.Add(DefaultGrace))
}

// An abort waits for its next record, Grace at most: what the lead engineer
// sees is late by that much, never wrong.
func TestTxnLogHoldsAnAbortForItsGraceOnly(t *testing.T) {
	l := NewTxnLog()
	now := time.Unix(1000, 0)
	for _, r := range []TxnLogRecord{rec(Ongoing, 0, 100, 100, "x"), rec(PrepareAbort, 1, 100, 101, "x"), rec(CompleteAbort, 1, 100, 101)} {
		l.Apply(r, true, now)
	}
	if got := logKinds(l.Take(now.Add(DefaultGrace - time.Millisecond))); got != "began(1 partition), prepare-abort" {
		t.Fatalf("before the grace: %s", got)
	}
	if got := logKinds(l.Take(now.Add(DefaultGrace))); got != "aborted(open 1s)" {
		t.Fatalf("after the grace: %s", got)
	}
	// Settled once: the Empty of a later restart is an initialization, not a fence.
	l.Apply(rec(Empty, 2, -1, 200), true, now.Add(time.Minute))
	if got := logKinds(l.Take(now.Add(time.Minute))); got != "initialized(epoch 1→2)" {
		t.Fatalf("a restart after the abort settled: %s", got)
	}
}

// The ending events say when their transaction began, how long it was open
// and how many partitions it held, in the coordinator's time.
func TestTxnLogEndingEventsCarryTheTransaction(t *testing.T) {
	l := NewTxnLog()
	now := time.Unix(5000, 0)
	for _, r := range []TxnLogRecord{rec(Ongoing, 0, 100, 100, "x", "y"), rec(PrepareCommit, 1, 100, 107, "x", "y"), rec(CompleteCommit, 1, 100, 108)} {
		l.Apply(r, true, now)
	}
	evs := l.Take(now)
	c := evs[len(evs)-1]
	if c.Kind != Committed || !c.Begun.Equal(time.Unix(100, 0)) || !c.At.Equal(time.Unix(108, 0)) || c.Parts != 2 || c.ProducerEpoch != 1 {
		t.Fatalf("commit event %+v", c)
	}
	if b := evs[0]; b.Kind != Began || !b.At.Equal(time.Unix(100, 0)) {
		t.Fatalf("began event %+v", b)
	}
}

// Reading the log's past builds the state and says nothing.
func TestTxnLogStartUpReadIsSilent(t *testing.T) {
	l := NewTxnLog()
	now := time.Unix(1000, 0)
	for i := 5; i >= 0; i-- {
		r := rec(CompleteCommit, 1, 90, 95)
		r.ID, r.Partition = fmt.Sprintf("id-%d", i), int32(i%3)
		l.Apply(r, false, now)
	}
	r := rec(Ongoing, 0, 100, 100, "x")
	r.ID = "id-3"
	l.Apply(r, false, now)
	if evs := l.Take(now.Add(time.Hour)); len(evs) != 0 {
		t.Fatalf("the start-up read said %s", logKinds(evs))
	}
	rows := l.Snapshot(func(p int32) int32 { return 10 + p }).Txns
	var ids []string
	for _, t := range rows {
		ids = append(ids, t.ID)
	}
	if !slices.Equal(ids, []string{"id-0", "id-1", "id-2", "id-3", "id-4", "id-5"}) {
		t.Fatalf("rows %v", ids)
	}
	if r := rows[3]; r.State != Ongoing || r.Coordinator != 10 || !r.Described || r.StartUnixMs != 100000 || len(r.Partitions) != 1 {
		t.Fatalf("row id-3: %+v", r)
	}
	if rows[4].Coordinator != 11 || rows[0].StartUnixMs != 90000 {
		t.Fatalf("rows %+v", rows)
	}
}

// Expired ids leave the rows; new ones slot in by id; both survive the
// compaction of the rows.
func TestTxnLogRowsFollowExpiryAndNewIDs(t *testing.T) {
	l := NewTxnLog()
	now := time.Unix(1000, 0)
	add := func(id string, tomb bool) {
		r := rec(CompleteCommit, 1, 90, 95)
		r.ID, r.Tombstone = id, tomb
		l.Apply(r, true, now)
	}
	for _, id := range []string{"d", "b", "f", "a", "c", "e"} {
		add(id, false)
	}
	l.Snapshot(func(int32) int32 { return 0 })
	add("b", true)
	add("e", true)
	add("bb", false)
	add("e", false) // back again
	var ids []string
	for _, t := range l.Snapshot(func(int32) int32 { return 0 }).Txns {
		ids = append(ids, t.ID)
	}
	if !slices.Equal(ids, []string{"a", "bb", "c", "d", "e", "f"}) || l.Len() != 6 {
		t.Fatalf("rows %v (len %d)", ids, l.Len())
	}
	if r, _, ok := l.row("e"); !ok || r.ID != "e" || r.State != CompleteCommit {
		t.Fatalf("e after the rows were rebuilt: %+v", r)
	}
}

// A replay of the log keeps the events since a time, and says from when
// they are complete: the part of each partition the cleaner has not reached,
// a run of consecutive offsets.
func TestReplayKeepsTheWindowAndSaysWhereItIsComplete(t *testing.T) {
	at := func(r TxnLogRecord, part int32, off int64) TxnLogRecord { r.Partition, r.Offset = part, off; return r }
	other := func(r TxnLogRecord) TxnLogRecord { r.ID = "b"; return r }
	rp := NewReplay(time.Unix(100, 0), 0)
	for _, r := range []TxnLogRecord{
		// partition 0: compacted up to offset 7, a commit of long ago left
		at(rec(CompleteCommit, 1, 10, 20), 0, 3),
		at(rec(Ongoing, 1, 95, 95, "x"), 0, 7),
		at(rec(PrepareAbort, 2, 95, 101, "x"), 0, 8),
		at(rec(CompleteAbort, 2, 95, 101), 0, 9),
		at(rec(Ongoing, 2, 102, 102, "x"), 0, 10),
		// partition 1: never compacted, from 50 s
		at(other(rec(Empty, 0, -1, 50)), 1, 0),
		at(other(rec(Ongoing, 0, 120, 120, "x")), 1, 1),
		at(other(rec(PrepareCommit, 1, 120, 121, "x")), 1, 2),
		at(other(rec(CompleteCommit, 1, 120, 121)), 1, 3),
	} {
		rp.Add(r)
	}
	res := rp.Result()
	complete, oldest := res.Complete, res.Oldest
	var got []string
	for _, e := range res.Events {
		got = append(got, e.ID+" "+string(e.Kind))
	}
	want := []string{"a prepare-abort", "a aborted", "a began", "b began", "b prepare-commit", "b committed"}
	if !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	if !complete.Equal(time.Unix(95, 0)) || !oldest.Equal(time.Unix(20, 0)) {
		t.Fatalf("complete since %s, oldest %s; want 95 s and 20 s", complete, oldest)
	}
}

// A replay of a Streams thread's own abort (epoch 230) and its Empty 19 s
// later at epoch 231, the thread initializing the id again, tells an abort,
// as the live view did (issue 23: it was a fence, epoch 229→231, in fences_5m);
// the same Empty 100 ms after the abort is a fence.
func TestReplayTellsAnAbortFromAFenceByTheRecordsTimes(t *testing.T) {
	for _, tc := range []struct {
		emptyMs int64
		want    []string
	}{
		{122_000, []string{"a began", "a prepare-abort", "a aborted", "a initialized"}},
		{103_100, []string{"a began", "a prepare-abort", "a fenced"}},
	} {
		rp := NewReplay(time.Time{}, 0)
		empty := rec(Empty, 231, -1, 0)
		empty.LastUpdateMs = tc.emptyMs
		for i, r := range []TxnLogRecord{rec(Ongoing, 229, 100, 100, "x"), rec(PrepareAbort, 230, 100, 103, "x"), rec(CompleteAbort, 230, 100, 103), empty} {
			r.Offset = int64(i)
			rp.Add(r)
		}
		var got []string
		for _, e := range rp.Result().Events {
			got = append(got, e.ID+" "+string(e.Kind))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Empty at %d ms: events %q, want %q", tc.emptyMs, got, tc.want)
		}
	}
}

// A fence is told as a fence whatever another partition's records read in
// between say of the time: each partition's read has its own clock, and
// another's newer records said the fencing Empty had not come within Grace.
func TestReplayTellsAFenceAcrossPartitionsReadInBetween(t *testing.T) {
	b := rec(CompleteCommit, 1, 199, 200)
	b.ID, b.Partition = "b", 1
	rp := NewReplay(time.Time{}, 0)
	for i, r := range []TxnLogRecord{rec(Ongoing, 1, 90, 90, "x"), rec(PrepareAbort, 2, 90, 99, "x"), rec(CompleteAbort, 2, 90, 99), b, rec(Empty, 3, -1, 99)} {
		r.Offset = int64(i)
		rp.Add(r)
	}
	var got []string
	for _, e := range rp.Result().Events {
		got = append(got, e.ID+" "+string(e.Kind))
	}
	if want := []string{"a began", "a prepare-abort", "a fenced", "b committed"}; !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
}

// A replay bounded to the newest events keeps exactly those, whatever the
// order the partitions come in.
func TestReplayKeepsTheNewest(t *testing.T) {
	rp := NewReplay(time.Time{}, 3)
	for i, sec := range []int64{50, 10, 70, 20, 60, 30, 80, 40} {
		r := rec(CompleteCommit, 1, sec-1, sec)
		r.ID, r.Partition = fmt.Sprint(i), int32(i%2)
		rp.Add(r)
	}
	var got []int64
	for _, e := range rp.Result().Events {
		got = append(got, e.At.Unix())
	}
	if !slices.Equal(got, []int64{60, 70, 80}) {
		t.Fatalf("kept %v, want the newest three", got)
	}
}

// The rows a TxnLog hands out are those of a plain map of its records,
// sorted, found through the snapshot's index, whatever mix of new, changed,
// expired ids and leader moves came in between two snapshots.
func TestTxnLogSnapshotsMatchAPlainMap(t *testing.T) {
	// Snapshots every round, or rarely: then many merges in a row are made
	// in place (none handed out), with or without room made ahead. The
	// first one late: a long start-up read of ids expiring and coming back,
	// unsorted until then.
	for _, c := range []struct{ pending, every, expect, first int }{
		{maxPending, 1, 0, 0}, {5, 1, 0, 0}, {5, 9, 0, 0}, {3, 9, 150, 0}, {2, 40, 0, 0},
		{5, 1, 0, 150}, {3, 9, 150, 100}, {maxPending, 1, 0, 299}, {maxPending, 1, 40, 250},
	} {
		t.Run(fmt.Sprintf("pending %d every %d expect %d first %d", c.pending, c.every, c.expect, c.first), func(t *testing.T) {
			defer func(was int) { maxPending = was }(maxPending)
			maxPending = c.pending
			testSnapshotsMatchAPlainMap(t, c.every, c.expect, c.first)
		})
	}
}

func testSnapshotsMatchAPlainMap(t *testing.T, every, expect, first int) {
	r := rand.New(rand.NewPCG(1, 2))
	l := NewTxnLog()
	l.Expect(expect)
	plain := map[string]TxnLogRecord{}
	states := []State{Empty, Ongoing, PrepareCommit, CompleteCommit, PrepareAbort, CompleteAbort, Dead}
	shift := int32(0)
	now := time.Unix(1000, 0)
	var (
		prev     *Snapshot
		prevRows []Txn
	)
	for round := range 300 {
		for range r.IntN(40) {
			rec := rec(states[r.IntN(len(states))], int16(r.IntN(5)), 100, 100+int64(round))
			rec.ID = fmt.Sprintf("id-%03d", r.IntN(200))
			rec.Partition = int32(r.IntN(5))
			if r.IntN(10) == 0 {
				rec = TxnLogRecord{ID: rec.ID, Tombstone: true, Partition: rec.Partition}
			}
			l.Apply(rec, r.IntN(2) == 0, now)
			if rec.Tombstone || rec.State == Dead {
				delete(plain, rec.ID)
			} else {
				plain[rec.ID] = rec
			}
		}
		if round < first || round%every != 0 {
			continue
		}
		if r.IntN(20) == 0 {
			shift++ // the log partitions change leaders
		}
		s := l.Snapshot(func(p int32) int32 { return p + 10*shift })
		// The rows are shared with the log: what it hands out never changes.
		if prev != nil && !slices.EqualFunc(prev.Txns, prevRows, func(a, b Txn) bool { return a.ID == b.ID && a.State == b.State && a.Coordinator == b.Coordinator }) {
			t.Fatalf("round %d: the previous snapshot's rows changed", round)
		}
		// And so does its index (a merge since may reuse only slots nobody holds).
		for i, row := range prevRows {
			if pos, ok := prev.Pos(row.ID); !ok || pos != i {
				t.Fatalf("round %d: the previous snapshot finds %s at %d (%v), want %d", round, row.ID, pos, ok, i)
			}
		}
		prev, prevRows = s, slices.Clone(s.Txns)
		var want []string
		for id := range plain {
			want = append(want, id)
		}
		slices.Sort(want)
		if len(s.Txns) != len(want) {
			t.Fatalf("round %d: %d rows, want %d", round, len(s.Txns), len(want))
		}
		for i, id := range want {
			got, w := s.Txns[i], plain[id]
			if got.ID != id || got.State != w.State || got.ProducerEpoch != w.ProducerEpoch || got.Coordinator != w.Partition+10*shift {
				t.Fatalf("round %d row %d: %+v, want %+v (leaders shifted %d)", round, i, got, w, shift)
			}
			if pos, ok := s.Pos(id); !ok || pos != i || !s.index.fits(s.Txns) {
				t.Fatalf("round %d: %s at %d (%v), want %d through the index", round, id, pos, ok, i)
			}
		}
		if l.Len() != len(want) {
			t.Fatalf("round %d: Len %d, want %d", round, l.Len(), len(want))
		}
	}
}
