package testutil

import (
	"encoding/binary"

	"github.com/txnscope/txnscope/model"
)

// FlinkMetadata is a checkpoint's _metadata as Flink writes one for
// checkpoint n (magic number, metadata version 4, the checkpoint's id),
// holding cs as a KafkaSink committer's inline state holds committables
// (connector 3.4 and 5.0: SimpleVersionedSerialization of
// KafkaCommittable v1), among bytes of other state. Ids are written as Go
// strings, which is Java's modified UTF-8 for ids without NUL or
// characters beyond U+FFFF.
func FlinkMetadata(n int64, cs ...model.Committable) []byte {
	b := binary.BigEndian.AppendUint32(nil, 0x4960672D)
	b = binary.BigEndian.AppendUint32(b, 4)
	b = binary.BigEndian.AppendUint64(b, uint64(n))
	b = append(b, "\x00\x00\x00\x1estreaming_committer_raw_states"...)
	for _, c := range cs {
		b = binary.BigEndian.AppendUint32(b, uint32(24+len(c.ID))) // the collector's own length
		b = binary.BigEndian.AppendUint32(b, 1)
		b = binary.BigEndian.AppendUint32(b, uint32(12+len(c.ID)))
		b = binary.BigEndian.AppendUint16(b, uint16(c.Epoch))
		b = binary.BigEndian.AppendUint64(b, uint64(c.ProducerID))
		b = binary.BigEndian.AppendUint16(b, uint16(len(c.ID)))
		b = append(b, c.ID...)
	}
	return append(b, "writer_raw_states"...)
}
