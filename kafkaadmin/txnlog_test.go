package kafkaadmin

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/model"
)

func txnLogKey(version int16, id string) []byte {
	k := kmsg.TxnMetadataKey{Version: version, TransactionalID: id}
	return k.AppendTo(nil)
}

// txnLogValue is what a coordinator writes for one state, at one value
// version; tagged is false for a producer id that never moved on (v1 then
// encodes no tags, as Kafka does).
func txnLogValue(version int16, state kmsg.TransactionState, tagged bool) kmsg.TxnMetadataValue {
	v := kmsg.NewTxnMetadataValue()
	v.Version = version
	v.ProducerID, v.ProducerEpoch, v.TimeoutMillis, v.State = 42, 3, 60000, state
	v.StartTimestamp, v.LastUpdateTimestamp = 1000, 2000
	v.Topics = []kmsg.TxnMetadataValueTopic{{Topic: "b", Partitions: []int32{1}}, {Topic: "a", Partitions: []int32{2, 0}}}
	if tagged {
		v.PreviousProducerID, v.NextProducerID, v.NextProducerEpoch, v.ClientTransactionVersion = 41, 43, 0, 2
	}
	return v
}

func encode(v kmsg.TxnMetadataValue) []byte { return v.AppendTo(nil) }

// txnLogRecord is what decodeTxnLog must make of txnLogValue's record:
// the partitions sorted, the tags' defaults when they are absent.
func txnLogRecord(id string, state model.State, tagged bool) model.TxnLogRecord {
	r := model.TxnLogRecord{
		ID: id, ProducerID: 42, ProducerEpoch: 3, TimeoutMs: 60000, State: state, StartMs: 1000, LastUpdateMs: 2000,
		Partitions:     []model.TopicPartition{{Topic: "a", Partition: 0}, {Topic: "a", Partition: 2}, {Topic: "b", Partition: 1}},
		PrevProducerID: -1, NextProducerID: -1, NextProducerEpoch: -1,
	}
	if tagged {
		r.PrevProducerID, r.NextProducerID, r.NextProducerEpoch, r.ClientTxnVersion = 41, 43, 0, 2
	}
	return r
}

type decodeCase struct {
	name       string
	key, value []byte
	want       model.TxnLogRecord
	err        string // a part of the error; "" for none
	newer      bool   // the error is a version newer than txnscope reads
	id         string // the id an error still names (its key was read)
}

// decodeCases covers every key and value version kmsg knows, every state,
// tombstones, versions newer than txnscope reads, and broken bytes.
func decodeCases() []decodeCase {
	var cs []decodeCase
	states := []model.State{model.Empty, model.Ongoing, model.PrepareCommit, model.PrepareAbort,
		model.CompleteCommit, model.CompleteAbort, model.Dead, model.PrepareEpochFence}
	for s, state := range states {
		for _, c := range []struct {
			version int16
			tagged  bool
		}{{0, false}, {1, false}, {1, true}} {
			cs = append(cs, decodeCase{
				name: fmt.Sprintf("v%d %s tags %v", c.version, state, c.tagged), key: txnLogKey(0, "orders-0-7"),
				value: encode(txnLogValue(c.version, kmsg.TransactionState(s), c.tagged)),
				want:  txnLogRecord("orders-0-7", state, c.tagged),
			})
		}
	}
	// v0 has no tags: what v1 would carry in them is not written at all.
	cs = append(cs, decodeCase{name: "v0 drops the tags", key: txnLogKey(0, "x"),
		value: encode(txnLogValue(0, 1, true)), want: txnLogRecord("x", model.Ongoing, false)})
	for _, version := range []int16{0, 1} {
		none := txnLogValue(version, 0, false)
		none.Topics, none.StartTimestamp = nil, -1
		want := txnLogRecord("x", model.Empty, false)
		want.Partitions, want.StartMs = nil, -1
		cs = append(cs, decodeCase{name: fmt.Sprintf("v%d without partitions", version), key: txnLogKey(0, "x"),
			value: encode(none), want: want})
	}
	unknownTag := txnLogValue(1, 4, true)
	unknownTag.UnknownTags.Set(9, []byte{1, 2, 3})
	unknownTag.Topics[0].UnknownTags.Set(5, []byte{7})
	cs = append(cs,
		decodeCase{name: "v1 with tags from a newer Kafka", key: txnLogKey(0, "x"), value: encode(unknownTag),
			want: txnLogRecord("x", model.CompleteCommit, true)},
		decodeCase{name: "tombstone", key: txnLogKey(0, "gone"), value: nil,
			want: model.TxnLogRecord{ID: "gone", Tombstone: true}},
		decodeCase{name: "an empty value is not a tombstone", key: txnLogKey(0, "x"), value: []byte{}, err: "does not decode", id: "x"},
	)
	// Another key version is another kind of record, which a newer Kafka
	// may mean as an id's state: not read, and said so.
	for _, version := range []int16{1, 2} {
		cs = append(cs, decodeCase{name: fmt.Sprintf("key v%d", version), key: txnLogKey(version, "x"),
			value: encode(txnLogValue(1, 1, false)), err: fmt.Sprintf("key version %d, newer than txnscope reads (0)", version), newer: true})
	}
	cs = append(cs, decodeCase{name: "key v-1", key: txnLogKey(-1, "x"), value: encode(txnLogValue(1, 1, false)), err: "key version -1"})
	for _, state := range []kmsg.TransactionState{8, 127, -1} {
		cs = append(cs, decodeCase{name: fmt.Sprintf("state %d", state), key: txnLogKey(0, "x"),
			value: encode(txnLogValue(1, state, false)), err: fmt.Sprintf("unknown state %d", state), id: "x"})
	}
	// A newer version may add fields that are not tagged: not guessed at.
	for _, version := range []int16{2, 300} {
		cs = append(cs, decodeCase{name: fmt.Sprintf("value v%d", version), key: txnLogKey(0, "x"), value: encode(txnLogValue(version, 1, true)),
			err: fmt.Sprintf("version %d, newer than txnscope reads (1)", version), newer: true, id: "x"})
	}
	cs = append(cs, decodeCase{name: "value v-1", key: txnLogKey(0, "x"), value: encode(txnLogValue(-1, 1, true)),
		err: `the value of "x": version -1`, id: "x"})
	for _, version := range []int16{0, 1} {
		full := encode(txnLogValue(version, 1, true))
		for n := range len(full) {
			cs = append(cs, decodeCase{name: fmt.Sprintf("v%d value cut at %d", version, n), key: txnLogKey(0, "x"),
				value: full[:n], err: "does not decode", id: "x"})
		}
	}
	key := txnLogKey(0, "orders-0-7")
	for n := range len(key) {
		cs = append(cs, decodeCase{name: fmt.Sprintf("key cut at %d", n), key: key[:n],
			value: encode(txnLogValue(1, 1, false)), err: "does not decode"})
	}
	return cs
}

// decodeTxnLog reads what a coordinator writes, field by field, at every
// version; it refuses newer versions as such, and broken or unknown values
// with an error naming the id, never a panic or a half-read record.
func TestDecodeTxnLog(t *testing.T) {
	for _, c := range decodeCases() {
		rec, err := decodeTxnLog(c.key, c.value)
		if (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: err %v, want err %q", c.name, err, c.err)
			continue
		}
		if err != nil {
			var newer newerError
			if errors.As(err, &newer) != c.newer || rec.ID != c.id {
				t.Errorf("%s: err %v (newer %v), id %q; want newer %v, id %q", c.name, err, errors.As(err, &newer), rec.ID, c.newer, c.id)
			}
			continue
		}
		if !reflect.DeepEqual(rec, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, rec, c.want)
		}
	}
}

// Lengths that claim more than the record holds fail before anything that
// size is allocated: a hostile record costs kilobytes, not gigabytes.
func TestDecodeTxnLogHostileLengths(t *testing.T) {
	head := func(version int16) []byte { // version, producer id, epoch, timeout, state
		b := binary.BigEndian.AppendUint16(nil, uint16(version))
		b = binary.BigEndian.AppendUint64(b, 42)
		b = binary.BigEndian.AppendUint16(b, 3)
		b = binary.BigEndian.AppendUint32(b, 60000)
		return append(b, 1)
	}
	huge := []byte{0xff, 0xff, 0xff, 0xff, 0x0f} // uvarint 2^32-1
	cases := map[string][]byte{
		"v0 topics":     binary.BigEndian.AppendUint32(head(0), 0x7fffffff),
		"v1 topics":     append(head(1), huge...),
		"v0 partitions": binary.BigEndian.AppendUint32(append(binary.BigEndian.AppendUint32(head(0), 1), 0, 1, 'a'), 0x7fffffff),
		"v1 partitions": append(append(head(1), 2, 2, 'a'), huge...),
		"v1 topic name": append(append(head(1), 2), huge...),
		"v1 tags":       append(append(head(1), make([]byte, 17)...), huge...),
		"v1 tag size":   append(append(head(1), append(make([]byte, 17), 1, 9)...), huge...),
	}
	for name, value := range cases {
		before := allocated()
		_, err := decodeTxnLog(txnLogKey(0, "x"), value)
		if grew := allocated() - before; grew > 1<<20 {
			t.Errorf("%s: decoding %d bytes allocated %d bytes", name, len(value), grew)
		}
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	key := binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, 0), 0x7fff)
	if _, err := decodeTxnLog(key, nil); err == nil {
		t.Errorf("a key claiming a 32 KiB id in 4 bytes: no error")
	}
}

func allocated() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}
