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

	"github.com/txnscope/txnscope/model"
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
	t.Run("orders-indexer keeps up", func(t *testing.T) {
		w.t = t
		checkIndexer(w)
	})
	var held map[int32]int64
	t.Run("crashed job's transaction is aborted at its timeout, inventory-projector waiting at its LSO", func(t *testing.T) {
		w.t = t
		held = checkCrashAbort(w, o.CrashTimeout, o.CheckpointInterval)
	})
	t.Run("inventory-projector moves on past the aborted transactions", func(t *testing.T) {
		w.t = t
		w.until("inventory-projector committing past every LSO it waited at", 2*o.CrashTimeout+5*time.Second, func() bool {
			for p, lso := range held {
				if at, ok := w.offsets("inventory-projector", "inventory", p); !ok || at.committed <= lso {
					return false
				}
			}
			return true
		})
	})
	var pinned int32
	t.Run("backfill pins the LSO, reports-loader waits at it", func(t *testing.T) {
		w.t = t
		pinned = checkPinnedLSO(w)
		checkLoaderWaits(w, pinned)
	})
	t.Run("force-terminated backfill reopens, reports-loader moves on", func(t *testing.T) {
		w.t = t
		checkBackfillReopens(w, kc, d)
	})
	if s := d.Stats(); s.Aborts == 0 || s.Consumed == 0 {
		t.Errorf("payments-dedup-v3 aborted nothing or the groups read nothing: %+v", s)
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

// checkCrashAbort waits for a crashed transaction aborted at its timeout,
// during which inventory-projector was seen stuck at the LSO it pinned on
// some partition; it returns those LSOs. A transaction still open after a few
// checkpoint intervals is a crashed one: healthy ones last one interval.
func checkCrashAbort(w *watcher, timeout, interval time.Duration) map[int32]int64 {
	type seen struct {
		epoch int16
		start time.Time
	}
	ongoing := map[string]seen{}
	waited := map[string]map[int32]int64{} // crashed id -> partition -> LSO the group was stuck at
	var held map[int32]int64
	w.until("a crashed transaction aborted at its timeout, inventory-projector stuck behind it meanwhile", 3*timeout+5*time.Second, func() bool {
		for id, tx := range w.describe(inventoryID) {
			if tx.Err != nil {
				continue
			}
			if tx.TimeoutMillis != int32(timeout.Milliseconds()) {
				w.t.Fatalf("%s: timeout %dms, want %s", id, tx.TimeoutMillis, timeout)
			}
			switch tx.State {
			case "Ongoing":
				start := time.UnixMilli(tx.StartTimestamp)
				ongoing[id] = seen{tx.ProducerEpoch, start}
				if time.Since(start) < 3*interval {
					continue
				}
				for p := range tx.Topics["inventory"] {
					if at, ok := w.offsets("inventory-projector", "inventory", p); ok && at.stuck() {
						if waited[id] == nil {
							waited[id] = map[int32]int64{}
						}
						waited[id][p] = at.lso
					}
				}
			case "Empty":
				s, ok := ongoing[id]
				if !ok || tx.ProducerEpoch != s.epoch+1 || time.Since(s.start) < timeout {
					continue
				}
				delete(ongoing, id)
				if len(waited[id]) == 0 {
					// The group may not have read the partition yet: the job crashes again soon.
					w.t.Logf("%s aborted at its timeout before inventory-projector was seen waiting behind it", id)
					continue
				}
				held = waited[id]
				w.t.Logf("%s aborted after %s, epoch %d -> %d; inventory-projector waited at %v",
					id, time.Since(s.start).Round(time.Millisecond), s.epoch, tx.ProducerEpoch, held)
				return true
			}
		}
		return false
	})
	return held
}

func checkPinnedLSO(w *watcher) int32 {
	var pinned int32
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
				pinned = p
				return true
			}
		}
		return false
	})
	return pinned
}

// checkLoaderWaits expects reports-loader to reach the backfill's pinned LSO
// and stay there, while the reports published after it pile up.
func checkLoaderWaits(w *watcher, p int32) {
	var first offsets
	w.until("reports-loader stuck at the backfill's LSO", 10*time.Second, func() bool {
		at, ok := w.offsets("reports-loader", "reports", p)
		first = at
		return ok && at.stuck() && w.backfillOngoing()
	})
	w.t.Logf("reports-loader at %d on reports/%d, LSO %d, high watermark %d", first.committed, p, first.lso, first.hwm)
	last := first
	for end := time.Now().Add(5 * fastOptions(w.t).CheckpointInterval); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		at, ok := w.offsets("reports-loader", "reports", p)
		if !ok {
			continue
		}
		if at.lso != first.lso || !w.backfillOngoing() {
			return // the backfill timed out meanwhile: its LSO was released
		}
		if !at.stuck() {
			w.t.Fatalf("reports-loader left the pinned LSO while the backfill is open: %+v", at)
		}
		last = at
	}
	if last.hwm <= first.hwm {
		w.t.Errorf("nothing piled up behind the pinned LSO: high watermark %d, then %d", first.hwm, last.hwm)
	}
}

func (w *watcher) backfillOngoing() bool {
	tx, err := w.adm.DescribeTransactions(w.ctx, backfillID)
	return err == nil && tx[backfillID].Err == nil && tx[backfillID].State == "Ongoing"
}

// checkIndexer expects orders-indexer to commit on every partition of
// orders-enriched, and further on each a little later.
func checkIndexer(w *watcher) {
	const parts = 6
	first := map[int32]int64{}
	w.until("orders-indexer committing on every partition, then further", 10*time.Second, func() bool {
		committed, err := w.adm.FetchOffsets(w.ctx, "orders-indexer")
		if err != nil {
			return false
		}
		moved := 0
		for p := int32(0); p < parts; p++ {
			o, ok := committed.Lookup("orders-enriched", p)
			if !ok || o.Err != nil || o.At < 0 {
				continue
			}
			if f, ok := first[p]; !ok {
				first[p] = o.At
			} else if o.At > f {
				moved++
			}
		}
		return moved == parts
	})
}

// offsets is a group's committed offset on one partition, read before the
// partition's LSO and high watermark.
type offsets struct {
	committed, lso, hwm int64
}

// stuck is txnscope's rule (model.Pins): the partition is pinned and the
// group's committed offset is at its LSO or just below.
func (o offsets) stuck() bool {
	return o.lso < o.hwm && o.committed >= 0 && o.committed <= o.lso && o.lso-o.committed <= model.StuckSlack
}

func (w *watcher) offsets(group, topic string, p int32) (offsets, bool) {
	w.t.Helper()
	committed, err := w.adm.FetchOffsets(w.ctx, group)
	if err != nil {
		return offsets{}, false
	}
	stable, err1 := w.adm.ListCommittedOffsets(w.ctx, topic)
	end, err2 := w.adm.ListEndOffsets(w.ctx, topic)
	if err1 != nil || err2 != nil {
		return offsets{}, false
	}
	s, ok1 := stable.Lookup(topic, p)
	e, ok2 := end.Lookup(topic, p)
	if !ok1 || !ok2 || s.Err != nil || e.Err != nil {
		return offsets{}, false
	}
	at := offsets{committed: -1, lso: s.Offset, hwm: e.Offset}
	if c, ok := committed.Lookup(topic, p); ok && c.Err == nil {
		at.committed = c.At
	}
	// A read_committed reader is only ever given records below the LSO,
	// and the LSO never goes back.
	if at.committed > at.lso {
		w.t.Fatalf("%s committed %d on %s/%d, past its LSO %d", group, at.committed, topic, p, at.lso)
	}
	return at, true
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
	pinnedAt, ok := w.offsets("reports-loader", "reports", p)
	if !ok {
		w.t.Fatal("cannot read reports-loader's offsets before the abort")
	}

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
	w.until("reports-loader committing past the released LSO", 5*time.Second, func() bool {
		at, ok := w.offsets("reports-loader", "reports", p)
		return ok && at.committed > pinnedAt.lso
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

// TestStartRefusesTimeouts: timeouts the demo cannot run with are refused
// before anything starts, with a line that says why.
func TestStartRefusesTimeouts(t *testing.T) {
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{LongTimeout: 16 * time.Minute}, "demo: transaction timeouts must not exceed 15m0s"},
		{Options{CrashTimeout: 16 * time.Minute}, "demo: transaction timeouts must not exceed 15m0s"},
		{Options{CheckpointInterval: time.Second, CrashTimeout: 9 * time.Second}, "demo: the crash timeout must be at least 10 checkpoint intervals"},
	} {
		d, err := Start(context.Background(), c.o)
		if err == nil {
			d.Close()
			t.Errorf("%+v started", c.o)
			continue
		}
		if err.Error() != c.want {
			t.Errorf("%+v: %q, want %q", c.o, err, c.want)
		}
	}
}
