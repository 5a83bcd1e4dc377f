package kafkaadmin_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/testutil"
	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/kafkaadmin"
)

// The ui probes every interval while the cluster is away and tells the user at
// once, so a refused connection must fail in far less than the 10 s timeout:
// neither Ping nor Refresh may spend it on retries.
func TestARefusedConnectionFailsFast(t *testing.T) {
	a := newAdminTimeout(t, []string{testutil.ClosedAddr(t)}, 10*time.Second)
	start := time.Now()
	err := a.Ping(context.Background())
	if err == nil || !strings.Contains(err.Error(), "cannot reach the cluster") || !strings.Contains(err.Error(), "refused") {
		t.Errorf("Ping = %v, want cannot reach the cluster: … refused", err)
	}
	if _, rerr := a.Refresh(context.Background(), nil); rerr == nil {
		t.Error("Refresh of a closed port succeeded")
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Ping and Refresh took %v to fail on a refused connection", took)
	}
}

func TestPingFollowsTheCluster(t *testing.T) {
	c, boot := kafkatest.NewCluster(t)
	a := newAdminTimeout(t, boot, 10*time.Second)
	if err := a.Ping(context.Background()); err != nil {
		t.Fatalf("Ping on a live cluster: %v", err)
	}
	if _, err := a.Refresh(context.Background(), nil); err != nil {
		t.Fatalf("Refresh: %v", err)
	}
	c.Close() // every broker gone, connections dropped
	start := time.Now()
	perr := a.Ping(context.Background())
	pingTook := time.Since(start)
	_, rerr := a.Refresh(context.Background(), nil)
	refreshTook := time.Since(start) - pingTook
	if perr == nil || rerr == nil {
		t.Fatalf("with the cluster gone Ping = %v, Refresh = %v; want errors", perr, rerr)
	}
	if pingTook > time.Second || refreshTook > 2*time.Second {
		t.Errorf("with the cluster gone Ping failed after %v and Refresh after %v; want well under the 10s timeout", pingTook, refreshTook)
	}
	t.Logf("cluster gone: Ping failed in %v (%v), Refresh in %v (%v)", pingTook, perr, refreshTook, rerr)
}

func TestPingStopsWithItsContextAndWithClose(t *testing.T) {
	a := newAdminTimeout(t, []string{testutil.ClosedAddr(t)}, 10*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := a.Ping(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Ping with a cancelled context = %v, want context.Canceled (the ui tells quitting from failing by it)", err)
	}
	a.Close()
	if err := a.Ping(context.Background()); err == nil {
		t.Error("Ping after Close succeeded")
	}
}

func newAdminTimeout(t *testing.T, bootstrap []string, timeout time.Duration) *kafkaadmin.Client {
	t.Helper()
	a, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: bootstrap, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}
