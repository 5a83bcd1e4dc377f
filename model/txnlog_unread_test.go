package model

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// unread is a record of partition part at off that could not be read, of id
// (""; its key could not be read), dated at sec.
func unread(id string, kind UnreadKind, part int32, off, sec int64) TxnLogRecord {
	return TxnLogRecord{ID: id, Unread: kind, Why: "test: " + string(kind), Partition: part, Offset: off, LastUpdateMs: sec * 1000}
}

func placed(r TxnLogRecord, part int32, off int64) TxnLogRecord {
	r.Partition, r.Offset = part, off
	return r
}

func millis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// A record the replay cannot read is counted by partition, with its first
// offset, and completeness is never claimed across it: its partition holds
// every transition only after it, whatever else says otherwise.
func TestReplayClaimsNothingAcrossAnUnreadRecord(t *testing.T) {
	at := time.Unix(500, 0) // when the end offsets were read
	for _, tc := range []struct {
		name     string
		ends     map[int32]int64 // nil: Bounds not told
		recs     []TxnLogRecord
		complete int64 // Unix ms
		whole    bool
		unread   []Unread
	}{
		{"never compacted: complete since the first record",
			map[int32]int64{0: 3, 1: 2, 2: 0},
			[]TxnLogRecord{placed(rec(Empty, 0, -1, 50), 0, 0), placed(rec(Ongoing, 0, 60, 60, "x"), 0, 1), placed(rec(PrepareCommit, 1, 60, 61, "x"), 0, 2),
				placed(rec(Empty, 0, -1, 120), 1, 0), placed(rec(Ongoing, 0, 130, 130, "x"), 1, 1)},
			50_000, true, nil},
		{"without the end offsets, a run from offset 0 proves nothing of its end",
			nil,
			[]TxnLogRecord{placed(rec(Empty, 0, -1, 50), 0, 0), placed(rec(Empty, 0, -1, 120), 1, 0)},
			120_000, false, nil},
		{"compacted: from the run the cleaner has not reached",
			map[int32]int64{0: 10, 1: 1},
			[]TxnLogRecord{placed(rec(CompleteCommit, 1, 10, 20), 0, 3), placed(rec(Ongoing, 1, 95, 95, "x"), 0, 8), placed(rec(PrepareCommit, 1, 95, 96, "x"), 0, 9),
				placed(rec(Empty, 0, -1, 120), 1, 0)},
			95_000, false, nil},
		{"a partition that held records and has none left: complete only from the read",
			map[int32]int64{0: 1, 1: 4},
			[]TxnLogRecord{placed(rec(Empty, 0, -1, 50), 0, 0)},
			500_000, false, nil},
		{"a record of a newer version in a log never compacted: complete only after it",
			map[int32]int64{0: 4, 1: 1},
			[]TxnLogRecord{placed(rec(Empty, 0, -1, 50), 0, 0), placed(rec(Ongoing, 0, 60, 60, "x"), 0, 1), unread("a", UnreadNewer, 0, 2, 70),
				placed(rec(Ongoing, 0, 80, 80, "x"), 0, 3), placed(rec(Empty, 0, -1, 40), 1, 0)},
			70_001, false, []Unread{{Partition: 0, Kind: UnreadNewer, Count: 1, FirstOffset: 2, LastOffset: 2, Why: "test: newer version"}}},
		{"the last record of its partition cannot be read: after its own time",
			map[int32]int64{0: 2},
			[]TxnLogRecord{placed(rec(Empty, 0, -1, 50), 0, 0), unread("", UnreadCorrupt, 0, 1, 90)},
			90_001, false, []Unread{{Partition: 0, Kind: UnreadCorrupt, Count: 1, FirstOffset: 1, LastOffset: 1, Why: "test: corrupt"}}},
		{"a timestamp older than the record before it is not believed",
			map[int32]int64{0: 2},
			[]TxnLogRecord{placed(rec(Empty, 0, -1, 50), 0, 0), unread("", UnreadCorrupt, 0, 1, 0)},
			50_001, false, []Unread{{Partition: 0, Kind: UnreadCorrupt, Count: 1, FirstOffset: 1, LastOffset: 1, Why: "test: corrupt"}}},
		{"a gap right after it does not move completeness before it",
			map[int32]int64{0: 9},
			[]TxnLogRecord{placed(rec(Empty, 0, -1, 50), 0, 0), unread("a", UnreadCorrupt, 0, 1, 90), placed(rec(Empty, 0, -1, 60), 0, 8)},
			90_001, false, []Unread{{Partition: 0, Kind: UnreadCorrupt, Count: 1, FirstOffset: 1, LastOffset: 1, Why: "test: corrupt"}}},
		{"several, of both kinds, in two partitions: counted by partition and kind",
			map[int32]int64{0: 6, 3: 3},
			[]TxnLogRecord{unread("a", UnreadNewer, 0, 0, 10), placed(rec(Empty, 0, -1, 20), 0, 1), unread("a", UnreadNewer, 0, 2, 30),
				unread("", UnreadCorrupt, 0, 3, 31), unread("a", UnreadNewer, 0, 4, 32), placed(rec(Empty, 0, -1, 40), 0, 5),
				placed(rec(Empty, 0, -1, 100), 3, 0), unread("b", UnreadCorrupt, 3, 1, 101), placed(rec(Empty, 0, -1, 102), 3, 2)},
			101_001, false, []Unread{
				{Partition: 0, Kind: UnreadCorrupt, Count: 1, FirstOffset: 3, LastOffset: 3, Why: "test: corrupt"},
				{Partition: 0, Kind: UnreadNewer, Count: 3, FirstOffset: 0, LastOffset: 4, Why: "test: newer version"},
				{Partition: 3, Kind: UnreadCorrupt, Count: 1, FirstOffset: 1, LastOffset: 1, Why: "test: corrupt"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rp := NewReplay(time.Time{}, 0)
			if tc.ends != nil {
				rp.Bounds(tc.ends, at)
			}
			for _, r := range tc.recs {
				rp.Add(r)
			}
			res := rp.Result()
			if millis(res.Complete) != tc.complete || res.Whole != tc.whole || !slices.Equal(res.Unread, tc.unread) {
				t.Errorf("complete %d ms, whole %v, unread %+v;\nwant %d ms, %v, %+v", millis(res.Complete), res.Whole, res.Unread,
					tc.complete, tc.whole, tc.unread)
			}
			if res.Whole && !res.Complete.Equal(res.Oldest) {
				t.Errorf("whole, complete %s, oldest %s", res.Complete, res.Oldest)
			}
		})
	}
}

// The rows of a followed log: a record that could not be read leaves its
// id unsure until the id's next record (each holds the id's whole state);
// one whose key could not be read leaves its partition unsure for good.
func TestTxnLogIsUnsureAfterAnUnreadRecord(t *testing.T) {
	now := time.Unix(1000, 0)
	l := NewTxnLog()
	l.Apply(rec(Ongoing, 0, 100, 100, "x"), false, now)
	if !l.Sure() {
		t.Fatal("unsure before anything unread")
	}
	l.Apply(unread("a", UnreadNewer, 0, 1, 101), true, now)
	if l.Sure() {
		t.Fatal("sure after a's record could not be read")
	}
	if row, _, _ := l.row("a"); row.State != Ongoing {
		t.Fatalf("a's row %+v: want the state before, kept", row)
	}
	l.Apply(rec(CompleteCommit, 1, 100, 103), true, now)
	if !l.Sure() {
		t.Fatal("still unsure after a's next record")
	}
	l.Apply(unread("", UnreadCorrupt, 0, 3, 104), true, now)
	l.Apply(rec(Ongoing, 1, 105, 105, "x"), true, now)
	if l.Sure() {
		t.Fatal("sure after a record of unknown id")
	}
}

// What an abort says of who ended it comes from the records around it: when
// one of them could not be read, the abort is not its producer's for sure.
func TestTxnLogAbortAroundAnUnreadRecord(t *testing.T) {
	for _, tc := range []struct {
		name string
		recs []TxnLogRecord
		want string
	}{
		{"the PrepareAbort cannot be read (it would say: the timeout)",
			[]TxnLogRecord{rec(Ongoing, 0, 100, 100, "x"), unread("a", UnreadNewer, 0, 1, 160), rec(CompleteAbort, 1, 100, 160)},
			"began(1 partition), aborted(" + unsureAbort + ")"},
		{"the record after the abort cannot be read (it might be a fence's Empty)",
			[]TxnLogRecord{rec(Ongoing, 0, 100, 100, "x"), rec(PrepareAbort, 1, 100, 103, "x"), rec(CompleteAbort, 1, 100, 103),
				unread("a", UnreadCorrupt, 0, 3, 103)},
			"began(1 partition), prepare-abort, aborted(" + unsureAbort + ")"},
		{"a fence after an unread PrepareAbort is still a fence: the Empty says so",
			[]TxnLogRecord{rec(Ongoing, 0, 100, 100, "x"), unread("a", UnreadNewer, 0, 1, 105), rec(CompleteAbort, 1, 100, 105), rec(Empty, 2, -1, 105)},
			"began(1 partition), fenced(epoch 1→2)"},
		{"the row before an unread record is no evidence: a begin after it is told from itself",
			[]TxnLogRecord{rec(Ongoing, 0, 100, 100, "x"), unread("a", UnreadNewer, 0, 1, 101), rec(Ongoing, 0, 100, 102, "x", "y")},
			"began(1 partition), began(2 partitions)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := NewTxnLog()
			now := time.Unix(1000, 0)
			for _, r := range tc.recs {
				l.Apply(r, true, now)
			}
			if got := logKinds(l.Take(now.Add(DefaultGrace))); got != tc.want {
				t.Errorf("events:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// One line says how many records could not be read and where, the first
// partitions with the reason of their first.
func TestUnreadLine(t *testing.T) {
	var u Unreads
	if UnreadLine(u.List()) != "" {
		t.Fatal("a line for nothing")
	}
	u.Add(unread("a", UnreadNewer, 3, 17, 1))
	if got, want := UnreadLine(u.List()), "1 record of __transaction_state txnscope cannot read: partition 3 offset 17 (newer version: test: newer version)"; got != want {
		t.Fatalf("one:\n got %s\nwant %s", got, want)
	}
	u.Add(unread("a", UnreadNewer, 3, 40, 1))
	for p := range int32(4) {
		u.Add(unread("", UnreadCorrupt, 10+p, 5, 1))
	}
	got := UnreadLine(u.List())
	for _, want := range []string{"6 records", "in 5 partitions", "partition 3 offsets 17–40 (2)", "partition 10 offset 5 (corrupt", "; 2 more"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	if u.Count() != 6 {
		t.Errorf("count %d", u.Count())
	}
}
