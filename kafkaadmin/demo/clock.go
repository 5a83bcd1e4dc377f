package demo

import (
	"context"
	"math/rand/v2"
	"time"
)

// clock numbers checkpoints from wall-clock time, so that every job started
// with the same prefix picks the same transactional ids at the same time (that
// is what makes two such jobs fence each other).
type clock struct {
	base     time.Time // when checkpoint 0 would have completed
	interval time.Duration
}

// newClock puts checkpoint 1 at start, as Flink's first checkpoint is 1.
func newClock(start time.Time, interval time.Duration) clock {
	return clock{base: start.Add(-interval), interval: interval}
}

// checkpoint is the last checkpoint completed at t.
func (c clock) checkpoint(t time.Time) int64 {
	return int64(t.Sub(c.base) / c.interval)
}

// completes is when checkpoint n completes.
func (c clock) completes(n int64) time.Time {
	return c.base.Add(time.Duration(n) * c.interval)
}

// sleepUntil waits for t; false means ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	return sleep(ctx, time.Until(t))
}

func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-tm.C:
		return true
	}
}

// jitter is a random duration in [0, max).
func jitter(max time.Duration) time.Duration {
	if max <= 0 {
		return 0
	}
	return rand.N(max)
}
