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
