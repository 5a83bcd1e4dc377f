package integration

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/txnscope/txnscope/model"
)

// newAdmin returns a kadm client for the broker at bootstrap, closed at the end of the test.
func newAdmin(t *testing.T, bootstrap string) *kadm.Client {
	t.Helper()
	requireLoopback(t, bootstrap)
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		t.Fatalf("kgo.NewClient(%s): %v", bootstrap, err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// requireLoopback keeps these tests on this machine.
func requireLoopback(t *testing.T, bootstrap string) {
	t.Helper()
	host, _, err := net.SplitHostPort(bootstrap)
	if err != nil {
		t.Fatalf("bad bootstrap address %q: %v", bootstrap, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		t.Fatalf("bootstrap %q is not a loopback address; these tests only talk to 127.0.0.1", bootstrap)
	}
}

// uniqueName gives every run its own topic and transactional id, so reruns against the same broker
// never see an earlier run's state.
func uniqueName(t *testing.T, kind string) string {
	return fmt.Sprintf("txnscope-it-%s-%s-%d", kind, t.Name(), time.Now().UnixNano())
}

// waitTxnState polls ListTransactions and DescribeTransactions until txnID is in state want in both,
// and returns the described transaction.
func waitTxnState(ctx context.Context, t *testing.T, adm *kadm.Client, txnID, want string) kadm.DescribedTransaction {
	t.Helper()
	var lastList, lastDesc string
	for {
		listed, err := adm.ListTransactions(ctx, nil, nil)
		if err != nil {
			lastList = "error: " + err.Error()
		} else if l, ok := listed[txnID]; ok {
			lastList = l.State
		} else {
			lastList = "(not listed)"
		}
		described, err := adm.DescribeTransactions(ctx, txnID)
		var d kadm.DescribedTransaction
		if err != nil {
			lastDesc = "error: " + err.Error()
		} else if d, err = described.On(txnID, nil); err != nil {
			lastDesc = "error: " + err.Error()
		} else if d.Err != nil {
			lastDesc = "error: " + d.Err.Error()
		} else {
			lastDesc = d.State
		}
		if lastList == want && lastDesc == want {
			return d
		}
		select {
		case <-ctx.Done():
			t.Fatalf("transactional id %q: want state %s; last ListTransactions: %s, DescribeTransactions: %s",
				txnID, want, lastList, lastDesc)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// TestRealKafkaTransactionLifecycle opens a real transaction with a transactional kgo producer and
// checks what the admin APIs report: Ongoing with the partition while open, CompleteCommit after commit.
func TestRealKafkaTransactionLifecycle(t *testing.T) {
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	adm := newAdmin(t, bootstrap)

	topic := createTestTopic(ctx, t, adm)

	txnID := uniqueName(t, "txn")
	const txnTimeout = 60 * time.Second
	producer, err := kgo.NewClient(
		kgo.SeedBrokers(bootstrap),
		kgo.TransactionalID(txnID),
		kgo.TransactionTimeout(txnTimeout),
		kgo.DefaultProduceTopic(topic),
	)
	if err != nil {
		t.Fatalf("transactional kgo.NewClient: %v", err)
	}
	defer producer.Close()

	if err := producer.BeginTransaction(); err != nil {
		t.Fatalf("BeginTransaction: %v", err)
	}
	if err := producer.ProduceSync(ctx, kgo.StringRecord("hello from txnscope")).FirstErr(); err != nil {
		t.Fatalf("ProduceSync in transaction: %v", err)
	}

	open := waitTxnState(ctx, t, adm, txnID, "Ongoing")
	if open.ProducerID < 0 {
		t.Errorf("Ongoing transaction has producer id %d", open.ProducerID)
	}
	if got := time.Duration(open.TimeoutMillis) * time.Millisecond; got != txnTimeout {
		t.Errorf("transaction timeout = %v, want %v", got, txnTimeout)
	}
	if open.StartTimestamp <= 0 {
		t.Errorf("Ongoing transaction has start timestamp %d, want > 0", open.StartTimestamp)
	}
	if ps := open.Topics[topic]; len(ps) != 1 {
		t.Errorf("Ongoing transaction partitions = %v, want %s partition 0", open.Topics, topic)
	} else if _, ok := ps[0]; !ok {
		t.Errorf("Ongoing transaction partitions = %v, want %s partition 0", open.Topics, topic)
	}
	// The LSO is pinned below the high watermark while the transaction is open.
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatalf("ListEndOffsets: %v", err)
	}
	stable, err := adm.ListCommittedOffsets(ctx, topic)
	if err != nil {
		t.Fatalf("ListCommittedOffsets: %v", err)
	}
	hwm, _ := ends.Lookup(topic, 0)
	lso, _ := stable.Lookup(topic, 0)
	if !(lso.Offset < hwm.Offset) {
		t.Errorf("open transaction: LSO %d, HWM %d; want LSO < HWM", lso.Offset, hwm.Offset)
	}

	if err := producer.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("EndTransaction(commit): %v", err)
	}
	done := waitTxnState(ctx, t, adm, txnID, "CompleteCommit")
	if done.ProducerID != open.ProducerID {
		t.Errorf("producer id changed across commit: %d -> %d", open.ProducerID, done.ProducerID)
	}
	if len(done.Topics) != 0 {
		t.Errorf("CompleteCommit transaction still lists partitions %v", done.Topics)
	}
}

// TestRealKafkaNoVerifyBroker checks that the second broker (kafka-up --with-noverify) answers and
// really runs with transaction.partition.verification.enable=false.
func TestRealKafkaNoVerifyBroker(t *testing.T) {
	bootstrap := NoVerifyBootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := newAdmin(t, bootstrap)

	meta, err := adm.BrokerMetadata(ctx)
	if err != nil {
		t.Fatalf("BrokerMetadata(%s): %v", bootstrap, err)
	}
	if len(meta.Brokers) != 1 {
		t.Fatalf("no-verify cluster has %d brokers, want 1: %v", len(meta.Brokers), meta.Brokers)
	}
	if main := Bootstrap(t); main == bootstrap {
		t.Fatalf("no-verify broker %s is the main broker", bootstrap)
	}

	configs, err := adm.DescribeBrokerConfigs(ctx, meta.Brokers[0].NodeID)
	if err != nil {
		t.Fatalf("DescribeBrokerConfigs: %v", err)
	}
	const key = "transaction.partition.verification.enable"
	found := false
	for _, rc := range configs {
		if rc.Err != nil {
			t.Fatalf("DescribeBrokerConfigs %s: %v", rc.Name, rc.Err)
		}
		for _, c := range rc.Configs {
			if c.Key == key {
				found = true
				if c.MaybeValue() != "false" {
					t.Errorf("%s = %q on the no-verify broker, want false", key, c.MaybeValue())
				}
			}
		}
	}
	if !found {
		t.Errorf("%s not reported by the no-verify broker", key)
	}

	// And it serves transactions APIs.
	if _, err := adm.ListTransactions(ctx, nil, nil); err != nil {
		t.Fatalf("ListTransactions on the no-verify broker: %v", err)
	}
}

// TestRealKafkaMainBrokerVerifies checks the main broker keeps Kafka's default (verification on), so
// tests relying on either behaviour pick the right broker.
func TestRealKafkaMainBrokerVerifies(t *testing.T) {
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := newAdmin(t, bootstrap)
	meta, err := adm.BrokerMetadata(ctx)
	if err != nil {
		t.Fatalf("BrokerMetadata(%s): %v", bootstrap, err)
	}
	configs, err := adm.DescribeBrokerConfigs(ctx, meta.Brokers[0].NodeID)
	if err != nil {
		t.Fatalf("DescribeBrokerConfigs: %v", err)
	}
	rc, err := configs.On(fmt.Sprint(meta.Brokers[0].NodeID), nil)
	if err != nil {
		t.Fatalf("broker config: %v", err)
	}
	for _, c := range rc.Configs {
		if c.Key == "transaction.partition.verification.enable" && c.MaybeValue() != "true" {
			t.Errorf("main broker has %s=%q, want Kafka's default true", c.Key, c.MaybeValue())
		}
	}
}

// produceUnaddedTxnBatch writes one transactional record batch to topic partition 0 the way a buggy
// or pre-KIP-890 client could: InitProducerId for txnID, then Produce v11 (no transaction version 2)
// WITHOUT AddPartitionsToTxn, so the coordinator never learns about the partition. It returns the
// producer id/epoch and the produce error (nil when the broker accepted the batch).
func produceUnaddedTxnBatch(ctx context.Context, t *testing.T, bootstrap, topic, txnID string) (int64, int16, error) {
	t.Helper()
	return produceUnaddedTxnBatchTo(ctx, t, bootstrap, model.TopicPartition{Topic: topic}, txnID)
}

// produceUnaddedTxnBatchTo is produceUnaddedTxnBatch on any partition.
func produceUnaddedTxnBatchTo(ctx context.Context, t *testing.T, bootstrap string, tp model.TopicPartition, txnID string) (int64, int16, error) {
	t.Helper()
	// Capped at 3.9 so Produce is v11: v12+ (Kafka 4.0, KIP-890 part 2) adds the partition implicitly.
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.MaxVersions(kversion.V3_9_0()))
	if err != nil {
		t.Fatalf("kgo.NewClient: %v", err)
	}
	defer cl.Close()

	init := kmsg.NewPtrInitProducerIDRequest()
	init.TransactionalID = &txnID
	init.TransactionTimeoutMillis = 60000
	var pid int64
	var epoch int16
	for {
		resp, err := init.RequestWith(ctx, cl)
		if err != nil {
			t.Fatalf("InitProducerId: %v", err)
		}
		switch err := kerr.ErrorForCode(resp.ErrorCode); err {
		case nil:
			pid, epoch = resp.ProducerID, resp.ProducerEpoch
		case kerr.CoordinatorLoadInProgress, kerr.CoordinatorNotAvailable, kerr.NotCoordinator, kerr.ConcurrentTransactions:
			select {
			case <-ctx.Done():
				t.Fatalf("InitProducerId: %v (last %v)", ctx.Err(), err)
			case <-time.After(200 * time.Millisecond):
			}
			continue
		default:
			t.Fatalf("InitProducerId: %v", err)
		}
		break
	}

	rec := kmsg.Record{Value: []byte("hanging")}
	rec.Length = int32(len(rec.AppendTo(nil)) - 1) // the body after the 1-byte varint of Length 0
	now := time.Now().UnixMilli()
	batch := kmsg.RecordBatch{
		PartitionLeaderEpoch: -1,
		Magic:                2,
		Attributes:           0x10, // transactional
		FirstTimestamp:       now,
		MaxTimestamp:         now,
		ProducerID:           pid,
		ProducerEpoch:        epoch,
		FirstSequence:        0,
		NumRecords:           1,
		Records:              rec.AppendTo(nil),
	}
	raw := batch.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))                                          // batch length
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli))) // CRC-32C

	produce := kmsg.NewPtrProduceRequest()
	produce.TransactionID = &txnID
	produce.Acks = -1
	produce.TimeoutMillis = 15000
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = tp.Topic
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Partition = tp.Partition
	pp.Records = raw
	pt.Partitions = append(pt.Partitions, pp)
	produce.Topics = append(produce.Topics, pt)
	for {
		resp, err := produce.RequestWith(ctx, cl)
		if err != nil {
			t.Fatalf("Produce: %v", err)
		}
		if v := produce.GetVersion(); v != 11 {
			t.Fatalf("Produce went out as v%d, want v11", v)
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			t.Fatalf("unexpected produce response %+v", resp)
		}
		err = kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode)
		// A topic just created may not be hosted by its leader yet: nothing
		// was written, so the same batch goes again.
		if !errors.Is(err, kerr.UnknownTopicOrPartition) && !errors.Is(err, kerr.NotLeaderForPartition) {
			return pid, epoch, err
		}
		select {
		case <-ctx.Done():
			return pid, epoch, fmt.Errorf("%w (until %v)", err, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func createTestTopic(ctx context.Context, t *testing.T, adm *kadm.Client) string {
	t.Helper()
	topic := uniqueName(t, "topic")
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
		t.Fatalf("CreateTopic(%s): %v", topic, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		_, _ = adm.DeleteTopic(ctx, topic)
	})
	return topic
}

// TestRealKafkaNoVerifyAllowsHangingTransaction shows that the no-verify broker can hold a real
// KIP-664 hanging transaction: the partition's LSO is pinned by a producer whose transactional id's
// coordinator knows nothing about the partition (state Empty, no partitions).
func TestRealKafkaNoVerifyAllowsHangingTransaction(t *testing.T) {
	bootstrap := NoVerifyBootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	adm := newAdmin(t, bootstrap)
	topic := createTestTopic(ctx, t, adm)
	txnID := uniqueName(t, "txn")

	pid, epoch, err := produceUnaddedTxnBatch(ctx, t, bootstrap, topic, txnID)
	if err != nil {
		t.Fatalf("no-verify broker refused the unadded transactional batch: %v", err)
	}

	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatalf("ListEndOffsets: %v", err)
	}
	stable, err := adm.ListCommittedOffsets(ctx, topic)
	if err != nil {
		t.Fatalf("ListCommittedOffsets: %v", err)
	}
	hwm, _ := ends.Lookup(topic, 0)
	lso, _ := stable.Lookup(topic, 0)
	if hwm.Offset != 1 || lso.Offset != 0 {
		t.Errorf("HWM %d, LSO %d; want 1 and 0 (LSO pinned by the hanging batch)", hwm.Offset, lso.Offset)
	}

	described, err := adm.DescribeTransactions(ctx, txnID)
	if err != nil {
		t.Fatalf("DescribeTransactions: %v", err)
	}
	d, err := described.On(txnID, nil)
	if err != nil || d.Err != nil {
		t.Fatalf("DescribeTransactions(%s): %v / %v", txnID, err, d.Err)
	}
	if d.State != "Empty" || len(d.Topics) != 0 {
		t.Errorf("coordinator view: state %s, partitions %v; want Empty with none", d.State, d.Topics)
	}

	producers, err := adm.DescribeProducers(ctx, kadm.TopicsSet{topic: {0: {}}})
	if err != nil {
		t.Fatalf("DescribeProducers: %v", err)
	}
	p, ok := producers[topic].Partitions[0].ActiveProducers[pid]
	if !ok {
		t.Fatalf("DescribeProducers: producer %d not active on %s/0: %+v", pid, topic, producers[topic].Partitions[0])
	}
	if p.ProducerEpoch != epoch || p.CurrentTxnStartOffset != 0 {
		t.Errorf("active producer %+v; want epoch %d and current txn start offset 0", p, epoch)
	}
}

// TestRealKafkaMainBrokerRejectsUnaddedPartition: with verification on (Kafka's default) the same
// write is refused, so no hanging transaction can be made on the main broker.
func TestRealKafkaMainBrokerRejectsUnaddedPartition(t *testing.T) {
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	adm := newAdmin(t, bootstrap)
	topic := createTestTopic(ctx, t, adm)
	if _, _, err := produceUnaddedTxnBatch(ctx, t, bootstrap, topic, uniqueName(t, "txn")); err == nil {
		t.Fatal("main broker accepted a transactional batch for a partition the coordinator has not added")
	} else {
		t.Logf("refused as expected: %v", err)
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatalf("ListEndOffsets: %v", err)
	}
	if hwm, _ := ends.Lookup(topic, 0); hwm.Offset != 0 {
		t.Errorf("HWM %d after a refused write, want 0", hwm.Offset)
	}
}
