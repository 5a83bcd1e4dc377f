package kafkaadmin_test

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// coordinatorState is what the hooks of loadHooks make the coordinators say.
type coordinatorState int32

const (
	// settled: they answer as kfake does (every coordinator loaded).
	settled coordinatorState = iota
	// resigned: what a real Kafka broker says between losing its
	// __transaction_state partitions (fenced) and loading them again:
	// ListTransactions an empty list without error, DescribeTransactions
	// NOT_COORDINATOR for every id.
	resigned
	// loading: DescribeTransactions answers COORDINATOR_LOAD_IN_PROGRESS.
	loading
)

// loadHooks drives the coordinators of c through the states of a fenced
// broker coming back. ListTransactions filtered by producer id (the question
// of find-hanging and the abort's re-check) lists nothing while hide is set,
// so an open transaction looks ownerless, and runs atList (once): between
// the checks made before and after the listing.
type loadHooks struct {
	state atomic.Int32
	hide  atomic.Bool
	// atList, when set, runs at the next filtered listing (on the cluster's
	// goroutine), then is dropped.
	atList atomic.Pointer[func()]
	// epoch is the leader epoch of every __transaction_state partition when
	// tsPartitions > 0: Metadata then reports such a topic, led by the broker
	// asked, as real Kafka does (kfake has none).
	epoch        atomic.Int32
	tsPartitions int32
}

func hookLoad(c *kfake.Cluster, tsPartitions int32) *loadHooks {
	h := &loadHooks{tsPartitions: tsPartitions}
	c.ControlKey(int16(kmsg.ListTransactions), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := kreq.(*kmsg.ListTransactionsRequest)
		filtered := len(req.ProducerIDFilters) > 0
		if f := h.atList.Load(); f != nil && filtered && h.atList.CompareAndSwap(f, nil) {
			(*f)()
		}
		if !(filtered && h.hide.Load()) && coordinatorState(h.state.Load()) != resigned {
			return nil, nil, false
		}
		resp := req.ResponseKind().(*kmsg.ListTransactionsResponse)
		resp.Version = req.Version
		return resp, nil, true
	})
	c.ControlKey(int16(kmsg.DescribeTransactions), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		var code int16
		switch coordinatorState(h.state.Load()) {
		case resigned:
			code = kerr.NotCoordinator.Code
		case loading:
			code = kerr.CoordinatorLoadInProgress.Code
		default:
			return nil, nil, false
		}
		req := kreq.(*kmsg.DescribeTransactionsRequest)
		resp := req.ResponseKind().(*kmsg.DescribeTransactionsResponse)
		resp.Version = req.Version
		for _, id := range req.TransactionalIDs {
			st := kmsg.NewDescribeTransactionsResponseTransactionState()
			st.TransactionalID, st.ErrorCode = id, code
			resp.TransactionStates = append(resp.TransactionStates, st)
		}
		return resp, nil, true
	})
	if tsPartitions > 0 {
		c.ControlKey(int16(kmsg.Metadata), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
			c.KeepControl()
			req := kreq.(*kmsg.MetadataRequest)
			if len(req.Topics) != 1 || req.Topics[0].Topic == nil || *req.Topics[0].Topic != "__transaction_state" {
				return nil, nil, false
			}
			resp := req.ResponseKind().(*kmsg.MetadataResponse)
			resp.Version = req.Version
			t := kmsg.NewMetadataResponseTopic()
			t.Topic = kmsg.StringPtr("__transaction_state")
			for p := range h.tsPartitions {
				mp := kmsg.NewMetadataResponseTopicPartition()
				mp.Partition, mp.Leader, mp.LeaderEpoch = p, c.CurrentNode(), h.epoch.Load()
				mp.Replicas, mp.ISR = []int32{mp.Leader}, []int32{mp.Leader}
				t.Partitions = append(t.Partitions, mp)
			}
			resp.Topics = append(resp.Topics, t)
			return resp, nil, true
		})
	}
	return h
}

func (h *loadHooks) set(s coordinatorState) { h.state.Store(int32(s)) }

// during arranges for f to run while the owners are being listed.
func (h *loadHooks) during(f func()) { h.atList.Store(&f) }

// TestLoadingCoordinatorIsNoOwner: "no transactional id owns the producer" is
// concluded only from coordinators known to have loaded their transactions
// all along the listing. Otherwise find-hanging reports nothing as hanging
// and says why, the partition abort is refused before any marker is written;
// once the coordinators have settled, both work again.
func TestLoadingCoordinatorIsNoOwner(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// tsPartitions > 0: Metadata reports a __transaction_state topic.
		tsPartitions int32
		// arrange puts the coordinators in the state under test.
		arrange func(c *kfake.Cluster, h *loadHooks)
		want    string
	}{
		{name: "resigned: an empty list and no error", arrange: func(_ *kfake.Cluster, h *loadHooks) {
			h.set(resigned)
		}, want: "NOT_COORDINATOR"},
		{name: "loading", arrange: func(_ *kfake.Cluster, h *loadHooks) {
			h.hide.Store(true)
			h.set(loading)
		}, want: "COORDINATOR_LOAD_IN_PROGRESS"},
		{name: "a load begins during the listing", arrange: func(_ *kfake.Cluster, h *loadHooks) {
			h.hide.Store(true)
			h.during(func() { h.set(loading) })
		}, want: "COORDINATOR_LOAD_IN_PROGRESS"},
		{name: "the coordinators move during the listing", arrange: func(c *kfake.Cluster, h *loadHooks) {
			h.hide.Store(true)
			h.during(c.RehashCoordinators)
		}, want: "moved"},
		{name: "a leader epoch moves during the listing", tsPartitions: 4, arrange: func(_ *kfake.Cluster, h *loadHooks) {
			h.hide.Store(true)
			h.epoch.Store(5)
			h.during(func() { h.epoch.Store(7) })
		}, want: "leader epoch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, boot := kafkatest.NewCluster(t)
			kafkatest.OpenTxn(t, boot, "live-0-1", "orders", 10*time.Minute)
			a := newAdmin(t, boot)
			s := refresh(t, a, nil)
			p0 := partOf(t, s, "orders", 0)
			pr, ok := p0.Pinner()
			if !ok {
				t.Fatalf("orders-0 not pinned: %+v", p0)
			}
			markers := countRequests(c, kmsg.WriteTxnMarkers)
			h := hookLoad(c, tc.tsPartitions)
			h.epoch.Store(5)

			tc.arrange(c, h)
			rep, err := findHanging(t, a, kafkaadmin.HangingScope{Topic: "orders", Partition: -1, Broker: -1})
			if len(rep.Hanging) != 0 || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("find-hanging: hanging %+v, err %v; want none hanging and an error saying %q", rep.Hanging, err, tc.want)
			}
			if rep.OwnersUnknown == "" || !strings.Contains(err.Error(), rep.OwnersUnknown) {
				t.Fatalf("the report does not say why nothing was judged: %q (err %v)", rep.OwnersUnknown, err)
			}

			tc.arrange(c, h)
			r := execute(t, a, abortOn(p0, pr))
			if !r.Refused || r.Sent || !strings.HasPrefix(r.Err, "refused: ") || !strings.Contains(r.Err, tc.want) {
				t.Fatalf("abort of a live transaction's partition: %+v; want refused, saying %q", r, tc.want)
			}
			t.Logf("find-hanging: %v\nabort: %s", err, r.Err)
			if n := markers.Load(); n != 0 {
				t.Fatalf("%d WriteTxnMarkers sent for a live transaction", n)
			}

			// Settled, with the producer truly ownerless: both act.
			h.set(settled)
			h.during(func() {})
			h.hide.Store(true)
			rep, err = findHanging(t, a, kafkaadmin.HangingScope{Topic: "orders", Partition: -1, Broker: -1})
			if err != nil || len(rep.Hanging) != 1 || rep.Hanging[0].Reason != model.NoOwner || rep.OwnersUnknown != "" {
				t.Fatalf("find-hanging once settled: %+v, %v", rep, err)
			}
			if r := execute(t, a, abortOn(p0, pr)); !r.OK() || markers.Load() != 1 {
				t.Fatalf("abort once settled: %+v (%s), %d markers", r, r.Summary(), markers.Load())
			}
		})
	}
}

// TestLoadingCoordinatorInTheTUI: a snapshot whose listing a coordinator
// cannot vouch for marks a producer no listed transaction owns as possibly
// hanging (H?), never hanging (H!), and says why in its header note.
func TestLoadingCoordinatorInTheTUI(t *testing.T) {
	t.Parallel()
	c, boot := kafkatest.NewCluster(t, kfake.BrokerConfigs(map[string]string{"transaction.max.timeout.ms": "1000"}))
	// Open past the brokers' maximum: kfake checks the timeout only in
	// InitProducerId, so raise it for the producer and lower it again.
	setMaxTimeout(t, boot, "600000")
	kafkatest.OpenTxn(t, boot, "live-0-1", "orders", 10*time.Minute)
	setMaxTimeout(t, boot, "1000")
	time.Sleep(1100 * time.Millisecond) // idle longer than any transaction may live

	watch := []model.TopicPartition{{Topic: "orders", Partition: 0}}
	a, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: boot, Timeout: 5 * time.Second, Watch: watch})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)

	h := hookLoad(c, 0)
	h.set(resigned)
	s := refresh(t, a, nil)
	if s.BrokerMaxTimeoutMs != 1000 {
		t.Fatalf("max timeout %d ms, want 1000", s.BrokerMaxTimeoutMs)
	}
	if len(s.Txns) != 0 {
		t.Fatalf("the resigned coordinators listed %+v", s.Txns)
	}
	pins := model.Pins(s, nil, time.Now())
	if len(pins) != 1 || pins[0].Hanging || !pins[0].MaybeHanging {
		t.Fatalf("pins while the coordinators are resigned: %+v; want orders-0 possibly hanging, not hanging", pins)
	}
	if !strings.Contains(s.Hidden, "NOT_COORDINATOR") {
		t.Fatalf("header note %q does not say why owners are unknown", s.Hidden)
	}

	// Settled: the live transaction is listed and owns its partition.
	h.set(settled)
	s = refresh(t, a, s)
	pins = model.Pins(s, nil, time.Now())
	if len(pins) != 1 || pins[0].Hanging || pins[0].MaybeHanging || !pins[0].HasOwner || s.Hidden != "" {
		t.Fatalf("pins once settled: %+v, note %q", pins, s.Hidden)
	}
}

// setMaxTimeout sets every kfake broker's transaction.max.timeout.ms.
func setMaxTimeout(t *testing.T, boot []string, ms string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(boot...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType = kmsg.ConfigResourceTypeBroker
	cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	cfg.Name, cfg.Value = "transaction.max.timeout.ms", kmsg.StringPtr(ms)
	r.Configs = append(r.Configs, cfg)
	req.Resources = append(req.Resources, r)
	resp, err := cl.Request(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range resp.(*kmsg.IncrementalAlterConfigsResponse).Resources {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			t.Fatalf("alter transaction.max.timeout.ms: %v", err)
		}
	}
}

// TestRefreshProbesOnlyOwnerless: the check costs the TUI nothing while every producer with an
// open transaction on a polled partition has a listed owner; it runs when one has none.
func TestRefreshProbesOnlyOwnerless(t *testing.T) {
	t.Parallel()
	c, boot := kafkatest.NewCluster(t)
	kafkatest.OpenTxn(t, boot, "live-0-1", "orders", 10*time.Minute)
	var probes atomic.Int64
	c.ControlKey(int16(kmsg.DescribeTransactions), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		for _, id := range kreq.(*kmsg.DescribeTransactionsRequest).TransactionalIDs {
			if strings.HasPrefix(id, "txnscope-load-probe-") {
				probes.Add(1)
			}
		}
		return nil, nil, false
	})
	a := newAdmin(t, boot)
	s := refresh(t, a, nil)
	for range 3 {
		s = refresh(t, a, s)
	}
	if n := probes.Load(); n != 0 || len(s.Partitions) == 0 {
		t.Fatalf("%d probes in 4 refreshes of %d partitions whose producers all have owners, want none", n, len(s.Partitions))
	}

	// Its owner unlisted (as by a coordinator that has lost it) and never seen before, the
	// producer on a watched partition is ownerless.
	h := hookLoad(c, 0)
	h.set(resigned)
	fresh, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: boot, Timeout: 5 * time.Second,
		Watch: []model.TopicPartition{{Topic: "orders", Partition: 0}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fresh.Close)
	s = refresh(t, fresh, nil)
	if probes.Load() == 0 {
		t.Fatal("an ownerless producer, and no probe")
	}
	if !strings.HasPrefix(s.Hidden, "owners unknown: ") {
		t.Fatalf("note %q", s.Hidden)
	}
}

// TestOwnersUnknownWithoutTxnStateACL: a principal that may neither DESCRIBE __transaction_state
// nor read the brokers' configs cannot tell how many partitions the coordinators' log has, so it
// cannot check them all: the abort is refused, saying which ACL would do.
func TestOwnersUnknownWithoutTxnStateACL(t *testing.T) {
	t.Parallel()
	c, boot := aclCluster(t,
		aclUser("narrow", aclAllow(onTxnID, "*", kmsg.ACLOperationDescribe), aclAllow(onTopic, "orders", kmsg.ACLOperationRead),
			aclAllow(onCluster, "kafka-cluster", kmsg.ACLOperationClusterAction)))
	aclOpen(t, boot, "live-0-2", aclTP("orders", 0))
	markers := countRequests(c, kmsg.WriteTxnMarkers)
	narrow := aclAs(t, boot, "narrow")
	s := refresh(t, narrow, nil)
	p0 := partOf(t, s, "orders", 0)
	pr, _ := p0.Pinner()
	hookLoad(c, 0).hide.Store(true) // the owner unlisted: only the check stands in the way
	r := execute(t, narrow, abortOn(p0, pr))
	const want = "refused: no permission to tell how many partitions __transaction_state has, so whether every coordinator has loaded cannot be checked"
	if !r.Refused || r.Sent || !strings.HasPrefix(r.Err, want) || !strings.Contains(r.Err, "DESCRIBE on the topic __transaction_state") || markers.Load() != 0 {
		t.Fatalf("%+v, want refused saying %q", r, want)
	}
	t.Log(r.Err)
}
