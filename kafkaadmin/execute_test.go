package kafkaadmin_test

import (
	"context"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// countRequests counts the requests of one kind the cluster receives from now on.
func countRequests(c *kfake.Cluster, key kmsg.Key) *atomic.Int64 {
	var n atomic.Int64
	c.ControlKey(int16(key), func(kmsg.Request) (kmsg.Response, error, bool) {
		n.Add(1)
		return nil, nil, false
	})
	return &n
}

// forceTerminate is the force-terminate the TUI would plan from tx.
func forceTerminate(tx model.Txn) model.Action {
	a, err := model.PlanForceTerminate(tx)
	if err != nil {
		panic(err)
	}
	return a
}

// abortOn is the abort the TUI would plan, with the idle rule set aside:
// kfake's producers last wrote when their transaction began, moments ago.
// The rule itself is tested on its own.
func abortOn(p model.Partition, pr model.Producer) model.Action {
	a, err := model.PlanAbortPartition(p, pr, 0, time.Now())
	if err != nil {
		panic(err)
	}
	return a
}

func execute(t testing.TB, a *kafkaadmin.Client, act model.Action) model.Result {
	t.Helper()
	r, _ := executeJournal(t, a, act)
	return r
}

// executeJournal executes act with an in-memory audit trail, and checks that
// every result is recorded once, and every request after a record.
func executeJournal(t testing.TB, a *kafkaadmin.Client, act model.Action) (model.Result, *kafkatest.Journal) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	j := &kafkatest.Journal{}
	r := a.Execute(ctx, act, j)
	if !reflect.DeepEqual(r.Action, act) || r.At.IsZero() || r.Attempt != "test-attempt" {
		t.Fatalf("result does not carry its action, time and attempt: %+v", r)
	}
	if rs := j.Results(); len(rs) != 1 || rs[0].Summary() != r.Summary() {
		t.Fatalf("recorded results %+v, want exactly this one: %+v", rs, r)
	}
	if tries := j.Tries(); len(tries) != r.Sends && !(r.Unknown && len(tries) == r.Sends) {
		t.Fatalf("%d requests sent, %d recorded before sending (%v)", r.Sends, len(tries), tries)
	}
	return r, j
}

func TestForceTerminate(t *testing.T) {
	t.Parallel()
	c, boot := kafkatest.NewCluster(t)
	const id = "stuck-job-0-12"
	old := kafkatest.OpenTxn(t, boot, id, "orders", 10*time.Minute)
	a := newAdmin(t, boot)
	s1 := refresh(t, a, nil)
	tx := txnOf(t, s1, id)
	if !partOf(t, s1, "orders", 0).Pinned() {
		t.Fatal("the open transaction does not pin orders-0")
	}

	inits := countRequests(c, kmsg.InitProducerID)
	r := execute(t, a, forceTerminate(tx))
	if !r.OK() {
		t.Fatalf("force-terminate: %+v (%s)", r, r.Summary())
	}
	if n := inits.Load(); n != 1 {
		t.Fatalf("%d InitProducerId requests, want exactly 1", n)
	}

	s2 := refresh(t, a, s1)
	after := txnOf(t, s2, id)
	if after.State != model.Empty || after.ProducerEpoch != tx.ProducerEpoch+1 || after.ProducerID != tx.ProducerID {
		t.Fatalf("after force-terminate: %+v", after)
	}
	if p := partOf(t, s2, "orders", 0); p.LastStableOffset != p.HighWatermark {
		t.Fatalf("LSO did not advance to the high watermark: %+v", p)
	}
	wantKind(t, s1, s2, id, model.Fenced)
	if after.TimeoutMs != tx.TimeoutMs {
		t.Fatalf("timeout changed %d→%d", tx.TimeoutMs, after.TimeoutMs)
	}

	// The live producer is fenced.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := old.EndTransaction(ctx, kgo.TryCommit); err == nil {
		t.Fatal("the terminated producer still committed")
	}

	// The same action again: the epoch moved on, so it is refused unsent.
	r = execute(t, a, plannedOn(tx))
	if !r.Refused || r.Sent || !strings.Contains(r.Err, "state changed Ongoing→Empty since it was shown: it ended (epoch 0→1)") {
		t.Fatalf("second force-terminate: %+v", r)
	}
	if n := inits.Load(); n != 1 {
		t.Fatalf("a refused action sent InitProducerId (%d requests)", n)
	}
}

func TestForceTerminateRefusedWhenStateChanged(t *testing.T) {
	t.Parallel()
	c, boot := kafkatest.NewCluster(t)
	committer := kafkatest.OpenTxn(t, boot, "job-a-0-1", "orders", time.Minute)
	kafkatest.OpenTxn(t, boot, "job-b-0-1", "orders", time.Minute)
	never := plannedOn(model.Txn{ID: "never-seen", State: model.Ongoing, StartUnixMs: time.Now().UnixMilli(), Described: true})
	a := newAdmin(t, boot)
	s := refresh(t, a, nil)
	actA := forceTerminate(txnOf(t, s, "job-a-0-1"))
	actB := forceTerminate(txnOf(t, s, "job-b-0-1"))

	// Between confirming and sending: a commits, b is taken over by a new producer.
	kafkatest.End(t, committer, true)
	taker := kafkatest.Producer(t, boot, "job-b-0-1", time.Minute)
	kafkatest.Begin(t, taker)
	kafkatest.Produce(t, taker, "orders", 2, 1)

	inits := countRequests(c, kmsg.InitProducerID)
	for _, tc := range []struct {
		act  model.Action
		want string
	}{
		{actA, "state changed Ongoing→Empty"},
		{actB, "this is a newer transaction of job-b-0-1"},
		{never, "no longer known"},
	} {
		r := execute(t, a, tc.act)
		if !r.Refused || r.Sent || !strings.Contains(r.Err, tc.want) {
			t.Errorf("%s: %+v, want refusal containing %q", tc.act.TransactionalID, r, tc.want)
		}
	}
	if n := inits.Load(); n != 0 {
		t.Fatalf("refused actions sent %d InitProducerId requests", n)
	}
}

// plannedOn is the force-terminate of tx whatever its state (for refusals).
func plannedOn(tx model.Txn) model.Action {
	st := tx.State
	tx.State = model.Ongoing
	a := forceTerminate(tx)
	a.State = st
	return a
}

// TestForceTerminateRetriesConcurrentTransactions: CONCURRENT_TRANSACTIONS
// while the re-read still shows the very same open transaction (a transition
// of its own under way) is asked again; each request is recorded first.
func TestForceTerminateRetriesConcurrentTransactions(t *testing.T) {
	t.Parallel()
	c, boot := kafkatest.NewCluster(t)
	kafkatest.OpenTxn(t, boot, "busy-0-1", "orders", time.Minute)
	a := newAdmin(t, boot)
	tx := txnOf(t, refresh(t, a, nil), "busy-0-1")

	var inits atomic.Int64
	c.ControlKey(int16(kmsg.InitProducerID), func(req kmsg.Request) (kmsg.Response, error, bool) {
		if inits.Add(1) > 2 {
			return nil, nil, false // the third attempt goes through
		}
		c.KeepControl()
		resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
		resp.ErrorCode = 51 // CONCURRENT_TRANSACTIONS
		return resp, nil, true
	})
	r, j := executeJournal(t, a, forceTerminate(tx))
	if !r.OK() || inits.Load() != 3 || r.Sends != 3 || !reflect.DeepEqual(j.Tries(), []int{1, 2, 3}) {
		t.Fatalf("result %+v after %d attempts, recorded tries %v", r, inits.Load(), j.Tries())
	}
}

func TestForceTerminateBrokerError(t *testing.T) {
	t.Parallel()
	c, boot := kafkatest.NewCluster(t)
	kafkatest.OpenTxn(t, boot, "denied-0-1", "orders", time.Minute)
	a := newAdmin(t, boot)
	tx := txnOf(t, refresh(t, a, nil), "denied-0-1")
	c.ControlKey(int16(kmsg.InitProducerID), func(req kmsg.Request) (kmsg.Response, error, bool) {
		resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
		resp.ErrorCode = 53 // TRANSACTIONAL_ID_AUTHORIZATION_FAILED
		return resp, nil, true
	})
	r := execute(t, a, forceTerminate(tx))
	if !r.Sent || r.Refused || r.ErrorCode != "TRANSACTIONAL_ID_AUTHORIZATION_FAILED" || r.Err == "" || r.OK() {
		t.Fatalf("result %+v", r)
	}
}

func TestForceTerminateNoAnswerIsUnknown(t *testing.T) {
	t.Parallel()
	c, boot := kafkatest.NewCluster(t)
	kafkatest.OpenTxn(t, boot, "slow-0-1", "orders", time.Minute)
	a, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: boot, Timeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tx := txnOf(t, refresh(t, a, nil), "slow-0-1")
	// The connection is dropped once the request arrived: it may have acted.
	c.ControlKey(int16(kmsg.InitProducerID), func(kmsg.Request) (kmsg.Response, error, bool) {
		return nil, errDropped, true
	})
	r := execute(t, a, forceTerminate(tx))
	if !r.Sent || !r.Unknown || r.OK() {
		t.Fatalf("result %+v", r)
	}
}

var errDropped = errString("dropped by the test")

type errString string

func (e errString) Error() string { return string(e) }

func TestAbortPartition(t *testing.T) {
	t.Parallel()
	c, boot := kafkatest.NewCluster(t)
	const id = "hanging-0-5"
	p := kafkatest.Producer(t, boot, id, 10*time.Minute)
	kafkatest.Begin(t, p)
	kafkatest.Produce(t, p, "orders", 0, 3)
	kafkatest.Produce(t, p, "orders", 1, 2)
	a := newAdmin(t, boot)
	s1 := refresh(t, a, nil)
	p0 := partOf(t, s1, "orders", 0)
	pr, ok := p0.Pinner()
	if !ok {
		t.Fatalf("orders-0 not pinned: %+v", p0)
	}
	act := abortOn(p0, pr)
	markers := countRequests(c, kmsg.WriteTxnMarkers)

	// While the coordinator lists the partition in the transaction, the right
	// tool is force-terminate.
	r := execute(t, a, act)
	if !r.Refused || !strings.Contains(r.Err, "use force-terminate") {
		t.Fatalf("abort of a partition the coordinator owns: %+v", r)
	}
	if markers.Load() != 0 {
		t.Fatal("a refused abort wrote markers")
	}

	// The coordinator forgets orders-0 (a KIP-664 hanging transaction): kfake
	// leaves it out of DescribeTransactions from now on.
	forget := c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.DescribeTransactions}, Topic: "orders", Partitions: []int32{0}, Count: -1})
	defer forget.Remove()
	s2 := refresh(t, a, s1)
	if got := txnOf(t, s2, id).Partitions; len(got) != 1 || got[0].Partition != 1 {
		t.Fatalf("coordinator still lists %v", got)
	}
	p0 = partOf(t, s2, "orders", 0) // still watched: it was pinned
	orphans := model.Orphans(p0, model.ByProducerID(s2))
	if len(orphans) != 1 || orphans[0].ProducerID != pr.ProducerID {
		t.Fatalf("orphans on orders-0: %+v", orphans)
	}
	act = abortOn(p0, orphans[0])
	r = execute(t, a, act)
	if !r.OK() {
		t.Fatalf("abort on orders-0: %+v (%s)", r, r.Summary())
	}
	if markers.Load() != 1 {
		t.Fatalf("%d WriteTxnMarkers requests, want 1", markers.Load())
	}

	s3 := refresh(t, a, s2)
	if got := partOf(t, s3, "orders", 0); got.LastStableOffset != got.HighWatermark || got.LastStableOffset <= p0.LastStableOffset {
		t.Fatalf("orders-0 after the abort: %+v (before %+v)", got, p0)
	}
	if got := partOf(t, s3, "orders", 1); !got.Pinned() {
		t.Fatalf("orders-1 should still be held by the open transaction: %+v", got)
	}

	// An action built on another view of the partition (another start
	// offset) is refused unsent.
	stale := act
	stale.StartOffset = 999
	if r := execute(t, a, stale); !r.Refused || markers.Load() != 1 {
		t.Fatalf("stale abort: %+v", r)
	}
}

func TestAbortPartitionRefusedAfterCommit(t *testing.T) {
	t.Parallel()
	c, boot := kafkatest.NewCluster(t)
	p := kafkatest.OpenTxn(t, boot, "late-0-1", "orders", time.Minute)
	a := newAdmin(t, boot)
	s := refresh(t, a, nil)
	p0 := partOf(t, s, "orders", 0)
	pr, _ := p0.Pinner()
	act := abortOn(p0, pr)
	kafkatest.End(t, p, true)
	markers := countRequests(c, kmsg.WriteTxnMarkers)
	r := execute(t, a, act)
	if !r.Refused || r.Sent || !strings.Contains(r.Err, "no longer has an open transaction") || markers.Load() != 0 {
		t.Fatalf("abort after commit: %+v (markers %d)", r, markers.Load())
	}
}
