package kafkaadmin_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/model"
)

func TestOngoingTransaction(t *testing.T) {
	t.Parallel()
	c, boot := kafkatest.NewCluster(t, kfake.BrokerConfigs(map[string]string{"transaction.max.timeout.ms": "120000"}))
	const id = "orders-enricher-v1-0-7"
	p := kafkatest.Producer(t, boot, id, 45*time.Second)
	// A committed transaction first, so the open one does not start at offset 0.
	kafkatest.Begin(t, p)
	kafkatest.Produce(t, p, "orders", 0, 2)
	kafkatest.End(t, p, true)
	before := time.Now().Add(-time.Second) // kfake stamps whole milliseconds
	kafkatest.Begin(t, p)
	kafkatest.Produce(t, p, "orders", 0, 3)
	kafkatest.Produce(t, p, "orders", 1, 1)

	a := newAdmin(t, boot)
	s := refresh(t, a, nil)
	if s.Brokers != 3 || s.Bootstrap == "" || s.BrokerMaxTimeoutMs != 120000 {
		t.Fatalf("header: brokers %d, bootstrap %q, max timeout %d", s.Brokers, s.Bootstrap, s.BrokerMaxTimeoutMs)
	}
	tx := txnOf(t, s, id)
	if tx.State != model.Ongoing || !tx.Described || tx.Err != "" {
		t.Fatalf("txn = %+v, want described Ongoing", tx)
	}
	if tx.ProducerID < 0 || tx.ProducerEpoch != 0 || tx.TimeoutMs != 45000 {
		t.Fatalf("pid %d epoch %d timeout %d", tx.ProducerID, tx.ProducerEpoch, tx.TimeoutMs)
	}
	if tx.StartTime().Before(before) || tx.StartTime().After(s.TakenAt) {
		t.Fatalf("start %s not between %s and %s", tx.StartTime(), before, s.TakenAt)
	}
	want := []model.TopicPartition{{Topic: "orders", Partition: 0}, {Topic: "orders", Partition: 1}}
	if !slices.Equal(tx.Partitions, want) {
		t.Fatalf("partitions %v, want %v", tx.Partitions, want)
	}
	if want := c.CoordinatorFor(id); tx.Coordinator != want {
		t.Fatalf("coordinator %d, want %d", tx.Coordinator, want)
	}

	// Offsets 0-1 hold the committed records, 2 its marker, 3-5 the open ones.
	p0 := partOf(t, s, "orders", 0)
	if p0.Err != "" || p0.LastStableOffset != 3 || p0.HighWatermark != 6 || p0.HeldBack() != 3 {
		t.Fatalf("orders-0 = %+v, want LSO 3, HWM 6", p0)
	}
	if want := c.LeaderFor("orders", 0); p0.Leader != want {
		t.Fatalf("leader %d, want %d", p0.Leader, want)
	}
	pin, ok := p0.Pinner()
	if !ok || pin.ProducerID != tx.ProducerID || pin.ProducerEpoch != tx.ProducerEpoch || pin.CurrentTxnStartOffset != 3 {
		t.Fatalf("pinner %+v (%v), producers %+v", pin, ok, p0.Producers)
	}
	if pin.LastWriteMs == 0 || pin.CoordinatorEpoch < 0 {
		t.Fatalf("producer row %+v", pin)
	}
	if p1 := partOf(t, s, "orders", 1); p1.LastStableOffset != 0 || p1.HighWatermark != 1 {
		t.Fatalf("orders-1 = %+v, want LSO 0, HWM 1", p1)
	}
}

func TestCommittedAndAborted(t *testing.T) {
	t.Parallel()
	_, boot := kafkatest.NewCluster(t)
	commit := kafkatest.OpenTxn(t, boot, "job-0-1", "orders", time.Minute)
	abort := kafkatest.OpenTxn(t, boot, "job-1-1", "payments", time.Minute)
	a := newAdmin(t, boot)
	s1 := refresh(t, a, nil)

	kafkatest.End(t, commit, true)
	kafkatest.End(t, abort, false)
	s2 := refresh(t, a, s1)

	c, ab := txnOf(t, s2, "job-0-1"), txnOf(t, s2, "job-1-1")
	if c.State != model.Empty || c.Outcome() != model.CompleteCommit {
		t.Fatalf("committed txn: state %s outcome %q", c.State, c.Outcome())
	}
	if ab.State != model.Empty || ab.Outcome() != model.CompleteAbort {
		t.Fatalf("aborted txn: state %s outcome %q", ab.State, ab.Outcome())
	}
	wantKind(t, s1, s2, "job-0-1", model.Committed)
	wantKind(t, s1, s2, "job-1-1", model.Aborted)

	// The partitions stay in view one more refresh (they were pinned), now free.
	for _, tp := range []model.TopicPartition{{Topic: "orders"}, {Topic: "payments"}} {
		p := partOf(t, s2, tp.Topic, tp.Partition)
		if p.Pinned() || p.LastStableOffset != p.HighWatermark {
			t.Fatalf("%s still pinned: %+v", tp.Topic, p)
		}
	}
	// The outcome is kept while the id stays idle, without describing it again.
	s3 := refresh(t, a, s2)
	if got := txnOf(t, s3, "job-0-1").Outcome(); got != model.CompleteCommit {
		t.Fatalf("outcome after another refresh: %q", got)
	}
	if len(s3.Partitions) != 0 {
		t.Fatalf("no open transaction, yet partitions %v", s3.Partitions)
	}
	if evs := model.Diff(s2, s3); len(evs) != 0 {
		t.Fatalf("nothing happened, yet Diff = %v", evs)
	}
}

func TestTimedOut(t *testing.T) {
	t.Parallel()
	_, boot := kafkatest.NewCluster(t)
	const id = "crashed-job-0-3"
	kafkatest.OpenTxn(t, boot, id, "orders", 2*time.Second)
	a := newAdmin(t, boot)
	s1 := refresh(t, a, nil)
	tx := txnOf(t, s1, id)
	if tx.State != model.Ongoing || tx.TimeoutMs != 2000 {
		t.Fatalf("txn = %+v", tx)
	}
	s2 := eventually(t, a, s1, 8*time.Second, func(s *model.Snapshot) bool { return txnOf(t, s, id).State == model.Empty })
	wantKind(t, s1, s2, id, model.TimedOut)
	if got := txnOf(t, s2, id).ProducerEpoch; got != tx.ProducerEpoch+1 {
		t.Fatalf("epoch after the timeout abort: %d, want %d", got, tx.ProducerEpoch+1)
	}
	if p := partOf(t, s2, "orders", 0); p.Pinned() {
		t.Fatalf("orders-0 still pinned after the abort: %+v", p)
	}
}

func TestFenced(t *testing.T) {
	t.Parallel()
	_, boot := kafkatest.NewCluster(t)
	const id = "orders-enricher-v1-2-40"
	first := kafkatest.OpenTxn(t, boot, id, "orders", time.Minute)
	a := newAdmin(t, boot)
	s1 := refresh(t, a, nil)

	// A second job with the same id: its InitProducerId fences the first.
	second := kafkatest.Producer(t, boot, id, time.Minute)
	kafkatest.Begin(t, second)
	kafkatest.Produce(t, second, "orders", 1, 1)
	s2 := refresh(t, a, s1)
	wantKind(t, s1, s2, id, model.Fenced)
	if tx := txnOf(t, s2, id); tx.ProducerEpoch != txnOf(t, s1, id).ProducerEpoch+1 || tx.State != model.Ongoing {
		t.Fatalf("after the fence: %+v", tx)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := first.EndTransaction(ctx, kgo.TryCommit); err == nil {
		t.Fatal("the fenced producer committed")
	}
}
