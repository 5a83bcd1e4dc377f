package integration

import (
	"reflect"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/model"
)

// Lines as Kafka 4.4's kafka-dump-log.sh --transaction-log-decoder --print-data-log writes them
// (the tombstone and the unknown record type as its DumpLogSegments prints them).
const dumpSample = `Dumping /data/__transaction_state-15/00000000000000000000.log
Log starting offset: 0
baseOffset: 0 lastOffset: 0 count: 1 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 0 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1796079549284 size: 124 magic: 2 compresscodec: none crc: 3208305745 isvalid: true
| offset: 0 CreateTime: 1796079549284 keySize: 11 valueSize: 45 sequence: -1 headerKeys: [] key: {"type":"0","data":{"transactionalId":"probe-0"}} payload: {"version":"1","data":{"producerId":0,"previousProducerId":0,"producerEpoch":0,"transactionTimeoutMs":900000,"transactionStatus":"Empty","transactionPartitions":null,"transactionLastUpdateTimestampMs":1796079549282,"transactionStartTimestampMs":-1}}
| offset: 1 CreateTime: 1796079549319 keySize: 11 valueSize: 61 sequence: -1 headerKeys: [] key: {"type":"0","data":{"transactionalId":"probe-0"}} payload: {"version":"1","data":{"producerId":0,"previousProducerId":0,"nextProducerId":7,"producerEpoch":0,"nextProducerEpoch":1,"transactionTimeoutMs":900000,"transactionStatus":"Ongoing","transactionPartitions":[{"topic":"t2","partitionIds":[3,1]},{"topic":"t1","partitionIds":[0]}],"transactionLastUpdateTimestampMs":1796079549318,"transactionStartTimestampMs":1796079549318,"clientTransactionVersion":2}}
Dumping /data/__transaction_state-3/00000000000000000000.log
Log starting offset: 0
| offset: 7 CreateTime: 1 keySize: 30 valueSize: 40 sequence: -1 headerKeys: [] key: {"type":"0","data":{"transactionalId":"x\" payload: <DELETE>"}} payload: {"version":"0","data":{"producerId":5,"producerEpoch":2,"transactionTimeoutMs":60000,"transactionStatus":"CompleteAbort","transactionPartitions":[],"transactionLastUpdateTimestampMs":9,"transactionStartTimestampMs":8}}
| offset: 8 CreateTime: 1 keySize: 11 valueSize: -1 sequence: -1 headerKeys: [] key: {"type":"0","data":{"transactionalId":"gone"}} payload: <DELETE>
| offset: 9 CreateTime: 1 keySize: 4 valueSize: 3 sequence: -1 headerKeys: [] key: Unknown record type 5 at offset 9, skipping.
`

// parseDumpLog reads every field of Kafka's own decoding, with the partition from the segment's
// directory, the tags' defaults when the dump leaves them out, tombstones, and an id that
// imitates the dump's own separators.
func TestParseDumpLog(t *testing.T) {
	got, err := parseDumpLog(strings.NewReader(dumpSample))
	if err != nil {
		t.Fatal(err)
	}
	want := []model.TxnLogRecord{
		{ID: "probe-0", ProducerID: 0, ProducerEpoch: 0, TimeoutMs: 900000, State: model.Empty, StartMs: -1,
			LastUpdateMs: 1796079549282, PrevProducerID: 0, NextProducerID: -1, NextProducerEpoch: -1, Partition: 15, Offset: 0},
		{ID: "probe-0", ProducerID: 0, ProducerEpoch: 0, TimeoutMs: 900000, State: model.Ongoing, StartMs: 1796079549318,
			LastUpdateMs: 1796079549318, PrevProducerID: 0, NextProducerID: 7, NextProducerEpoch: 1, ClientTxnVersion: 2,
			Partitions: []model.TopicPartition{{Topic: "t1", Partition: 0}, {Topic: "t2", Partition: 1}, {Topic: "t2", Partition: 3}},
			Partition:  15, Offset: 1},
		{ID: `x" payload: <DELETE>`, ProducerID: 5, ProducerEpoch: 2, TimeoutMs: 60000, State: model.CompleteAbort, StartMs: 8,
			LastUpdateMs: 9, PrevProducerID: -1, NextProducerID: -1, NextProducerEpoch: -1, Partition: 3, Offset: 7},
		{ID: "gone", Tombstone: true, Partition: 3, Offset: 8},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	for _, bad := range []string{
		"| offset: x key: {}",
		`| offset: 1 key: {"type":"0","data":{"transactionalId":"a"}}`,
		`| offset: 1 key: {"type":"0","data":{"transactionalId":"a"}} payload: {"version":`,
		"Dumping /data/__consumer_offsets-x/0.log",
	} {
		if _, err := parseDumpLog(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
