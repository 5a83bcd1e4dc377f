package kafkaadmin_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/kafkaadmin"
)

// kfake has no coordinator log: a Poll that would follow it lists and
// describes as always, and says why the history comes from polls; no
// error, and Close stops the reader.
func TestPollFallsBackToPollsWithoutTheLog(t *testing.T) {
	t.Parallel()
	_, boot := kafkatest.NewCluster(t)
	a, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: boot, Timeout: 5 * time.Second, FollowLog: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var why string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		s, err := a.Poll(ctx, nil)
		if err != nil {
			t.Fatalf("Poll: %v", err)
		}
		if s.Source.Log || s.Events != nil {
			t.Fatalf("the log is the source on kfake: %+v", s.Source)
		}
		why = s.Source.Why
		if strings.Contains(why, "has no __transaction_state") {
			return
		}
	}
	t.Fatalf("source why %q, want it to say the cluster has no __transaction_state", why)
}

// TestFollowerGoneAfterClose: the log's reader, waiting to try a cluster
// without the log again, is gone the moment Close returns. Not parallel:
// the goroutines of the other tests would be counted.
func TestFollowerGoneAfterClose(t *testing.T) {
	_, boot := kafkatest.NewCluster(t)
	before := goleak.IgnoreCurrent()
	a, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: boot, Timeout: 5 * time.Second, FollowLog: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for range 3 {
		if _, err := a.Poll(ctx, nil); err != nil {
			t.Fatalf("Poll: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	a.Close()
	if err := goleak.Find(before); err != nil {
		t.Fatalf("after Close: %v", err)
	}
}
