package kafkaadmin_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/model"
)

// requests counts the requests of some kinds the cluster receives.
type requests map[kmsg.Key]*atomic.Int64

func countKinds(c *kfake.Cluster, keys ...kmsg.Key) requests {
	r := requests{}
	for _, k := range keys {
		n := &atomic.Int64{}
		r[k] = n
		c.ControlKey(int16(k), func(kmsg.Request) (kmsg.Response, error, bool) {
			n.Add(1)
			return nil, nil, false // counted, then handled as usual
		})
	}
	return r
}

func (r requests) take(k kmsg.Key) int64 { return r[k].Swap(0) }

func admClient(t testing.TB, boot []string) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(boot...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

func createTopic(t testing.TB, adm *kadm.Client, topic string, partitions int32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := adm.CreateTopic(ctx, partitions, 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
}

func commitGroup(t testing.TB, adm *kadm.Client, group, topic string, partition int32, offset int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var os kadm.Offsets
	os.Add(kadm.Offset{Topic: topic, Partition: partition, At: offset, LeaderEpoch: -1})
	if err := adm.CommitAllOffsets(ctx, group, os); err != nil {
		t.Fatalf("commit %s: %v", group, err)
	}
}

// TestRefreshReadsEveryPartitionCheaply: each refresh reads the offsets of
// every partition with one ListOffsets per leader and isolation level, keeps
// only the pinned and watched partitions, and reads consumer group offsets
// (one ListGroups per broker, one OffsetFetch per coordinator) only while
// something is pinned: then a group at the LSO is stuck, one far behind is not.
func TestRefreshReadsEveryPartitionCheaply(t *testing.T) {
	t.Parallel()
	c, boot := kafkatest.NewCluster(t)
	adm := admClient(t, boot)
	createTopic(t, adm, "wide", 30)
	done := kafkatest.Producer(t, boot, "done-0-1", time.Minute)
	kafkatest.Begin(t, done)
	for p := range int32(30) {
		kafkatest.Produce(t, done, "wide", p, 2)
	}
	kafkatest.Produce(t, done, "orders", 0, 20)
	kafkatest.End(t, done, true)
	commitGroup(t, adm, "billing", "orders", 0, 21) // after 20 records and the commit marker
	commitGroup(t, adm, "lagging", "orders", 0, 4)
	commitGroup(t, adm, "elsewhere", "wide", 3, 2)

	reqs := countKinds(c, kmsg.ListOffsets, kmsg.ListGroups, kmsg.OffsetFetch, kmsg.DescribeProducers)
	a := newAdmin(t, boot)
	s1 := refresh(t, a, nil)
	if s1.Scanned < 33 {
		t.Errorf("scanned %d partitions, want every one (≥ 33)", s1.Scanned)
	}
	if len(s1.Partitions) != 0 || s1.GroupCommits != nil {
		t.Errorf("nothing is pinned, yet partitions %v and group commits %v", s1.Partitions, s1.GroupCommits)
	}
	if n := reqs.take(kmsg.ListOffsets); n < 2 || n > 6 {
		t.Errorf("%d ListOffsets requests for %d partitions on 3 brokers, want one per leader and isolation (≤ 6)", n, s1.Scanned)
	}
	if n := reqs.take(kmsg.OffsetFetch); n != 0 {
		t.Errorf("%d OffsetFetch requests with nothing pinned, want none", n)
	}
	reqs.take(kmsg.ListGroups)
	reqs.take(kmsg.DescribeProducers)

	open := kafkatest.OpenTxn(t, boot, "open-0-1", "orders", time.Minute)
	defer kafkatest.End(t, open, false)
	s2 := refresh(t, a, s1)
	if n := reqs.take(kmsg.ListOffsets); n < 2 || n > 6 {
		t.Errorf("%d ListOffsets requests, want ≤ 6", n)
	}
	if n := reqs.take(kmsg.ListGroups); n != 3 {
		t.Errorf("%d ListGroups requests, want one per broker (3)", n)
	}
	if n := reqs.take(kmsg.OffsetFetch); n < 1 || n > 3 {
		t.Errorf("%d OffsetFetch requests, want one per group coordinator (≤ 3)", n)
	}
	if n := reqs.take(kmsg.DescribeProducers); n != 1 {
		t.Errorf("%d DescribeProducers requests, want one (the pinned partition's leader)", n)
	}
	part := partOf(t, s2, "orders", 0)
	if part.LastStableOffset != 21 || part.HighWatermark != 21+kafkatest.Records {
		t.Fatalf("orders-0 %+v, want LSO 21 HWM %d", part, 21+kafkatest.Records)
	}
	if len(s2.Partitions) != 1 {
		t.Errorf("partitions %v, want only the pinned one", s2.Partitions)
	}
	want := []model.GroupCommit{
		{Group: "billing", State: "Empty", Type: model.GroupClassic, TopicPartition: part.TopicPartition, Offset: 21},
		{Group: "lagging", State: "Empty", Type: model.GroupClassic, TopicPartition: part.TopicPartition, Offset: 4},
	}
	if fmt.Sprint(s2.GroupCommits) != fmt.Sprint(want) || s2.GroupsErr != "" {
		t.Fatalf("group commits %+v (%q), want %+v", s2.GroupCommits, s2.GroupsErr, want)
	}
	pins := model.Pins(s2, nil, s2.TakenAt)
	if len(pins) != 1 || len(pins[0].Stuck) != 1 || pins[0].Stuck[0].Group != "billing" ||
		pins[0].Stuck[0].LagHWM != kafkatest.Records || !pins[0].Blocking || pins[0].Owner.ID != "open-0-1" {
		t.Fatalf("pins %+v, want orders-0 blocked by open-0-1 with billing stuck", pins)
	}
}

// TestRefreshFindsAPinNoTransactionLists: a partition pinned by a producer
// whose transaction (as the coordinator describes it) does not list the
// partition is found by the scan alone, with its producers.
func TestRefreshFindsAPinNoTransactionLists(t *testing.T) {
	t.Parallel()
	c, boot := kafkatest.NewCluster(t)
	open := kafkatest.OpenTxn(t, boot, "forgetful-0-1", "orders", time.Minute)
	defer kafkatest.End(t, open, false)

	// The coordinator "forgets" the partition, as it does for a hanging
	// transaction on a real broker.
	c.ControlKey(int16(kmsg.DescribeTransactions), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		resp := kmsg.NewPtrDescribeTransactionsResponse()
		for _, id := range req.(*kmsg.DescribeTransactionsRequest).TransactionalIDs {
			st := kmsg.NewDescribeTransactionsResponseTransactionState()
			st.TransactionalID, st.State, st.ProducerID, st.TimeoutMillis = id, "Ongoing", 999, 60000
			st.StartTimestamp = time.Now().UnixMilli()
			resp.TransactionStates = append(resp.TransactionStates, st)
		}
		return resp, nil, true
	})
	a := newAdmin(t, boot)
	s := refresh(t, a, nil)
	part := partOf(t, s, "orders", 0)
	pin, ok := part.Pinner()
	if !ok || !part.Pinned() {
		t.Fatalf("orders-0 %+v: want pinned, with its pinning producer", part)
	}
	pins := model.Pins(s, nil, s.TakenAt)
	if len(pins) != 1 || pins[0].Blocking || pins[0].Pinner.ProducerID != pin.ProducerID {
		t.Fatalf("pins %+v, want orders-0 pinned by producer %d with no transaction holding it", pins, pin.ProducerID)
	}
	if o := model.Orphans(part, model.ByProducerID(s)); len(o) != 1 {
		t.Errorf("orphans %+v, want the pinning producer", o)
	}
}
