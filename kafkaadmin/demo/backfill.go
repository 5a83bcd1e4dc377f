package demo

import (
	"context"
	"fmt"
	"time"
)

// backfillID is the long-running transaction: a one-off backfill that never
// commits and pins the LSO of its partition of "reports".
const backfillID = "reports-backfill-0-1"

// runBackfill keeps one transaction open under backfillID until the
// coordinator aborts it (its timeout, or someone force-terminating it in
// txnscope), then opens a new one after a pause, so the pinned LSO is visible
// at almost any time. It starts once ready is closed.
func (d *Demo) runBackfill(ctx context.Context, ready <-chan struct{}) {
	select {
	case <-ready:
	case <-ctx.Done():
		return
	}
	long := d.opts.LongTimeout
	beat := min(max(long/90, 100*time.Millisecond), 10*time.Second)
	pause := min(max(long/30, time.Second), 30*time.Second)
	for {
		err := d.backfillOnce(ctx, beat)
		if ctx.Err() != nil {
			return
		}
		if fenced(err) {
			d.stats.reopened.Add(1)
			d.log.Printf("%s: transaction aborted by the coordinator (%v); opening a new one in %s", backfillID, err, pause)
		} else {
			d.stats.errors.Add(1)
			d.log.Printf("%s: %v; opening a new transaction in %s", backfillID, err, pause)
		}
		if !sleep(ctx, pause) {
			return
		}
	}
}

// backfillOnce writes a few records, then one record per beat: the beat is how
// it notices that its transaction was aborted under it, and it makes the
// records held back behind the LSO grow while the transaction stays open.
func (d *Demo) backfillOnce(ctx context.Context, beat time.Duration) error {
	cl, err := d.newProducer(backfillID, d.opts.LongTimeout)
	if err != nil {
		return err
	}
	defer cl.Close()
	if err := cl.BeginTransaction(); err != nil {
		return err
	}
	for seq := 0; ; seq++ {
		// One key, so one partition: a single pinned LSO to find.
		value := fmt.Sprintf(`{"report":"daily-revenue","row":%d}`, seq)
		if err := produce(ctx, cl, "reports", "daily-revenue", value); err != nil {
			return err
		}
		wait := beat
		if seq < 3 {
			wait = 0
		}
		if !sleep(ctx, wait) {
			return ctx.Err()
		}
	}
}
