package kafkaadmin

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/model"
)

// batch encodes one record batch of n records at offset first; a control batch holds one
// marker record (typ 0 ABORT, 1 COMMIT).
func batch(first int64, n int32, pid int64, epoch int16, control bool, typ kmsg.ControlRecordKeyType) []byte {
	rec := kmsg.Record{Value: []byte("v")}
	attrs := int16(0x10) // transactional
	if control {
		attrs |= attrControl
		n = 1
		rec = kmsg.Record{Key: (&kmsg.ControlRecordKey{Type: typ}).AppendTo(nil), Value: (&kmsg.EndTxnMarker{}).AppendTo(nil)}
	}
	rec.Length = int32(len(rec.AppendTo(nil)) - 1)
	var recs []byte
	for i := range n {
		rec.OffsetDelta = i
		recs = rec.AppendTo(recs)
	}
	b := kmsg.RecordBatch{FirstOffset: first, PartitionLeaderEpoch: -1, Magic: 2, Attributes: attrs,
		LastOffsetDelta: n - 1, ProducerID: pid, ProducerEpoch: epoch, FirstSequence: -1, NumRecords: n, Records: recs}
	b.Length = int32(len(b.AppendTo(nil)) - batchPrefix)
	return b.AppendTo(nil)
}

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// TestScanMarker: the first control batch of the transaction's producer at or after its first
// offset says how it ended; other producers' markers, data and earlier batches do not, and a log
// that cannot be walked says nothing.
func TestScanMarker(t *testing.T) {
	const (
		pid, other = 7, 9
		abort      = kmsg.ControlRecordKeyTypeAbort
		commit     = kmsg.ControlRecordKeyTypeCommit
	)
	e := ending{pid: pid, epoch: 3, start: 10}
	ours := batch(10, 3, pid, 3, false, 0)     // 10-12
	theirs := batch(13, 2, other, 0, false, 0) // 13-14
	compressed := batch(15, 1, pid, 3, true, abort)
	compressed[22] |= 0x01 // attributes, low byte: gzip
	for _, tc := range []struct {
		name    string
		raw     []byte
		max     int
		want    model.State
		next    int64
		batches int
		stop    bool
	}{
		{"abort marker after other data", cat(ours, theirs, batch(15, 1, other, 0, true, commit), batch(16, 1, pid, 3, true, abort)),
			100, model.CompleteAbort, 17, 4, true},
		{"commit marker, epoch bumped (transaction version 2)", cat(ours, batch(13, 1, pid, 4, true, commit)),
			100, model.CompleteCommit, 14, 2, true},
		{"a marker with an older epoch cannot end it", cat(ours, batch(13, 1, pid, 2, true, commit)),
			100, model.NoState, 14, 2, true},
		{"no marker yet: read on from the next offset", cat(ours, theirs), 100, model.NoState, 15, 2, false},
		{"a batch cut off by the fetch size is left for the next fetch", cat(ours, theirs[:len(theirs)-5]), 100, model.NoState, 13, 1, false},
		{"an earlier marker of the producer does not count", cat(batch(8, 1, pid, 3, true, commit), ours), 100, model.NoState, 13, 2, false},
		{"the batch bound stops the walk", cat(ours, theirs, batch(15, 1, pid, 3, true, abort)), 2, model.NoState, 15, 2, false},
		{"a compressed marker is not read", cat(ours, compressed), 100, model.NoState, 16, 2, true},
		{"garbage", []byte{0, 0, 0, 0, 0, 0, 0, 10, 0xff, 0xff, 0xff, 0xff, 1}, 100, model.NoState, 10, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := scanMarker(tc.raw, e, e.start, tc.max)
			if sc.outcome != tc.want || sc.next != tc.next || sc.batches != tc.batches || sc.stop != tc.stop {
				t.Errorf("scan = %+v, want outcome %q next %d batches %d stop %v", sc, tc.want, tc.next, tc.batches, tc.stop)
			}
		})
	}
}
