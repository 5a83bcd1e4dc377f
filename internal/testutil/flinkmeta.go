package testutil

import (
	"encoding/binary"
	"strings"

	"github.com/txnscope/txnscope/model"
)

// FlinkMetadata is a checkpoint's _metadata as Flink 1.20 writes one for
// checkpoint n (metadata version 4): one operator, a KafkaSink's committer,
// whose subtask keeps its state inline, pending the commit of cs for
// checkpoint n (CommittableCollector version 2 as Flink 1.20 writes it,
// KafkaCommittable version 1 in it, as connector 3.4 and 5.0 serialize
// them). Ids are written as Go
// strings, which is Java's modified UTF-8 for ids without NUL or
// characters beyond U+FFFF.
func FlinkMetadata(n int64, cs ...model.Committable) []byte {
	meta, _ := flinkMetadata(n, "", cs)
	return meta
}

// FlinkMetadataInFile is FlinkMetadata for a committer whose state Flink
// wrote to a file beside _metadata (state larger than
// state.storage.fs.memory-threshold): _metadata names file, relative to the
// checkpoint's directory when it is not absolute, and state is what the
// file holds.
func FlinkMetadataInFile(n int64, file string, cs ...model.Committable) (meta, state []byte) {
	return flinkMetadata(n, file, cs)
}

func flinkMetadata(n int64, file string, cs []model.Committable) (meta, state []byte) {
	be := binary.BigEndian
	var requests [][]byte
	for _, c := range cs {
		r := be.AppendUint32(nil, 1) // KafkaCommittableSerializer's version
		r = be.AppendUint32(r, uint32(12+len(c.ID)))
		r = be.AppendUint16(r, uint16(c.Epoch))
		r = be.AppendUint64(r, uint64(c.ProducerID))
		r = utf(r, c.ID)
		r = be.AppendUint32(r, 0) // retries
		r = be.AppendUint32(r, 0) // received, not yet committed
		requests = append(requests, r)
	}
	subtask := be.AppendUint32(nil, 0) // subtask 0
	subtask = list(subtask, 0, requests)
	subtask = be.AppendUint32(subtask, uint32(len(cs)))
	subtask = be.AppendUint64(subtask, 0) // none drained, none failed
	checkpoint := be.AppendUint64(nil, uint64(n))
	checkpoint = be.AppendUint32(checkpoint, 1) // the committer's subtasks
	checkpoint = list(checkpoint, 1, [][]byte{subtask})
	collector := be.AppendUint32(nil, 0xb91f252c)
	collector = list(collector, 1, [][]byte{checkpoint})
	// The list state's element (byte[]: its length, its bytes), the
	// collector as SimpleVersionedSerialization wraps it (version 2, its
	// length), after some header of the operator state's stream.
	element := be.AppendUint32(nil, 2)
	element = be.AppendUint32(element, uint32(len(collector)))
	element = append(element, collector...)
	stream := append(make([]byte, 16), be.AppendUint32(nil, uint32(len(element)))...)
	stream = append(stream, element...)

	b := be.AppendUint32(nil, 0x4960672D)
	b = be.AppendUint32(b, 4)
	b = be.AppendUint64(b, uint64(n))
	b = be.AppendUint32(b, 0)                  // master states
	b = be.AppendUint32(b, 1)                  // operators
	b = be.AppendUint64(b, 0x7e2b5a3c1d4f6e8a) // operator id
	b = be.AppendUint64(b, 0x0123456789abcdef)
	b = be.AppendUint32(b, 1)   // parallelism
	b = be.AppendUint32(b, 128) // max parallelism
	b = append(b, 0)            // no coordinator state
	b = be.AppendUint32(b, 1)   // subtasks
	b = be.AppendUint32(b, 0)   // subtask 0
	b = be.AppendUint32(b, 1)   // managed operator state:
	b = append(b, 4)            // partitionable
	b = be.AppendUint32(b, 1)   // one state
	b = utf(b, "streaming_committer_raw_states")
	b = append(b, 0)           // split-distribute
	b = be.AppendUint32(b, 1)  // one element
	b = be.AppendUint64(b, 16) // at offset 16
	switch {
	case file == "":
		b = append(b, 1) // inline:
		b = utf(b, "d8a1c3e2-0000-4000-8000-00000000000a")
		b = be.AppendUint32(b, uint32(len(stream)))
		b = append(b, stream...)
	case strings.HasPrefix(file, "/") || strings.HasPrefix(file, "file:") || strings.Contains(file, "://"):
		b = append(b, 2) // a file, by its path
		b = be.AppendUint64(b, uint64(len(stream)))
		b = utf(b, file)
		state = stream
	default:
		b = append(b, 6) // a file of the checkpoint's directory
		b = utf(b, file)
		b = be.AppendUint64(b, uint64(len(stream)))
		state = stream
	}
	b = be.AppendUint32(b, 0) // no raw operator state
	b = append(b, 0, 0)       // no keyed state
	b = be.AppendUint32(b, 0) // no input channel state
	b = be.AppendUint32(b, 0) // no output channel state
	// Then the checkpoint's properties, Java-serialized.
	return append(b, 0xac, 0xed, 0x00, 0x05), state
}

// list is SimpleVersionedSerialization's list: its items' serializer
// version, the count, then each item with its length.
func list(b []byte, version uint32, items [][]byte) []byte {
	b = binary.BigEndian.AppendUint32(b, version)
	b = binary.BigEndian.AppendUint32(b, uint32(len(items)))
	for _, it := range items {
		b = binary.BigEndian.AppendUint32(b, uint32(len(it)))
		b = append(b, it...)
	}
	return b
}

func utf(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}
