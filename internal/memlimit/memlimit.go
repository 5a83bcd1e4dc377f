// Package memlimit keeps txnscope near the memory it needs: the TUI, and
// snapshot, which holds every id of a big cluster described at once.
//
// A refresh of 500,000 transactional ids builds the next snapshot while the
// last one is still on screen, so for a moment the live heap is about twice
// what it is between refreshes. Go's default (GOGC=100) then lets the heap
// grow to twice that peak before collecting: the process held 450 MB for
// 100 MB of data. A soft memory limit 30 % above the largest live heap of the
// last minute (never under 256 MiB) makes the collector run a few more times
// per refresh instead, and follows the cluster as it grows. GOMEMLIMIT, when
// set, wins.
//
// A command that reads the cluster once and exits (snapshot) starts at 600
// MiB and looks at the live heap twice a second: while it grows (the first
// read of 2,000,000 ids), a limit of 256 MiB a few seconds behind it made the
// collector run back to back, a third of the snapshot's time. The TUI and the
// exporter look every 5 s: twice a second caught the short peaks of a
// refresh, and held the limit above them for a minute (1.2 GB at 2M ids).
package memlimit

import (
	"context"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"sync/atomic"
	"time"
)

const (
	floor  = 256 << 20
	every  = 5 * time.Second
	window = time.Minute
	// oneShot is the floor of a command that reads the cluster once and
	// exits: its heap only grows, and below this much the collector need
	// not work harder than Go's default asks.
	oneShot      = 600 << 20
	oneShotEvery = 500 * time.Millisecond
)

// Hold sets the limit now and keeps it up to date until ctx ends.
func Hold(ctx context.Context) { hold(ctx, floor, every) }

// HoldOnce is Hold for a command that reads the cluster once and exits.
func HoldOnce(ctx context.Context) { hold(ctx, oneShot, oneShotEvery) }

func hold(ctx context.Context, floor int64, every time.Duration) {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		return
	}
	debug.SetMemoryLimit(floor)
	go func() {
		var seen []uint64
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-settle:
				// Collected (Settle), the live heap is what is left, and
				// the minute before it no longer counts.
				seen = seen[:0]
			case <-leaned: // the headroom is lower from now
			case <-t.C:
			}
			seen = append(seen, liveHeap())
			if len(seen) > int(window/every) {
				seen = seen[1:]
			}
			debug.SetMemoryLimit(limitFor(seen, floor, room()))
		}
	}()
}

var settle = make(chan struct{}, 1)

// Settle says the process has just let go of most of its heap (the
// exporter, of its first listing's rows while the coordinators' log is
// read): the limit follows the heap down now, not a minute later. Kept
// for that minute, a limit raised by the listing let the log's read grow
// the heap to it: 630 MB where 450 did at 2,000,000 ids.
// It collects before it returns, so that what the caller does next (the
// log's first read) reuses the memory let go of rather than growing the
// heap beside it.
func Settle() {
	debug.FreeOSMemory()
	select {
	case settle <- struct{}{}:
	default:
	}
}

// Lean lowers the limit's headroom from 30 % to 15 % above the live heap,
// for a process whose heap hardly moves any more between refreshes (the
// exporter once the coordinators' log is live). At 2,000,000 ids the
// exporter held 405–430 MB at 30 % for a live heap of 280 MB; at 15 % from
// its start, the collector ran back to back through the log's first read
// (9 s of CPU), which is why it waits for the log.
//
// It applies at once, not at the next look: the exporter's first refresh
// from the log comes right after, sorts every row, and is its peak (413 MB
// at 2,000,000 ids with the limit at 30 % until the next look).
func Lean() {
	lean.Store(true)
	select {
	case leaned <- struct{}{}:
	default:
	}
}

var (
	lean   atomic.Bool
	leaned = make(chan struct{}, 1)
)

// headroom and leanHeadroom are the limit above the largest live heap
// seen, in percent: before Lean and after.
const headroom, leanHeadroom = 130, 115

func room() int64 {
	if lean.Load() {
		return leanHeadroom
	}
	return headroom
}

// limitFor is the limit for the live heaps seen at the last collections:
// room percent of the largest (130: enough that the collector does not run
// back to back during a refresh).
func limitFor(seen []uint64, floor, room int64) int64 {
	if len(seen) == 0 {
		return floor
	}
	return max(floor, int64(slices.Max(seen))*room/100)
}

func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
