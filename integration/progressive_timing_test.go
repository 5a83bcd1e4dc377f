package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// TestProgressiveTiming measures, on a private broker holding
// TXNSCOPE_PROGRESSIVE_IDS ids (1 % open, from scripts/benchtxns; the rest
// idle), what the TUI's refresh costs against the bare ListTransactions round
// trip: the first snapshot (Poll, rows listed only) against a first Refresh
// (every id described), the progressive load, and a steady Poll against a
// steady Refresh. It only logs: timings on a shared machine are no
// assertion.
//
//	source /tmp/txnscope-kafka/env
//	TXNSCOPE_PROGRESSIVE_IDS=50000 go test -run TestProgressiveTiming -v ./integration/
func TestProgressiveTiming(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("TXNSCOPE_PROGRESSIVE_IDS"))
	if n <= 0 {
		t.Skip("set TXNSCOPE_PROGRESSIVE_IDS=50000 to measure")
	}
	b := StartBroker(t, BrokerOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	open := max(n/100, 1)
	ids := make([]string, n-open)
	for i := range ids {
		ids[i] = fmt.Sprintf("flinkish-%d-%d", i%50, i)
	}
	initIDs(ctx, t, b.Bootstrap, ids)
	bench := exec.CommandContext(ctx, "go", "run", "../scripts/benchtxns", "-bootstrap", b.Bootstrap,
		"-n", strconv.Itoa(open), "-prefix", "open", "-topic", "bench")
	if out, err := bench.CombinedOutput(); err != nil {
		t.Fatalf("benchtxns: %v\n%s", err, out)
	}

	c, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: []string{b.Bootstrap}, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	raw, err := kgo.NewClient(kgo.SeedBrokers(b.Bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	list := func() {
		for _, sh := range raw.RequestSharded(ctx, kmsg.NewPtrListTransactionsRequest()) {
			if sh.Err != nil {
				t.Fatal(sh.Err)
			}
		}
	}
	median := func(f func()) time.Duration {
		var ds []time.Duration
		for range 5 {
			start := time.Now()
			f()
			ds = append(ds, time.Since(start))
		}
		slices.Sort(ds)
		return ds[2]
	}
	must := func(s *model.Snapshot, err error) *model.Snapshot {
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	list() // connections up
	bare := median(list)
	var first, full *model.Snapshot
	firstPoll := median(func() { first = must(c.Poll(ctx, nil)) })
	firstRefresh := median(func() { full = must(c.Refresh(ctx, nil)) })
	start := time.Now()
	loaded := first
	for batch := 2000; model.PendingCount(loaded) > 0; batch = 50000 { // as the TUI does
		d, err := c.Describe(ctx, model.NextPending(loaded, nil, batch))
		if err != nil {
			t.Fatal(err)
		}
		loaded, _ = model.Fill(loaded, d)
	}
	load := time.Since(start)
	steadyPoll := median(func() { loaded = must(c.Poll(ctx, loaded)) })
	steadyRefresh := median(func() { full = must(c.Refresh(ctx, full)) })
	ratio := func(d time.Duration) string { return fmt.Sprintf("%.2f×", float64(d)/float64(bare)) }
	t.Logf("%d ids (%d open), medians of 5 on a private broker", len(full.Txns), open)
	t.Logf("bare ListTransactions            %8v", bare.Round(time.Millisecond))
	t.Logf("first snapshot: Poll (listed)    %8v  %s", firstPoll.Round(time.Millisecond), ratio(firstPoll))
	t.Logf("first snapshot: Refresh (all)    %8v  %s", firstRefresh.Round(time.Millisecond), ratio(firstRefresh))
	t.Logf("progressive load (2k, then 50k)  %8v", load.Round(time.Millisecond))
	t.Logf("steady Poll                      %8v  %s", steadyPoll.Round(time.Millisecond), ratio(steadyPoll))
	t.Logf("steady Refresh                   %8v  %s", steadyRefresh.Round(time.Millisecond), ratio(steadyRefresh))
}
