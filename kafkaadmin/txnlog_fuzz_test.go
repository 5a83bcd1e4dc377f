package kafkaadmin

import (
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/model"
)

// Arbitrary bytes in the coordinators' log never panic the decoder, and what
// it accepts is a known state that survives being written back: nothing is
// half read. Seeded with a record of every version; run it with
// `go test -run '^$' -fuzz FuzzDecodeTxnLog -fuzztime 60s ./kafkaadmin/`.
func FuzzDecodeTxnLog(f *testing.F) {
	for _, c := range decodeCases() {
		f.Add(c.key, c.value)
	}
	f.Fuzz(func(t *testing.T, key, value []byte) {
		rec, err := decodeTxnLog(key, value)
		if err != nil || rec.Tombstone {
			return
		}
		if !knownState(rec.State) {
			t.Fatalf("accepted state %q", rec.State)
		}
		again, err := decodeTxnLog(txnLogKey(0, rec.ID), encodeRecord(rec))
		if err != nil || !reflect.DeepEqual(again, rec) {
			t.Fatalf("written back and read again: %+v, %v\nwas %+v", again, err, rec)
		}
	})
}

func knownState(s model.State) bool {
	for i := range kmsg.TransactionState(8) {
		if s.String() == i.String() {
			return true
		}
	}
	return false
}

// encodeRecord writes rec back as a v1 value, one topic per partition.
func encodeRecord(rec model.TxnLogRecord) []byte {
	v := kmsg.NewTxnMetadataValue()
	v.Version = 1
	v.ProducerID, v.ProducerEpoch, v.TimeoutMillis = rec.ProducerID, rec.ProducerEpoch, rec.TimeoutMs
	for i := range kmsg.TransactionState(8) {
		if i.String() == rec.State.String() {
			v.State = i
		}
	}
	v.StartTimestamp, v.LastUpdateTimestamp = rec.StartMs, rec.LastUpdateMs
	v.PreviousProducerID, v.NextProducerID, v.NextProducerEpoch = rec.PrevProducerID, rec.NextProducerID, rec.NextProducerEpoch
	v.ClientTransactionVersion = rec.ClientTxnVersion
	for _, p := range rec.Partitions {
		v.Topics = append(v.Topics, kmsg.TxnMetadataValueTopic{Topic: p.Topic, Partitions: []int32{p.Partition}})
	}
	return v.AppendTo(nil)
}
