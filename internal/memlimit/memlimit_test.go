package memlimit

import (
	"context"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestLimitFollowsTheSteadyLiveHeap(t *testing.T) {
	for _, tc := range []struct {
		name string
		seen []uint64
		want int64
	}{
		{"nothing seen yet", nil, floor},
		{"a small cluster", []uint64{20 * mb, 30 * mb}, floor},
		// 500,000 ids: 100 MB between refreshes, under 200 MB during one.
		{"500,000 ids", []uint64{120 * mb, 192 * mb, 157 * mb}, floor},
		{"a cluster twice as big", []uint64{250 * mb, 400 * mb, 380 * mb}, 520 * mb},
	} {
		if got := limitFor(tc.seen, floor, headroom); got != tc.want {
			t.Errorf("%s: limit %d MiB, want %d MiB", tc.name, got/mb, tc.want/mb)
		}
	}
	// The exporter once on the log (Lean): 2,000,000 ids, 280 MB live.
	if got := limitFor([]uint64{280 * mb}, floor, leanHeadroom); got != 322*mb {
		t.Errorf("the exporter at 280 MiB live: limit %d MiB, want 322 MiB", got/mb)
	}
}

// A one-shot read of 2,000,000 ids, whose live heap grows to about 450 MB,
// leaves the collector at Go's default pace until 600 MiB; a bigger one
// still gets 30 % above its live heap.
func TestOneShotStartsHigher(t *testing.T) {
	for _, tc := range []struct {
		seen []uint64
		want int64
	}{{nil, 600 * mb}, {[]uint64{180 * mb, 450 * mb}, 600 * mb}, {[]uint64{1000 * mb}, 1300 * mb}} {
		if got := limitFor(tc.seen, oneShot, headroom); got != tc.want {
			t.Errorf("live %v MiB: limit %d MiB, want %d MiB", tc.seen, got/mb, tc.want/mb)
		}
	}
}

// TestSettleLowersTheLimitAtOnce: a big heap let go of, then Settle, and the
// limit is back at the floor before the next look, not a minute later.
func TestSettleLowersTheLimitAtOnce(t *testing.T) {
	ctx, big := bigHeap(t)
	hold(ctx, 16*mb, 20*time.Millisecond)
	wait := func(what string, ok func(int64) bool) { t.Helper(); waitLimit(t, what, ok) }
	runtime.GC()
	wait("with 96 MB live", func(l int64) bool { return l >= 96*mb*13/10 })
	runtime.KeepAlive(big)
	big = nil
	time.Sleep(100 * time.Millisecond) // looks at the heap meanwhile keep the limit up: the minute's largest
	if l := debug.SetMemoryLimit(-1); l < 96*mb {
		t.Fatalf("the limit fell to %d MiB without Settle", l/mb)
	}
	Settle()
	wait("settled", func(l int64) bool { return l < 64*mb })
}

// TestLeanLowersTheHeadroomAtOnce: Lean takes the limit from 30 % to 15 %
// above the live heap before the next look (30 s away here).
func TestLeanLowersTheHeadroomAtOnce(t *testing.T) {
	defer lean.Store(false)
	ctx, big := bigHeap(t)
	runtime.GC()
	hold(ctx, 16*mb, 30*time.Second)
	Settle() // one look now, at 30 %
	waitLimit(t, "before Lean", func(l int64) bool { return l >= 96*mb*125/100 })
	Lean()
	waitLimit(t, "after Lean (want about 115 % of 96)", func(l int64) bool { return l < 96*mb*125/100 })
	runtime.KeepAlive(big)
}

const mb = 1 << 20

// bigHeap holds 96 MB live for a test of the limit, which it puts back
// when the test ends; the context ends then too.
func bigHeap(t *testing.T) (context.Context, []byte) {
	t.Helper()
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		t.Skip("GOMEMLIMIT set: the limit is the user's")
	}
	t.Cleanup(func() { debug.SetMemoryLimit(math.MaxInt64) })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	big := make([]byte, 96*mb)
	for i := range big {
		big[i] = 1
	}
	return ctx, big
}

// waitLimit waits up to 5 s for the limit to be ok.
func waitLimit(t *testing.T, what string, ok func(int64) bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok(debug.SetMemoryLimit(-1)) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: limit %d MiB", what, debug.SetMemoryLimit(-1)/mb)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
