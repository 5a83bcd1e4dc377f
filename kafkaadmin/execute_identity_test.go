package kafkaadmin_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/model"
)

// The tests of this file try to make a force-terminate hit a transaction the
// operator never saw. kafkatest's cluster speaks transaction version 1 (capped
// at Kafka 3.9): a producer keeps its producer id and epoch from one
// transaction to the next.

// turnOver commits p's transaction and begins another, writing to the same
// partition: a busy producer (Kafka Streams commits every 100 ms, Flink every
// checkpoint). The pause keeps the two start times apart (milliseconds).
func turnOver(t *testing.T, p *kgo.Client, topic string) {
	t.Helper()
	kafkatest.End(t, p, true)
	time.Sleep(5 * time.Millisecond)
	kafkatest.Begin(t, p)
	kafkatest.Produce(t, p, topic, 0, 1)
}

// stillLive fails unless p can still commit: it was neither aborted nor fenced.
func stillLive(t *testing.T, p *kgo.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("the transaction nobody confirmed could not commit: it was aborted or its producer fenced: %v", err)
	}
}

// Observation 1: the dialog opened on one transaction; before the operator
// typed abort, the producer committed it and began the next one, with the
// same producer id, epoch and state. The newer transaction is not aborted.
func TestForceTerminateRefusesTheNextTransaction(t *testing.T) {
	t.Parallel()
	c, boot := kafkatest.NewCluster(t)
	const id = "streams-app-0_1"
	p := kafkatest.OpenTxn(t, boot, id, "orders", time.Minute)
	a := newAdmin(t, boot)
	seen := txnOf(t, refresh(t, a, nil), id)
	act := forceTerminate(seen)

	turnOver(t, p, "orders")
	now := txnOf(t, refresh(t, a, nil), id)
	if now.ProducerID != seen.ProducerID || now.ProducerEpoch != seen.ProducerEpoch || now.State != seen.State {
		t.Fatalf("not the case under test (transaction version 1): %+v then %+v", seen, now)
	}

	inits := countRequests(c, kmsg.InitProducerID)
	r, j := executeJournal(t, a, act)
	if !r.Refused || r.Sent || inits.Load() != 0 || len(j.Tries()) != 0 {
		t.Fatalf("result %+v, %d InitProducerId sent", r, inits.Load())
	}
	if !strings.Contains(r.Err, "this is a newer transaction of "+id) || !strings.Contains(r.Err, "the one shown started at "+seen.StartTime().Format("15:04:05.000")) {
		t.Errorf("the refusal should say a newer transaction began: %s", r.Err)
	}
	stillLive(t, p)
}

// Observation 2: the coordinator answers CONCURRENT_TRANSACTIONS and, while
// txnscope waits to retry, the producer commits and begins its next
// transaction. The retry is not sent: the re-read shows another transaction.
func TestForceTerminateDoesNotRetryIntoTheNextTransaction(t *testing.T) {
	t.Parallel()
	c, boot := kafkatest.NewCluster(t)
	const id = "orders-enricher-3-1187"
	p := kafkatest.OpenTxn(t, boot, id, "orders", time.Minute)
	a := newAdmin(t, boot)
	act := forceTerminate(txnOf(t, refresh(t, a, nil), id))

	inits := busyOnce(t, c, func() { turnOver(t, p, "orders") })
	r, j := executeJournal(t, a, act)
	if r.OK() || r.Sends != 1 || inits.Load() != 1 || len(j.Tries()) != 1 {
		t.Fatalf("result %+v after %d InitProducerId requests: the retry must not go out", r, inits.Load())
	}
	for _, want := range []string{"CONCURRENT_TRANSACTIONS", "the transaction is ending", "this is a newer transaction",
		"its COMMIT marker is at offset", "the id is still at epoch 0, which a fence would have bumped: nothing was aborted; not retried"} {
		if !strings.Contains(r.Summary(), want) {
			t.Errorf("summary lacks %q: %s", want, r.Summary())
		}
	}
	stillLive(t, p)
}

// The other face of CONCURRENT_TRANSACTIONS: the transaction was committing.
// A retry would only fence a healthy producer.
func TestForceTerminateStopsWhenTheTransactionCommits(t *testing.T) {
	t.Parallel()
	c, boot := kafkatest.NewCluster(t)
	const id = "loader-0-9"
	p := kafkatest.OpenTxn(t, boot, id, "orders", time.Minute)
	a := newAdmin(t, boot)
	act := forceTerminate(txnOf(t, refresh(t, a, nil), id))

	inits := busyOnce(t, c, func() { kafkatest.End(t, p, true) })
	r := execute(t, a, act)
	if r.OK() || inits.Load() != 1 || !strings.Contains(r.Summary(), "state changed Ongoing→Empty") {
		t.Fatalf("result %s after %d InitProducerId requests", r.Summary(), inits.Load())
	}
	// Not fenced: its next transaction commits.
	kafkatest.Begin(t, p)
	kafkatest.Produce(t, p, "orders", 0, 1)
	stillLive(t, p)
}

// busyOnce answers the first InitProducerId with CONCURRENT_TRANSACTIONS after
// meanwhile has run (the cluster serves other connections in between), and
// lets later ones through; it counts them all.
func busyOnce(t *testing.T, c *kfake.Cluster, meanwhile func()) *atomic.Int64 {
	var n atomic.Int64
	c.ControlKey(int16(kmsg.InitProducerID), func(req kmsg.Request) (kmsg.Response, error, bool) {
		if n.Add(1) > 1 {
			return nil, nil, false
		}
		c.KeepControl()
		done := make(chan struct{})
		go func() {
			defer close(done)
			meanwhile()
		}()
		c.SleepControl(func() { <-done })
		resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
		resp.ErrorCode = kerr.ConcurrentTransactions.Code
		return resp, nil, true
	})
	return &n
}

// A coordinator that is loading, or that moved, did nothing: the same
// transaction, re-read unchanged, is asked again, each request recorded first.
func TestForceTerminateRetriesAnUnchangedTransaction(t *testing.T) {
	t.Parallel()
	for _, code := range []*kerr.Error{kerr.CoordinatorLoadInProgress, kerr.NotCoordinator} {
		t.Run(code.Message, func(t *testing.T) {
			t.Parallel()
			c, boot := kafkatest.NewCluster(t)
			const id = "job-0-1"
			p := kafkatest.OpenTxn(t, boot, id, "orders", time.Minute)
			a := newAdmin(t, boot)
			tx := txnOf(t, refresh(t, a, nil), id)
			n := countRequests(c, kmsg.InitProducerID)
			c.ControlKey(int16(kmsg.InitProducerID), func(req kmsg.Request) (kmsg.Response, error, bool) {
				resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
				resp.ErrorCode = code.Code
				return resp, nil, true
			})
			r, j := executeJournal(t, a, forceTerminate(tx))
			if !r.OK() || n.Load() != 2 || len(j.Tries()) != 2 || j.Tries()[1] != 2 {
				t.Fatalf("result %s after %d requests, tries %v", r.Summary(), n.Load(), j.Tries())
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := p.EndTransaction(ctx, kgo.TryCommit); err == nil {
				t.Fatal("the force-terminated producer still committed")
			}
		})
	}
}

// Write-ahead audit: a record that cannot be written stops the request.
func TestExecuteUnrecordedIsNotSent(t *testing.T) {
	t.Parallel()
	c, boot := kafkatest.NewCluster(t)
	p := kafkatest.OpenTxn(t, boot, "job-0-2", "orders", time.Minute)
	a := newAdmin(t, boot)
	act := forceTerminate(txnOf(t, refresh(t, a, nil), "job-0-2"))
	inits := countRequests(c, kmsg.InitProducerID)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	j := &kafkatest.Journal{FailSending: errors.New("audit log: write /var/log/x: no space left on device")}
	r := a.Execute(ctx, act, j)
	if !r.Refused || r.Sent || inits.Load() != 0 || !strings.Contains(r.Err, "no space left on device; nothing sent") {
		t.Fatalf("result %+v with %d requests", r, inits.Load())
	}
	if rs := j.Results(); len(rs) != 1 || !rs[0].Refused {
		t.Fatalf("the refusal must be recorded too: %+v", rs)
	}
	if r := a.Execute(ctx, act, nil); !r.Refused || !strings.Contains(r.Err, "no audit log") || inits.Load() != 0 {
		t.Fatalf("without a recorder: %+v", r)
	}
	stillLive(t, p)
}

// A signal while the request is in flight: the outcome is unknown (it may have
// reached the coordinator), said so, recorded, and nothing is sent again.
func TestExecuteInterruptedInFlight(t *testing.T) {
	t.Parallel()
	c, boot := kafkatest.NewCluster(t)
	kafkatest.OpenTxn(t, boot, "job-0-3", "orders", time.Minute)
	a := newAdmin(t, boot)
	act := forceTerminate(txnOf(t, refresh(t, a, nil), "job-0-3"))
	ctx, cancel := context.WithCancel(context.Background())
	release := make(chan struct{})
	defer close(release)
	var n atomic.Int64
	c.ControlKey(int16(kmsg.InitProducerID), func(kmsg.Request) (kmsg.Response, error, bool) {
		n.Add(1)
		cancel() // the SIGHUP arrives while the broker holds the request
		c.SleepControl(func() { <-release })
		return nil, nil, false
	})
	j := &kafkatest.Journal{}
	r := a.Execute(ctx, act, j)
	if !r.Unknown || !r.Sent || r.Refused || n.Load() != 1 || !strings.Contains(r.Summary(), "unknown outcome, re-check: interrupted while the request") {
		t.Fatalf("result %s after %d requests", r.Summary(), n.Load())
	}
	if rs := j.Results(); len(rs) != 1 || !rs[0].Unknown || len(j.Tries()) != 1 {
		t.Fatalf("recorded %+v, tries %v", rs, j.Tries())
	}
	// Cancelled before anything left: refused, not sent.
	r = a.Execute(ctx, act, &kafkatest.Journal{})
	if !r.Refused || r.Sent || n.Load() != 1 {
		t.Fatalf("after the signal: %+v", r)
	}
}

// The re-check compares the partitions too: a transaction that added one
// since it was shown is not the one confirmed.
func TestForceTerminateRefusesChangedPartitions(t *testing.T) {
	t.Parallel()
	_, boot := kafkatest.NewCluster(t)
	p := kafkatest.OpenTxn(t, boot, "job-0-4", "orders", time.Minute)
	a := newAdmin(t, boot)
	act := forceTerminate(txnOf(t, refresh(t, a, nil), "job-0-4"))
	kafkatest.Produce(t, p, "payments", 1, 1)
	r := execute(t, a, act)
	if !r.Refused || !strings.Contains(r.Err, "now also payments-1") {
		t.Fatalf("result %+v", r)
	}
}

// The idle rule of the partition abort is re-applied just before the marker
// goes out: a producer that wrote since is refused.
func TestAbortPartitionIdleRule(t *testing.T) {
	t.Parallel()
	c, boot := kafkatest.NewCluster(t)
	p := kafkatest.Producer(t, boot, "hanging-0-7", 10*time.Minute)
	kafkatest.Begin(t, p)
	kafkatest.Produce(t, p, "orders", 0, 1)
	kafkatest.Produce(t, p, "orders", 1, 1)
	a := newAdmin(t, boot)
	s1 := refresh(t, a, nil)
	c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.DescribeTransactions}, Topic: "orders", Partitions: []int32{0}, Count: -1})
	s2 := refresh(t, a, s1)
	p0 := partOf(t, s2, "orders", 0)
	orphans := model.Orphans(p0, model.ByProducerID(s2))
	if len(orphans) != 1 {
		t.Fatalf("orphans %+v", orphans)
	}
	markers := countRequests(c, kmsg.WriteTxnMarkers)
	act, err := model.PlanAbortPartition(p0, orphans[0], 10*time.Minute, time.Now())
	if !errors.Is(err, model.ErrNotIdle) {
		t.Fatalf("plan: %v", err)
	}
	r := execute(t, a, act)
	if !r.Refused || markers.Load() != 0 || !strings.Contains(r.Err, "not over 10m00s") {
		t.Fatalf("result %+v", r)
	}
	act.IdleWaived = true
	if r := execute(t, a, act); !r.OK() || markers.Load() != 1 || !strings.Contains(r.Summary(), "the last stable offset of orders-0 is now 2, the high watermark") {
		t.Fatalf("waived: %s", r.Summary())
	}
}

var _ model.Recorder = (*kafkatest.Journal)(nil)

// The request was the fence (Kafka aborts and answers CONCURRENT_TRANSACTIONS)
// and, before the re-read, the fenced job restarted and began its next
// transaction: the re-read shows neither the transaction as it was nor it
// being aborted. Its ABORT marker tells what happened; never "nothing
// happened", which would invite sending it again at the new transaction.
func TestForceTerminateFenceThenRestart(t *testing.T) {
	t.Parallel()
	c, boot := kafkatest.NewCluster(t)
	const id = "orders-sink-0"
	kafkatest.OpenTxn(t, boot, id, "orders", time.Minute)
	a := newAdmin(t, boot)
	act := forceTerminate(txnOf(t, refresh(t, a, nil), id))
	inits := busyOnce(t, c, func() {
		// What the request did on a real broker: fence and abort.
		f := kafkatest.Producer(t, boot, id, time.Minute)
		kafkatest.Begin(t, f)
		kafkatest.End(t, f, false)
		time.Sleep(5 * time.Millisecond)
		kafkatest.OpenTxn(t, boot, id, "orders", time.Minute) // the job, back
	})
	r, j := executeJournal(t, a, act)
	// Three InitProducerIds reach the cluster: ours, the fence's stand-in
	// and the job's; ours went out once.
	if !r.OK() || r.Sends != 1 || len(j.Tries()) != 1 || inits.Load() != 3 || !strings.Contains(r.Summary(), "its ABORT marker is in the log") {
		t.Fatalf("result %s (OK %v) after %d requests of ours, %d in all", r.Summary(), r.OK(), r.Sends, inits.Load())
	}
}
