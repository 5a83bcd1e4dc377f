package kafkatest

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TxnLog writes records into a topic named __transaction_state on kfake,
// which keeps no coordinators' log of its own: as Kafka's coordinators write
// them, or any bytes. The topic has Partitions partitions.
type TxnLog struct {
	t  testing.TB
	cl *kgo.Client
}

// NewTxnLog returns a writer, closed when the test ends.
func NewTxnLog(t testing.TB, bootstrap []string) *TxnLog {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap...), kgo.DefaultProduceTopic("__transaction_state"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &TxnLog{t: t, cl: cl}
}

// Raw writes key and value into partition and returns the record's offset.
func (l *TxnLog) Raw(partition int32, key, value []byte) int64 {
	l.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := l.cl.ProduceSync(ctx, &kgo.Record{Partition: partition, Key: key, Value: value}).First()
	if err != nil {
		l.t.Fatalf("writing __transaction_state: %v", err)
	}
	return r.Offset
}

// State writes id's state (kmsg.TransactionState: 0 Empty, 1 Ongoing, 4
// CompleteCommit, ...) as a coordinator does, at value version 1, dated
// now; producer id 7, epoch 1, an Ongoing one holds partition 0 of orders.
func (l *TxnLog) State(partition int32, id string, state int8) int64 {
	l.t.Helper()
	now := time.Now().UnixMilli()
	v := kmsg.NewTxnMetadataValue()
	v.Version, v.ProducerID, v.ProducerEpoch, v.TimeoutMillis = 1, 7, 1, 60000
	v.State, v.StartTimestamp, v.LastUpdateTimestamp = kmsg.TransactionState(state), now-1000, now
	if state == 1 {
		v.Topics = []kmsg.TxnMetadataValueTopic{{Topic: "orders", Partitions: []int32{0}}}
	}
	return l.Raw(partition, TxnLogKey(0, id), v.AppendTo(nil))
}

// TxnLogKey is the key of id's state at a key version.
func TxnLogKey(version int16, id string) []byte {
	k := kmsg.NewTxnMetadataKey()
	k.Version, k.TransactionalID = version, id
	return k.AppendTo(nil)
}

// NewerTxnLogValue is id's Ongoing state as a value version newer than any
// Kafka writes today: version 1's bytes under another version number.
func NewerTxnLogValue(version int16) []byte {
	v := kmsg.NewTxnMetadataValue()
	v.Version, v.ProducerID, v.ProducerEpoch, v.TimeoutMillis, v.State = 1, 7, 1, 60000, 1
	b := v.AppendTo(nil)
	b[0], b[1] = byte(version>>8), byte(version)
	return b
}
