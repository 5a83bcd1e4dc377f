package kafkaadmin_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/goleak"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// TestNothingLingersAfterClose: a client used under faults (connections
// dropped, requests slept past the timeout, errors) and closed while a
// Refresh is still waiting on a slept request leaves none of its goroutines
// behind, and the Refresh returns at once. TestMain's goleak checks the whole
// run; this checks the moment after Close. Not parallel: the goroutines of
// the other tests would be counted.
func TestNothingLingersAfterClose(t *testing.T) {
	c, boot := kafkatest.NewCluster(t)
	kafkatest.OpenTxn(t, boot, "leak-0-1", "orders", 10*time.Minute)
	inj := newInjector(t, c)
	before := goleak.IgnoreCurrent() // the cluster and the producer stay

	a, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: boot, Timeout: faultTimeout})
	if err != nil {
		t.Fatal(err)
	}
	var prev *model.Snapshot
	for _, f := range []fault{
		{keys: []kmsg.Key{kmsg.DescribeTransactions}, drop: true},
		{keys: []kmsg.Key{kmsg.ListOffsets}, sleep: faultTimeout + 100*time.Millisecond},
		{keys: []kmsg.Key{kmsg.DescribeProducers}, code: kerr.NotLeaderForPartition},
		{keys: []kmsg.Key{kmsg.InitProducerID}, drop: true},
	} {
		inj.set(f)
		if s, err := refreshCtx(a, prev); err == nil {
			prev = s
		}
		if prev != nil {
			if tx, ok := prev.Txn("leak-0-1"); ok {
				if act, err := model.PlanForceTerminate(tx); err == nil {
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					a.Execute(ctx, act, &kafkatest.Journal{})
					cancel()
				}
			}
		}
	}

	const held = 800 * time.Millisecond
	inj.set(fault{keys: []kmsg.Key{kmsg.ListTransactions}, sleep: held})
	done := make(chan error, 1)
	go func() {
		_, err := a.Refresh(context.Background(), prev)
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	a.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Error("a Refresh interrupted by Close returned a snapshot")
		}
	case <-time.After(time.Second):
		t.Fatal("Refresh did not return promptly after Close")
	}
	inj.clear()
	time.Sleep(held) // the slept request's timer is the test's, not the client's
	goleak.VerifyNone(t, before)
}
