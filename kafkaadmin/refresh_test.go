package kafkaadmin_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/txnscope/txnscope/internal/testutil"
	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// TestIdleIDsNotDescribedAgain: only open, new and changed ids cost a
// DescribeTransactions; idle ones keep what was described before.
func TestIdleIDsNotDescribedAgain(t *testing.T) {
	t.Parallel()
	c, boot := kafkatest.NewCluster(t)
	var idle []string
	for i := range 40 {
		idle = append(idle, fmt.Sprintf("idle-%d-1", i))
	}
	kafkatest.InitIDs(t, boot, time.Minute, idle...)
	open := kafkatest.OpenTxn(t, boot, "open-0-1", "orders", time.Minute)

	var described atomic.Int64
	c.ControlKey(int16(kmsg.DescribeTransactions), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		for _, id := range req.(*kmsg.DescribeTransactionsRequest).TransactionalIDs {
			if !strings.HasPrefix(id, "txnscope-acl-probe-") { // the ACL probe (acl_test.go counts it)
				described.Add(1)
			}
		}
		return nil, nil, false
	})
	a := newAdmin(t, boot)
	s1 := refresh(t, a, nil)
	if n := described.Swap(0); n != 41 {
		t.Fatalf("first refresh described %d ids, want all 41", n)
	}
	s2 := refresh(t, a, s1)
	if n := described.Swap(0); n != 1 {
		t.Fatalf("steady refresh described %d ids, want only the open one", n)
	}
	if tx := txnOf(t, s2, "idle-7-1"); !tx.Described || tx.TimeoutMs != 60000 || tx.Coordinator != c.CoordinatorFor("idle-7-1") {
		t.Fatalf("idle id lost its described fields: %+v", tx)
	}

	kafkatest.End(t, open, true)
	kafkatest.InitIDs(t, boot, time.Minute, "new-0-1")
	s3 := refresh(t, a, s2)
	if n := described.Swap(0); n != 2 {
		t.Fatalf("described %d ids, want the changed one and the new one", n)
	}
	if len(s3.Txns) != 42 {
		t.Fatalf("%d ids, want 42", len(s3.Txns))
	}
	refresh(t, a, s3)
	if n := described.Swap(0); n != 0 {
		t.Fatalf("all idle, yet %d ids described", n)
	}
}

func TestPerItemErrors(t *testing.T) {
	t.Parallel()
	c, boot := kafkatest.NewCluster(t)
	kafkatest.OpenTxn(t, boot, "secret-0-1", "orders", time.Minute)
	kafkatest.OpenTxn(t, boot, "visible-0-1", "payments", time.Minute)
	c.Fault(
		kfake.Fault{Keys: []kmsg.Key{kmsg.DescribeTransactions}, TxnID: "secret-0-1", Err: kerr.TransactionalIDAuthorizationFailed, Count: -1},
		kfake.Fault{Keys: []kmsg.Key{kmsg.DescribeProducers}, Topic: "payments", Err: kerr.TopicAuthorizationFailed, Count: -1},
	)
	a := newAdmin(t, boot)
	s := refresh(t, a, nil)
	secret := txnOf(t, s, "secret-0-1")
	if !strings.Contains(secret.Err, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED") || secret.Described || secret.State != model.Ongoing {
		t.Fatalf("undescribable id: %+v", secret)
	}
	if v := txnOf(t, s, "visible-0-1"); v.Err != "" || !v.Described {
		t.Fatalf("the other id suffered: %+v", v)
	}
	p := partOf(t, s, "payments", 0)
	if !strings.Contains(p.Err, "TOPIC_AUTHORIZATION_FAILED") || p.HighWatermark != kafkatest.Records || p.Producers != nil {
		t.Fatalf("payments-0: %+v", p)
	}
	// The failed describe is retried on the next refresh, not forgotten.
	s2 := refresh(t, a, s)
	if got := txnOf(t, s2, "secret-0-1"); got.Err == "" {
		t.Fatalf("error vanished without a describe: %+v", got)
	}
}

// silentBroker accepts connections and never answers.
func silentBroker(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
	})
	return ln.Addr().String()
}

func TestUnreachableCluster(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		addr string
	}{
		{"closed port", testutil.ClosedAddr(t)},
		{"silent broker", silentBroker(t)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			const timeout = 700 * time.Millisecond
			a, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: []string{tc.addr}, Timeout: timeout})
			if err != nil {
				t.Fatalf("New must not fail on a down cluster: %v", err)
			}
			defer a.Close()
			start := time.Now()
			s, err := a.Refresh(context.Background(), nil)
			if err == nil || s != nil {
				t.Fatalf("Refresh = %v, %v; want an error", s, err)
			}
			if took := time.Since(start); took > 2*timeout+time.Second {
				t.Fatalf("Refresh took %s with a %s timeout", took, timeout)
			}
			start = time.Now()
			r := a.Execute(context.Background(), plannedOn(model.Txn{ID: "x", State: model.Ongoing, StartUnixMs: time.Now().UnixMilli(), Described: true}), &kafkatest.Journal{})
			if !r.Refused || r.Sent || time.Since(start) > 2*timeout+time.Second {
				t.Fatalf("Execute on a down cluster: %+v after %s", r, time.Since(start))
			}
		})
	}
}

func TestCancelStopsPromptly(t *testing.T) {
	t.Parallel()
	addr := silentBroker(t)
	a, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: []string{addr}, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	if _, err := a.Refresh(ctx, nil); err == nil {
		t.Fatal("Refresh succeeded against a silent broker")
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("cancelled Refresh returned after %s", took)
	}

	// Close interrupts a Refresh in flight too.
	done := make(chan error, 1)
	go func() {
		_, err := a.Refresh(context.Background(), nil)
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	a.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Refresh succeeded after Close")
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Close did not stop the Refresh in flight")
	}
}

func TestNewValidates(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		cfg  kafkaadmin.Config
		ok   bool
	}{
		{"plain", kafkaadmin.Config{Bootstrap: []string{"127.0.0.1:9092"}, Timeout: time.Second}, true},
		{"comma list", kafkaadmin.Config{Bootstrap: []string{"127.0.0.1:9092, 127.0.0.1:9093"}}, true},
		{"default timeout", kafkaadmin.Config{Bootstrap: []string{"localhost:9092"}}, true},
		{"no bootstrap", kafkaadmin.Config{Timeout: time.Second}, false},
		{"blank bootstrap", kafkaadmin.Config{Bootstrap: []string{" ", ","}, Timeout: time.Second}, false},
		{"space inside", kafkaadmin.Config{Bootstrap: []string{"a b:9092"}, Timeout: time.Second}, false},
		{"negative timeout", kafkaadmin.Config{Bootstrap: []string{"localhost:9092"}, Timeout: -time.Second}, false},
		{"absurd timeout", kafkaadmin.Config{Bootstrap: []string{"localhost:9092"}, Timeout: 24 * time.Hour}, false},
	} {
		a, err := kafkaadmin.New(tc.cfg)
		if (err == nil) != tc.ok {
			t.Errorf("%s: err = %v, want ok=%v", tc.name, err, tc.ok)
		}
		if a != nil {
			a.Close()
			a.Close() // twice is harmless
		}
	}
}

func TestBrokerConfigReadRarely(t *testing.T) {
	t.Parallel()
	c, boot := kafkatest.NewCluster(t, kfake.BrokerConfigs(map[string]string{"transaction.max.timeout.ms": "300000"}))
	configs := countRequests(c, kmsg.DescribeConfigs)
	a := newAdmin(t, boot)
	s := refresh(t, a, nil)
	first := configs.Load()
	if first == 0 || s.BrokerMaxTimeoutMs != 300000 {
		t.Fatalf("first refresh: %d DescribeConfigs, max timeout %d", first, s.BrokerMaxTimeoutMs)
	}
	for range 3 {
		s = refresh(t, a, s)
	}
	if n := configs.Load(); n != first || s.BrokerMaxTimeoutMs != 300000 {
		t.Fatalf("broker configs read again (%d requests), max timeout %d", n-first, s.BrokerMaxTimeoutMs)
	}
}

func TestListFailsEverywhere(t *testing.T) {
	t.Parallel()
	c, boot := kafkatest.NewCluster(t)
	kafkatest.OpenTxn(t, boot, "any-0-1", "orders", time.Minute)
	c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.ListTransactions}, TopLevel: true, Err: kerr.ClusterAuthorizationFailed, Count: -1})
	a := newAdmin(t, boot)
	s, err := a.Refresh(context.Background(), nil)
	if err == nil || s != nil || !strings.Contains(err.Error(), "CLUSTER_AUTHORIZATION_FAILED") {
		t.Fatalf("Refresh = %v, %v; want the listing error", s, err)
	}
}

// TestWatchedPartitionPolledWithoutTransaction: a partition named in
// Config.Watch is read on every refresh although no open transaction lists it
// (how a hanging transaction's partition stays in view).
func TestWatchedPartitionPolledWithoutTransaction(t *testing.T) {
	t.Parallel()
	c, boot := kafkatest.NewCluster(t)
	p := kafkatest.Producer(t, boot, "done-0-1", time.Minute)
	kafkatest.Begin(t, p)
	kafkatest.Produce(t, p, "orders", 1, 2)
	kafkatest.End(t, p, true)

	watch := []model.TopicPartition{{Topic: "orders", Partition: 1}}
	a, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: boot, Timeout: 5 * time.Second, Watch: watch})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(a.Close)
	watch[0].Partition = 2 // the client keeps its own copy
	s1 := refresh(t, a, nil)
	s2 := refresh(t, a, s1)
	for _, s := range []*model.Snapshot{s1, s2} {
		if len(s.Partitions) != 1 {
			t.Fatalf("partitions %+v, want only the watched orders-1", s.Partitions)
		}
		part := partOf(t, s, "orders", 1)
		if part.Err != "" || part.HighWatermark != 3 || part.LastStableOffset != 3 || part.Leader != c.LeaderFor("orders", 1) {
			t.Fatalf("watched partition %+v, want HWM = LSO = 3 at its leader", part)
		}
	}
	// Without Watch the same cluster shows no partition at all.
	if s := refresh(t, newAdmin(t, boot), nil); len(s.Partitions) != 0 {
		t.Fatalf("unwatched refresh shows %+v", s.Partitions)
	}
}

// TestSnapshotSaysWhetherEpochBumpsOnEnd: model.Diff needs to know whether the
// brokers bump the epoch on every commit and abort (transaction version 2)
// before it calls a higher epoch a fence.
func TestSnapshotSaysWhetherEpochBumpsOnEnd(t *testing.T) {
	t.Parallel()
	_, v39 := kafkatest.NewCluster(t)
	if s := refresh(t, newAdmin(t, v39), nil); s.EpochBumpsOnEnd {
		t.Fatal("Kafka 3.9 protocol: snapshot says the epoch bumps on every end")
	}
	_, v40 := kafkatest.NewCluster(t, kfake.MaxVersions(kversion.V4_0_0()))
	if s := refresh(t, newAdmin(t, v40), nil); !s.EpochBumpsOnEnd {
		t.Fatal("Kafka 4.0 protocol (EndTxn v5): snapshot does not say the epoch bumps on every end")
	}
}
