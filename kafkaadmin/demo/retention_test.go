package demo

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/goleak"
)

// TestDemoRetention runs the demo for longer than its busy topics' retention:
// kfake holds every record in memory, so a demo left running must drop its
// old records, topic by topic, as soon as no open transaction needs them,
// and never sooner. With one retention for all topics (twice the backfill's
// timeout), it kept the busy topics' records for half an hour and grew by
// about 2 MB a minute.
func TestDemoRetention(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	o := Options{
		Log:                &testLog{},
		CheckpointInterval: 200 * time.Millisecond,
		CrashTimeout:       2 * time.Second,
		LongTimeout:        20 * time.Second,
	}
	d, err := Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	defer func() {
		if t.Failed() {
			t.Logf("demo log:\n%s", o.Log.(*testLog))
		}
	}()
	kc, err := kgo.NewClient(kgo.SeedBrokers(d.Bootstrap()...), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(kc)
	defer adm.Close()

	busy := []string{"sessions", "orders-enriched", "payments"}
	// What a busy topic may keep: its retention (twice the healthy jobs'
	// timeout, 12 s here), plus the time until the next trim and a margin
	// for a loaded machine.
	keeps := 2*healthyTimeout(o) + retentionMargin + 3*d.limits.retentionCheck + time.Second
	start := time.Now()
	for time.Since(start) < keeps+time.Second {
		checkNothingOpenTrimmed(t, d, o)
		time.Sleep(100 * time.Millisecond)
	}

	cutoff := time.Now().Add(-keeps)
	younger, err := adm.ListOffsetsAfterMilli(ctx, cutoff.UnixMilli(), busy...)
	if err != nil {
		t.Fatal(err)
	}
	for _, topic := range busy {
		for _, p := range d.cluster.PartitionInfos(topic) {
			y, ok := younger.Lookup(topic, p.Partition)
			if !ok || y.Err != nil {
				t.Fatalf("%s/%d: no offset for %s: %v", topic, p.Partition, cutoff, y.Err)
			}
			if p.LogStartOffset < y.Offset {
				t.Errorf("%s/%d keeps records older than %s: log start %d, the first younger record at %d (high watermark %d, %d bytes kept)",
					topic, p.Partition, keeps.Round(100*time.Millisecond), p.LogStartOffset, y.Offset, p.HighWatermark, p.NumBytes)
			}
		}
	}
	checkNothingOpenTrimmed(t, d, o)
}

// checkNothingOpenTrimmed fails when retention dropped a record of a
// transaction still open: the log start went past the last stable offset.
func checkNothingOpenTrimmed(t *testing.T, d *Demo, o Options) {
	t.Helper()
	for _, tp := range topics(o) {
		for _, p := range d.cluster.PartitionInfos(tp.name) {
			if p.LogStartOffset > p.LastStableOffset {
				t.Fatalf("%s/%d: retention dropped records of an open transaction: log start %d > LSO %d",
					tp.name, p.Partition, p.LogStartOffset, p.LastStableOffset)
			}
		}
	}
}

// TestDefaultLimits pins what the demo keeps at its default pace, which
// docs/performance.md's 30-minute run measured: the ids and the busy topics'
// records level off within two minutes, the topics of the long transactions
// keep theirs for twice those transactions' timeouts.
func TestDefaultLimits(t *testing.T) {
	o := Options{}.withDefaults()
	lim := limitsFor(o)
	// 13 new ids a checkpoint, each about 2 KB of heap in the cluster and
	// the UI until it expires.
	if ids := 13 * int(lim.idExpiration/o.CheckpointInterval); ids > 1000 {
		t.Errorf("ids expire after %s: about %d ids, want at most 1,000", lim.idExpiration, ids)
	}
	want := map[string]time.Duration{
		"orders":          2*time.Minute + retentionMargin,
		"orders-enriched": 2*time.Minute + retentionMargin,
		"sessions":        2*time.Minute + retentionMargin,
		"payments":        2*time.Minute + retentionMargin,
		"inventory":       6*time.Minute + retentionMargin,  // inventory-sync-v7's crashes linger for 3 min
		"reports":         30*time.Minute + retentionMargin, // the backfill stays open for 15 min
		"click-counts":    2*time.Minute + retentionMargin,
	}
	for _, tp := range topics(o) {
		if got := lim.retention[tp.name]; got != want[tp.name] {
			t.Errorf("%s keeps its records for %s, want %s", tp.name, got, want[tp.name])
		}
	}
}
