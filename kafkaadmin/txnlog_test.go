package kafkaadmin

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/model"
)

func txnLogKey(version int16, id string) []byte {
	k := kmsg.TxnMetadataKey{Version: version, TransactionalID: id}
	return k.AppendTo(nil)
}

// decodeTxnLog reads what a coordinator writes: every state, the
// partitions sorted, the producer ids around an exhausted epoch, tombstones;
// a key of another kind is skipped and broken bytes are an error.
func TestDecodeTxnLog(t *testing.T) {
	for _, state := range []kmsg.TransactionState{0, 1, 2, 3, 4, 5, 6, 7} {
		v := kmsg.NewTxnMetadataValue()
		v.Version = 1
		v.ProducerID, v.ProducerEpoch, v.TimeoutMillis, v.State = 42, 3, 60000, state
		v.StartTimestamp, v.LastUpdateTimestamp = 1000, 2000
		v.PreviousProducerID, v.NextProducerID, v.ClientTransactionVersion = 41, -1, 2
		v.Topics = []kmsg.TxnMetadataValueTopic{{Topic: "b", Partitions: []int32{1}}, {Topic: "a", Partitions: []int32{2, 0}}}
		rec, ok, err := decodeTxnLog(txnLogKey(0, "orders-0-7"), v.AppendTo(nil))
		if err != nil || !ok {
			t.Fatalf("%s: ok %v, err %v", state, ok, err)
		}
		want := []model.TopicPartition{{Topic: "a", Partition: 0}, {Topic: "a", Partition: 2}, {Topic: "b", Partition: 1}}
		if rec.ID != "orders-0-7" || rec.State != model.State(state.String()) || rec.ProducerID != 42 || rec.ProducerEpoch != 3 ||
			rec.TimeoutMs != 60000 || rec.StartMs != 1000 || rec.LastUpdateMs != 2000 || rec.PrevProducerID != 41 ||
			rec.NextProducerID != -1 || rec.ClientTxnVersion != 2 || !slices.Equal(rec.Partitions, want) || rec.Tombstone {
			t.Fatalf("%s: %+v", state, rec)
		}
	}
	if rec, ok, err := decodeTxnLog(txnLogKey(0, "gone"), nil); err != nil || !ok || !rec.Tombstone || rec.ID != "gone" {
		t.Fatalf("tombstone: %+v %v %v", rec, ok, err)
	}
	if _, ok, err := decodeTxnLog(txnLogKey(1, "x"), []byte{0, 1}); ok || err != nil {
		t.Fatalf("another key version: ok %v err %v", ok, err)
	}
	for _, bad := range [][]byte{nil, {0}, {0, 0, 9}} {
		if _, ok, err := decodeTxnLog(bad, []byte{0, 1}); ok || err == nil {
			t.Fatalf("key %v: ok %v err %v", bad, ok, err)
		}
	}
	if _, ok, err := decodeTxnLog(txnLogKey(0, "x"), []byte{0, 1, 2}); ok || err == nil {
		t.Fatalf("a cut value: ok %v err %v", ok, err)
	}
}
