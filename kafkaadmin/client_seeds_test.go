package kafkaadmin_test

import (
	"context"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/testutil"
	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/kafkaadmin"
)

// Dead seeds cost a client nothing but a stagger: a silent one first, three
// refusing ones, then the cluster; every fresh client's first refresh works,
// and so do the ones after it.
func TestDeadSeedsAreSkipped(t *testing.T) {
	_, good := kafkatest.NewCluster(t)
	seeds := append([]string{testutil.SilentAddr(t), testutil.ClosedAddr(t), testutil.ClosedAddr(t), testutil.ClosedAddr(t)}, good[0])
	for i := 0; i < 10; i++ {
		a, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: seeds, Timeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		for j := 0; j < 2; j++ {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			start := time.Now()
			_, err := a.Refresh(ctx, nil)
			cancel()
			if err != nil {
				t.Errorf("client %d, refresh %d: %v after %s", i, j, err, time.Since(start))
			}
		}
		a.Close()
	}
}

// With no seed answering, a request fails within its timeout, not the
// timeout twice over; Close stops one waiting on silent seeds at once.
func TestNoSeedAnswers(t *testing.T) {
	seeds := []string{testutil.SilentAddr(t), testutil.ClosedAddr(t), testutil.SilentAddr(t)}
	a, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: seeds, Timeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := a.ListTransactions(context.Background(), kafkaadmin.ListOptions{DurationFilterMs: -1}); err == nil {
		t.Error("ListTransactions answered with no broker")
	}
	if took := time.Since(start); took > 900*time.Millisecond {
		t.Errorf("failed after %s with a 500ms timeout", took)
	}

	b, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: seeds, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := b.Refresh(context.Background(), nil); done <- err }()
	time.Sleep(100 * time.Millisecond)
	b.Close()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Error("Refresh still waiting on silent seeds 2s after Close")
	}
	a.Close()
}
