package model

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// randomSnap is n txns with ids drawn from a small space (so that
// consecutive snapshots share most ids, some repeat within one, and some
// are prefixes of others), random states and producers, in random order.
func randomSnap(r *rand.Rand, n int, at time.Time) *Snapshot {
	states := []State{Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit, CompleteAbort, Dead, PrepareEpochFence}
	s := &Snapshot{TakenAt: at, EpochBumpsOnEnd: r.IntN(2) == 0}
	for range n {
		id := fmt.Sprintf("job-%d-%d", r.IntN(7), r.IntN(3*n+1))
		if r.IntN(10) == 0 {
			id = id[:len(id)-1]
		}
		t := Txn{ID: id, State: states[r.IntN(len(states))], ProducerID: int64(r.IntN(5)), ProducerEpoch: int16(r.IntN(4)),
			TimeoutMs: int32(r.IntN(3)) * 30000, Described: r.IntN(4) != 0}
		if r.IntN(2) == 0 {
			t.SetStart(at.Add(-time.Duration(r.IntN(120)) * time.Second))
		}
		if r.IntN(4) == 0 {
			t.SetPrevOutcome(states[r.IntN(len(states))])
		}
		if r.IntN(3) == 0 {
			t.Partitions = []TopicPartition{{"orders", int32(r.IntN(4))}}
		}
		s.Txns = append(s.Txns, t)
	}
	for p := r.IntN(6); p > 0; p-- {
		s.Partitions = append(s.Partitions, Partition{TopicPartition: TopicPartition{fmt.Sprint("t", r.IntN(3)), int32(r.IntN(5))}})
	}
	return s
}

// oldSort and oldTxn are the lookups as they were before the index: the
// reference the indexed ones must agree with.
func oldSort(s *Snapshot) {
	sort.SliceStable(s.Txns, func(i, j int) bool { return s.Txns[i].ID < s.Txns[j].ID })
	sort.SliceStable(s.Partitions, func(i, j int) bool { return s.Partitions[i].TopicPartition.Less(s.Partitions[j].TopicPartition) })
}

func oldTxn(s *Snapshot, id string) (Txn, bool) {
	i := sort.Search(len(s.Txns), func(i int) bool { return s.Txns[i].ID >= id })
	if i < len(s.Txns) && s.Txns[i].ID == id {
		return s.Txns[i], true
	}
	return Txn{}, false
}

// oldDiff is Diff's merge as it was, over the same per-id rules.
func oldDiff(prev, next *Snapshot) []Event {
	if prev == nil || next == nil {
		return nil
	}
	var out []Event
	i, j := 0, 0
	for i < len(prev.Txns) || j < len(next.Txns) {
		switch {
		case j >= len(next.Txns) || (i < len(prev.Txns) && prev.Txns[i].ID < next.Txns[j].ID):
			i++
		case i >= len(prev.Txns) || next.Txns[j].ID < prev.Txns[i].ID:
			out = appendNew(out, next.TakenAt, next.Txns[j])
			j++
		default:
			out = appendChange(out, prev.TakenAt, next.TakenAt, prev.Txns[i], next.Txns[j], next.EpochBumpsOnEnd)
			i++
			j++
		}
	}
	return out
}

// TestIndexedLookupsMatchTheOldOnes: on random snapshots, Sort orders as the
// old sort did, Txn finds what a binary search finds (ids present, absent,
// repeated), also after a row is edited or the rows resliced, and
// Diff and the history report the same events.
func TestIndexedLookupsMatchTheOldOnes(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for round := range 300 {
		n := r.IntN(200)
		prev, next := randomSnap(r, n, t0), randomSnap(r, n+r.IntN(20), t0.Add(2*time.Second))
		for _, s := range []*Snapshot{prev, next} {
			want := &Snapshot{Txns: slices.Clone(s.Txns), Partitions: slices.Clone(s.Partitions)}
			oldSort(want)
			s.Sort()
			if !reflect.DeepEqual(s.Txns, want.Txns) || !reflect.DeepEqual(s.Partitions, want.Partitions) {
				t.Fatalf("round %d: Sort differs from the old sort", round)
			}
			s.Sort() // already sorted: nothing moves, the index stays
			if !reflect.DeepEqual(s.Txns, want.Txns) {
				t.Fatalf("round %d: a second Sort changed the order", round)
			}
			checkLookups(t, s, round)
		}
		got, want := Diff(prev, next), oldDiff(prev, next)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: Diff gives\n%v\nthe old merge\n%v", round, got, want)
		}
		// Changed behind the index's back: a row edited in place, resliced.
		if len(next.Txns) > 2 {
			next.Txns[1].State, next.Txns[1].Err = Dead, "edited"
			checkLookups(t, next, round)
			next.Txns = next.Txns[1:]
			checkLookups(t, next, round)
		}
	}
}

func checkLookups(t *testing.T, s *Snapshot, round int) {
	t.Helper()
	ids := []string{"", "job-", "zzz", "job-3-1000000"}
	for _, tx := range s.Txns {
		ids = append(ids, tx.ID, tx.ID+"0", tx.ID[:max(len(tx.ID)-1, 0)])
	}
	for _, id := range ids {
		got, ok := s.Txn(id)
		want, wantOK := oldTxn(s, id)
		if ok != wantOK || !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: Txn(%q) = %v %v, the binary search %v %v", round, id, got.ID, ok, want.ID, wantOK)
		}
	}
}

func TestSortEmptyAndOne(t *testing.T) {
	for _, n := range []int{0, 1} {
		s := &Snapshot{Txns: make([]Txn, n)}
		s.Sort()
		if _, ok := s.Txn("x"); ok {
			t.Fatalf("n=%d: found an id that is not there", n)
		}
		if _, ok := s.Txn(""); ok != (n == 1) {
			t.Fatalf("n=%d: the empty id", n)
		}
	}
}

// TestProducersOnMatchesByProducerID: for every producer with a transaction
// open on the partitions, the restricted index names the same transaction as
// the full one, and it holds nothing else: not the idle producers a
// partition's state keeps by the ten thousand.
func TestProducersOnMatchesByProducerID(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for round := range 200 {
		s := randomSnap(r, r.IntN(60), t0)
		for i := range s.Partitions {
			for k := r.IntN(4); k > 0; k-- {
				start := int64(r.IntN(3)) - 1 // -1: no transaction open there
				s.Partitions[i].Producers = append(s.Partitions[i].Producers, Producer{ProducerID: int64(r.IntN(8)), CurrentTxnStartOffset: start})
			}
		}
		s.Sort()
		all, on := ByProducerID(s), ProducersOn(s)
		seen := map[int64]bool{}
		for _, p := range s.Partitions {
			for _, pr := range p.Producers {
				if pr.CurrentTxnStartOffset < 0 {
					continue
				}
				seen[pr.ProducerID] = true
				if on[pr.ProducerID] != all[pr.ProducerID] {
					t.Fatalf("round %d: producer %d: %v, want %v", round, pr.ProducerID, on[pr.ProducerID], all[pr.ProducerID])
				}
			}
		}
		for pid := range on {
			if !seen[pid] {
				t.Fatalf("round %d: producer %d has no transaction open on any partition", round, pid)
			}
		}
	}
}

// TestShareStringsKeepsTheText: after ShareStrings, next says exactly what
// it said before, field by field, and Diff finds the same events.
func TestShareStringsKeepsTheText(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for round := range 200 {
		prev, next := randomSnap(r, r.IntN(100), t0), randomSnap(r, r.IntN(100), t0.Add(2*time.Second))
		for i := range next.Txns {
			if r.IntN(3) == 0 {
				next.Txns[i].Err = fmt.Sprint("describe: error ", r.IntN(3))
			}
		}
		prev.Sort()
		next.Sort()
		want := &Snapshot{Txns: slices.Clone(next.Txns)}
		for i := range want.Txns {
			// Strings of their own, so that sharing cannot change want.
			tx := &want.Txns[i]
			tx.ID, tx.Err = string([]byte(tx.ID)), string([]byte(tx.Err))
		}
		wantEvents := Diff(prev, next)
		ShareStrings(prev, next)
		if !reflect.DeepEqual(next.Txns, want.Txns) {
			t.Fatalf("round %d: ShareStrings changed the snapshot", round)
		}
		if got := Diff(prev, next); !reflect.DeepEqual(got, wantEvents) {
			t.Fatalf("round %d: Diff after ShareStrings: %v, before %v", round, got, wantEvents)
		}
		for _, tx := range next.Txns {
			if p, ok := oldTxn(prev, tx.ID); ok && unsafe.StringData(p.ID) != unsafe.StringData(tx.ID) {
				t.Fatalf("round %d: %q is held twice", round, tx.ID)
			}
		}
		checkLookups(t, next, round)
	}
}

// oldRows is Rows as it was before only the rows with a sort value were
// sorted: the reference.
func oldRows(s *Snapshot, h *History, q Query, now time.Time) []int {
	needle := strings.ToLower(q.Text)
	keyed := make([]sortRow, 0, len(s.Txns))
	for i := range s.Txns {
		t := &s.Txns[i]
		if needle != "" && !strings.Contains(strings.ToLower(t.ID), needle) {
			continue
		}
		switch q.Filter {
		case FilterOpen:
			if !t.State.Open() {
				continue
			}
		case FilterProblems:
			if len(Problems(*t, h.Stats(t.ID), s, q, now)) == 0 {
				continue
			}
		}
		keyed = append(keyed, sortKey(t, i, q.Sort, now))
	}
	// Keys are computed once per row: at 100k rows, recomputing ratios inside
	// the comparison dominated the cost.
	slices.SortFunc(keyed, func(a, b sortRow) int {
		if a.has != b.has {
			if a.has {
				return -1
			}
			return 1
		}
		if a.has && a.v != b.v {
			if a.v > b.v {
				return -1
			}
			return 1
		}
		return a.i - b.i // Txns is sorted by id
	})
	rows := make([]int, len(keyed))
	for k, r := range keyed {
		rows[k] = r.i
	}
	return rows
}

// TestRowsMatchTheOldRows: every query over random snapshots and histories
// selects the same rows in the same order as before.
func TestRowsMatchTheOldRows(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	for round := range 200 {
		prev, next := randomSnap(r, r.IntN(150), t0), randomSnap(r, r.IntN(150), t0.Add(time.Minute))
		prev.Sort()
		next.Sort()
		h := NewHistory(50)
		h.Baseline(prev)
		h.Add(Diff(prev, next))
		for _, text := range []string{"", "JOB-3", "1"} {
			for f := range StateFilter(len(filterNames)) {
				for k := range SortKey(len(sortNames)) {
					q := Query{Text: text, Filter: f, Sort: k, CheckpointInterval: time.Duration(r.IntN(2)) * 20 * time.Second}
					now := t0.Add(time.Duration(r.IntN(200)) * time.Second)
					got, want := Rows(next, h, q, now), oldRows(next, h, q, now)
					if !slices.Equal(got, want) {
						t.Fatalf("round %d, %+v: rows %v, before %v", round, q, got, want)
					}
				}
			}
		}
	}
}

// TestSortTrickyIDs: ids that tie on their first 32 bytes, that end in or
// contain zero bytes, the empty id and repeats sort as strings do.
func TestSortTrickyIDs(t *testing.T) {
	long := "orders-enricher-sink-with-a-long-name-"
	ids := []string{long + "2", long + "10", long + "1", "ab", "ab\x00", "ab\x00\x00", "a", "", "ab\x01", "\xff", long[:32],
		long[:32] + "\x00", long[:31], "ab", long + "1", "b", "ab\x00"}
	r := rand.New(rand.NewPCG(19, 20))
	defer func(n int) { parallelSortAt = n }(parallelSortAt)
	for k := range 100 {
		if k == 50 {
			parallelSortAt = 4 // split at a pivot, both sides sorted at once
		}
		s := &Snapshot{}
		for i, id := range ids {
			s.Txns = append(s.Txns, Txn{ID: id, ProducerID: int64(i)})
		}
		r.Shuffle(len(s.Txns), func(i, j int) { s.Txns[i], s.Txns[j] = s.Txns[j], s.Txns[i] })
		want := &Snapshot{Txns: slices.Clone(s.Txns)}
		oldSort(want)
		s.Sort()
		if !reflect.DeepEqual(s.Txns, want.Txns) {
			t.Fatalf("sorted %q, want %q", idsOf(s), idsOf(want))
		}
		checkLookups(t, s, 0)
	}
}

func idsOf(s *Snapshot) []string {
	var out []string
	for _, t := range s.Txns {
		out = append(out, t.ID)
	}
	return out
}

// Ids that tie on a key's bytes again and again (long shared prefixes, zero
// bytes that look like the padding, duplicates, ids that end exactly at a
// key's edge) come out as a stable sort of the strings puts them, on one
// core and split in two.
func TestOrderByIDOfIdsThatTieKeyAfterKey(t *testing.T) {
	defer func(n int) { parallelSortAt = n }(parallelSortAt)
	r := rand.New(rand.NewPCG(37, 38))
	bytes := []byte{'a', 0}
	prefixes := []string{"", strings.Repeat("p", keyBytes), strings.Repeat("p", keyBytes-1), strings.Repeat("x", 3*keyBytes+5)}
	for round := range 200 {
		parallelSortAt = []int{1 << 16, 8}[round%2]
		ids := make([]string, 1+r.IntN(400))
		for i := range ids {
			if i > 0 && r.IntN(8) == 0 {
				ids[i] = ids[r.IntN(i)] // a duplicate
				continue
			}
			// A stem that ends about a key's edge, then a byte or two.
			b := []byte(prefixes[r.IntN(len(prefixes))])
			b = append(b, strings.Repeat("q", keyBytes*r.IntN(3)+r.IntN(3))...)
			for range r.IntN(3) {
				b = append(b, bytes[r.IntN(len(bytes))])
			}
			ids[i] = string(b)
		}
		want := make([]int, len(ids))
		for i := range want {
			want[i] = i
		}
		slices.SortStableFunc(want, func(a, b int) int { return strings.Compare(ids[a], ids[b]) })
		if got := OrderByID(ids); !slices.Equal(got, want) {
			t.Fatalf("round %d: order %v, want %v", round, got, want)
		}
	}
}

func TestIDKeyIs32Bytes(t *testing.T) {
	if n := unsafe.Sizeof(idKey{}); n != 32 {
		t.Fatalf("idKey is %d bytes, want 32 (sortTxns allocates one per row)", n)
	}
}
