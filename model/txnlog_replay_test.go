package model

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// The replay keeps the newest limit events, as sorting all of them by time
// (stably: among equal times the later ones) and taking the last limit
// would: many ties, events older than the window, batches of every size.
func TestReplayKeepsTheNewestLimit(t *testing.T) {
	since := benchNow.Add(-time.Hour)
	for _, tc := range []struct{ n, limit, spread int }{
		{0, 5, 10}, {3, 5, 10}, {10, 5, 10}, {100, 7, 3}, {1000, 50, 20}, {5000, 100, 200}, {5000, 1000, 5000},
	} {
		t.Run(fmt.Sprintf("%d events, newest %d, %d times", tc.n, tc.limit, tc.spread), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(tc.n), uint64(tc.limit)))
			r := NewReplay(since, tc.limit)
			var all []Event
			for i := 0; i < tc.n; {
				batch := make([]Event, min(1+rng.IntN(40), tc.n-i))
				for j := range batch {
					// Some before the window; many at the same time.
					at := since.Add(time.Duration(rng.IntN(tc.spread)-tc.spread/10) * time.Second)
					batch[j] = Event{At: at, ID: fmt.Sprint(i + j)}
				}
				i += len(batch)
				all = append(all, batch...)
				r.keep(batch)
			}
			r.trim()
			slices.SortStableFunc(r.evs, func(a, b Event) int { return a.At.Compare(b.At) })
			want := slices.DeleteFunc(slices.Clone(all), func(e Event) bool { return e.At.Before(since) })
			slices.SortStableFunc(want, func(a, b Event) int { return a.At.Compare(b.At) })
			if len(want) > tc.limit {
				want = want[len(want)-tc.limit:]
			}
			if !slices.EqualFunc(r.evs, want, func(a, b Event) bool { return a.ID == b.ID && a.At.Equal(b.At) }) {
				t.Fatalf("kept %d events, want %d:\n got %v\nwant %v", len(r.evs), len(want), eventIDs(r.evs), eventIDs(want))
			}
		})
	}
}

func eventIDs(evs []Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	return out
}

// A replay that takes old records in silently keeps exactly the events a
// replay of everything keeps in its window: random histories of fences,
// timeouts, own aborts and expiries around the window's start and around
// the newest limit, with the next record sometimes within an abort's Grace
// of it and sometimes not.
func TestReplayOfOldRecordsInSilenceKeepsTheSameEvents(t *testing.T) {
	var presumedHeld, presumedFailed int
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 37))
		since := time.UnixMilli(1_700_000_000_000)
		recs := randomLog(rng, since, 1+rng.IntN(30))
		for _, limit := range []int{0, 1 + rng.IntN(20)} {
			all := NewReplay(time.Time{}, 0)
			some := NewReplay(since, limit)
			for _, r := range recs {
				all.Add(r)
				some.Add(r)
			}
			want := slices.DeleteFunc(all.Result().Events, func(e Event) bool { return e.At.Before(since) })
			if limit > 0 && len(want) > limit {
				want = want[len(want)-limit:]
			}
			got := some.Result().Events
			if !slices.EqualFunc(got, want, sameEvent) {
				t.Fatalf("seed %d, newest %d: kept\n%v\nwant\n%v", seed, limit, got, want)
			}
			if limit == 0 {
				continue
			}
			// A presumed time for the newest limit events: where it held,
			// the events are the same; where it did not, Presumed says so.
			at := since.Add(time.Duration(rng.IntN(50_000)-25_000) * time.Millisecond)
			guess := NewReplay(since, limit)
			guess.Presume(at)
			for _, r := range recs {
				guess.Add(r)
			}
			got = guess.Result().Events
			held := len(want) == limit && !want[0].At.Before(at) || !at.After(since)
			if guess.Presumed() != held {
				t.Fatalf("seed %d, newest %d, presumed from %s: Presumed() = %v, want %v (oldest kept %v)",
					seed, limit, at.Sub(since), guess.Presumed(), held, want)
			}
			if held {
				presumedHeld++
				if !slices.EqualFunc(got, want, sameEvent) {
					t.Fatalf("seed %d, newest %d, presumed from %s: kept\n%v\nwant\n%v", seed, limit, at.Sub(since), got, want)
				}
			} else {
				presumedFailed++
			}
		}
	}
	if presumedHeld < 20 || presumedFailed < 20 {
		t.Errorf("presumed times held %d times and failed %d: both must be tried", presumedHeld, presumedFailed)
	}
}

func sameEvent(a, b Event) bool {
	a.At, b.At = a.At.UTC(), b.At.UTC()
	a.Begun, b.Begun = a.Begun.UTC(), b.Begun.UTC()
	return a == b
}

// randomLog is n ids' transactions, a second or so apart, from 20 s before
// since to 20 s after, spread over three log partitions in offset order.
func randomLog(rng *rand.Rand, since time.Time, n int) []TxnLogRecord {
	byPart := make([][]TxnLogRecord, 3)
	for i := range n {
		id := fmt.Sprint("id-", i)
		ms := since.Add(-20 * time.Second).UnixMilli()
		epoch, pid := int16(0), int64(100+i)
		p := int32(rng.IntN(3))
		add := func(st State, start int64, parts ...string) {
			r := TxnLogRecord{ID: id, State: st, ProducerID: pid, ProducerEpoch: epoch, TimeoutMs: 3000,
				StartMs: start, LastUpdateMs: ms, PrevProducerID: -1, NextProducerID: -1, ClientTxnVersion: int16(1 + rng.IntN(2)), Partition: p}
			for _, x := range parts {
				r.Partitions = append(r.Partitions, TopicPartition{Topic: x})
			}
			byPart[p] = append(byPart[p], r)
		}
		add(Empty, -1)
		for ms < since.Add(20*time.Second).UnixMilli() {
			start := ms
			add(Ongoing, start, "x")
			ms += int64(rng.IntN(4000))
			switch rng.IntN(5) {
			case 0, 1:
				add(PrepareCommit, start, "x")
				add(CompleteCommit, start)
			case 2: // its own abort, or a timeout
				add(PrepareAbort, start, "x")
				add(CompleteAbort, start)
			case 3: // fenced: another InitProducerId, the epoch up
				epoch++
				add(PrepareAbort, start, "x")
				add(CompleteAbort, start)
				ms += int64(rng.IntN(3000))
				epoch++
				add(Empty, -1)
			case 4:
				ms += int64(rng.IntN(3000))
				if rng.IntN(3) == 0 {
					byPart[p] = append(byPart[p], TxnLogRecord{ID: id, Tombstone: true, Partition: p, LastUpdateMs: ms})
					epoch, pid = 0, pid+1000
					add(Empty, -1)
				}
			}
			ms += int64(rng.IntN(2500))
		}
	}
	var out []TxnLogRecord
	next := make([]int, 3)
	for len(out) < len(byPart[0])+len(byPart[1])+len(byPart[2]) {
		p := rng.IntN(3)
		if next[p] < len(byPart[p]) {
			r := byPart[p][next[p]]
			r.Offset = int64(next[p])
			out = append(out, r)
			next[p]++
		}
	}
	return out
}
