package demo

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/goleak"
)

// fastOptions squeezes minutes of demo into seconds.
func fastOptions(t *testing.T) Options {
	return Options{
		Log:                &testLog{},
		CheckpointInterval: 300 * time.Millisecond,
		CrashTimeout:       3 * time.Second,
		LongTimeout:        20 * time.Second,
	}
}

// testLog keeps the demo's log for a failing test to print: the cluster may
// still log while shutting down, after t's goroutine-safe window.
type testLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *testLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *testLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// TestDemo watches the running demo from outside, over TCP with an admin
// client, the way txnscope will.
func TestDemo(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())

	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	o := fastOptions(t)
	d, err := Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	defer func() {
		if t.Failed() || testing.Verbose() {
			t.Logf("demo log:\n%s", o.Log.(*testLog))
		}
	}()

	addrs := d.Bootstrap()
	if len(addrs) != 3 {
		t.Fatalf("bootstrap %v, want 3 brokers", addrs)
	}
	for _, a := range addrs {
		if !regexp.MustCompile(`^127\.0\.0\.1:\d+$`).MatchString(a) {
			t.Fatalf("bootstrap address %q is not 127.0.0.1:PORT", a)
		}
	}
	kc, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(kc)
	defer adm.Close()

	w := &watcher{t: t, ctx: ctx, adm: adm}
	t.Run("orders-enricher commits checkpoint after checkpoint", func(t *testing.T) {
		w.t = t
		checkCommits(w)
	})
	t.Run("duplicate job fences orders-enricher", func(t *testing.T) {
		w.t = t
		checkFencing(w, d)
	})
	t.Run("crashed job's transaction is aborted at its timeout", func(t *testing.T) {
		w.t = t
		checkCrashAbort(w, o.CrashTimeout)
	})
	t.Run("backfill pins the LSO", func(t *testing.T) {
		w.t = t
		checkPinnedLSO(w)
	})
	t.Run("force-terminated backfill reopens", func(t *testing.T) {
		w.t = t
		checkBackfillReopens(w, kc, d)
	})
	if s := d.Stats(); s.Aborts == 0 {
		t.Errorf("payments-dedup-v3 aborted nothing: %+v", s)
	}

	adm.Close()
	start := time.Now()
	d.Close()
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Close took %s", took)
	}
	t.Logf("stats at close: %+v", d.Stats())
}

type watcher struct {
	t   *testing.T
	ctx context.Context
	adm *kadm.Client
}

// until polls fn until it reports done, failing the test at the deadline.
func (w *watcher) until(what string, within time.Duration, fn func() bool) {
	w.t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) && w.ctx.Err() == nil {
		if fn() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	w.t.Fatalf("no %s within %s", what, within)
}

// describe lists the ids matching re and describes them.
func (w *watcher) describe(re *regexp.Regexp) kadm.DescribedTransactions {
	w.t.Helper()
	listed, err := w.adm.ListTransactions(w.ctx, nil, nil)
	if err != nil {
		w.t.Logf("list transactions: %v", err)
		return nil
	}
	var ids []string
	for id := range listed {
		if re.MatchString(id) {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	described, err := w.adm.DescribeTransactions(w.ctx, ids...)
	if err != nil {
		w.t.Logf("describe transactions: %v", err)
		return nil
	}
	return described
}

var enricherID = regexp.MustCompile(`^orders-enricher-v1-(\d+)-(\d+)$`)

func checkCommits(w *watcher) {
	seenOngoing := map[string]bool{}
	committed := map[string]bool{} // per subtask 1..3: an id went Ongoing -> Empty
	maxCheckpoint := map[string]int64{}
	firstMax := map[string]int64{}
	w.until("Ongoing -> Empty on subtasks 1-3 and newer checkpoints", 10*time.Second, func() bool {
		for id, tx := range w.describe(enricherID) {
			if tx.Err != nil {
				continue
			}
			m := enricherID.FindStringSubmatch(id)
			sub, cp := m[1], mustInt(w.t, m[2])
			if sub > "3" || len(sub) != 1 {
				w.t.Fatalf("id %s: parallelism is 4, subtask out of range", id)
			}
			switch tx.State {
			case "Ongoing":
				seenOngoing[id] = true
			case "Empty":
				if seenOngoing[id] && sub != "0" {
					committed[sub] = true
				}
			}
			if cp > maxCheckpoint[sub] {
				maxCheckpoint[sub] = cp
			}
			if _, ok := firstMax[sub]; !ok {
				firstMax[sub] = cp
			}
		}
		for _, sub := range []string{"1", "2", "3"} {
			if !committed[sub] || maxCheckpoint[sub] < firstMax[sub]+3 {
				return false
			}
		}
		return true
	})
}

func checkFencing(w *watcher, d *Demo) {
	w.until("fenced errors on both jobs", 10*time.Second, func() bool {
		s := d.Stats()
		return s.Fenced > 0 && s.FencedDuplicate > 0
	})
	// Only subtask 0 is shared, so only its ids show the epoch a fencing
	// InitProducerId leaves behind (Kafka 3.9 keeps the epoch on commit).
	w.until("a bumped epoch on subtask 0 only", 5*time.Second, func() bool {
		bumped := false
		for id, tx := range w.describe(enricherID) {
			if tx.Err != nil || tx.ProducerEpoch == 0 {
				continue
			}
			if enricherID.FindStringSubmatch(id)[1] != "0" {
				w.t.Fatalf("%s has epoch %d, but nothing shares subtasks 1-3", id, tx.ProducerEpoch)
			}
			bumped = true
		}
		return bumped
	})
}

var inventoryID = regexp.MustCompile(`^inventory-sync-v7-[01]-\d+$`)

func checkCrashAbort(w *watcher, timeout time.Duration) {
	type seen struct {
		epoch int16
		start time.Time
	}
	ongoing := map[string]seen{}
	w.until("a crashed transaction aborted at its timeout", 3*timeout+5*time.Second, func() bool {
		for id, tx := range w.describe(inventoryID) {
			if tx.Err != nil {
				continue
			}
			if tx.TimeoutMillis != int32(timeout.Milliseconds()) {
				w.t.Fatalf("%s: timeout %dms, want %s", id, tx.TimeoutMillis, timeout)
			}
			switch tx.State {
			case "Ongoing":
				ongoing[id] = seen{tx.ProducerEpoch, time.UnixMilli(tx.StartTimestamp)}
			case "Empty":
				s, ok := ongoing[id]
				if ok && tx.ProducerEpoch == s.epoch+1 && time.Since(s.start) >= timeout {
					w.t.Logf("%s aborted after %s, epoch %d -> %d", id, time.Since(s.start).Round(time.Millisecond), s.epoch, tx.ProducerEpoch)
					return true
				}
			}
		}
		return false
	})
}

func checkPinnedLSO(w *watcher) {
	w.until("reports-backfill-0-1 pinning the LSO of its partition", 5*time.Second, func() bool {
		tx, err := w.adm.DescribeTransactions(w.ctx, backfillID)
		if err != nil {
			return false
		}
		d := tx[backfillID]
		if d.Err != nil || d.State != "Ongoing" {
			return false
		}
		parts := d.Topics["reports"]
		if len(parts) != 1 {
			w.t.Fatalf("backfill touches %v, want one partition of reports", d.Topics)
		}
		end, err := w.adm.ListEndOffsets(w.ctx, "reports")
		if err != nil {
			return false
		}
		stable, err := w.adm.ListCommittedOffsets(w.ctx, "reports")
		if err != nil {
			return false
		}
		for p := range parts {
			e, ok1 := end.Lookup("reports", p)
			s, ok2 := stable.Lookup("reports", p)
			if ok1 && ok2 && e.Err == nil && s.Err == nil && s.Offset < e.Offset {
				w.t.Logf("reports/%d: LSO %d < high watermark %d", p, s.Offset, e.Offset)
				return true
			}
		}
		return false
	})
}

// checkBackfillReopens aborts the backfill the way txnscope's force-terminate
// does and expects the partition to unpin, then a new transaction to pin it
// again.
func checkBackfillReopens(w *watcher, kc *kgo.Client, d *Demo) {
	before, err := w.adm.DescribeTransactions(w.ctx, backfillID)
	if err != nil || before[backfillID].State != "Ongoing" {
		w.t.Fatalf("backfill not ongoing before the abort: %v %+v", err, before[backfillID])
	}
	p := firstPartition(w.t, before[backfillID].Topics["reports"])
	reopened := d.Stats().Reopened

	req := kmsg.NewPtrInitProducerIDRequest()
	id := backfillID
	req.TransactionalID = &id
	req.TransactionTimeoutMillis = int32(fastOptions(w.t).LongTimeout.Milliseconds())
	resp, err := req.RequestWith(w.ctx, kc)
	if err != nil {
		w.t.Fatal(err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		w.t.Fatal(err)
	}

	w.until("the LSO of the unpinned partition to reach its high watermark", 5*time.Second, func() bool {
		end, err1 := w.adm.ListEndOffsets(w.ctx, "reports")
		stable, err2 := w.adm.ListCommittedOffsets(w.ctx, "reports")
		if err1 != nil || err2 != nil {
			return false
		}
		e, _ := end.Lookup("reports", p)
		s, _ := stable.Lookup("reports", p)
		return e.Err == nil && s.Err == nil && s.Offset == e.Offset
	})
	w.until("a new backfill transaction", 10*time.Second, func() bool {
		tx, err := w.adm.DescribeTransactions(w.ctx, backfillID)
		if err != nil {
			return false
		}
		now := tx[backfillID]
		return d.Stats().Reopened > reopened && now.State == "Ongoing" && now.ProducerEpoch > before[backfillID].ProducerEpoch
	})
}

func firstPartition(t *testing.T, ps map[int32]struct{}) int32 {
	for p := range ps {
		return p
	}
	t.Fatal("no partition")
	return 0
}

func mustInt(t *testing.T, s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(fmt.Errorf("checkpoint %q: %w", s, err))
	}
	return n
}
