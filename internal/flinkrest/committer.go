package flinkrest

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/txnscope/txnscope/model"
)

// A sink's committer (Flink's CommitterOperator, the KafkaSink's in
// connector 3.4 and 5.0 alike) keeps its pending commits in one list state,
// each element the whole CommittableCollector. As Flink 1.20 and 2.2 write
// it (seen in their checkpoints, testdata/metadata):
//
//	element      int32 length; int32 version (2), int32 length, the collector
//	collector    int32 magic 0xb91f252c, list of checkpoints
//	list of T    int32 T's serializer version, int32 count, count × (int32 length, T)
//	checkpoint   v1: int64 checkpoint id, int32 subtasks of the committer, list of subtasks
//	             (v0: no count of subtasks)
//	subtask      v1: int32 subtask, list of requests, int32 committables, drained, failed
//	             v2 (Flink 2.x): int32 subtask, list of requests, int32 committables, failed
//	             (v0: no subtask)
//	request      v0: int32 version (1), int32 length, the committable, int32 retries, int32 state
//	committable  int16 epoch, int64 producer id, the transactional id (writeUTF)
//
// A committable is what Flink's committer would commit for that
// checkpoint: the transactional id with its own producer id and epoch.

// committerState is the list state a sink's committer keeps its
// CommittableCollector in.
const committerState = "streaming_committer_raw_states"

const collectorMagic = 0xb91f252c

// CommitRequestState's ordinals: a request FAILED or COMMITTED is one the
// committer is done with, and does not commit on restore.
const (
	requestFailed    = 2
	requestCommitted = 3
)

// pendingCommit is one committable a committer's state holds, and the
// checkpoint it was pre-committed for.
type pendingCommit struct {
	model.Committable
	Checkpoint int64
	State      int32 // CommitRequestState's ordinal: 0 received, 1 retry, 2 failed, 3 committed
}

// collectorCommits decodes the committer state's elements, each starting at
// one of offsets in stream.
func collectorCommits(stream []byte, offsets []int64) ([]pendingCommit, error) {
	var out []pendingCommit
	for _, off := range offsets {
		if off < 0 || off > int64(len(stream)) {
			return nil, fmt.Errorf("the committer's state starts at byte %d of a %d-byte stream", off, len(stream))
		}
		r := &metaReader{data: stream, off: int(off)}
		el := r.sub("the committer state's element")
		if r.err != nil {
			return nil, r.err
		}
		commits, err := collector(el)
		if err != nil {
			return nil, err
		}
		out = append(out, commits...)
	}
	return out, nil
}

// collector decodes one CommittableCollector, as SimpleVersionedSerialization
// wrapped it.
func collector(el *metaReader) ([]pendingCommit, error) {
	if v := el.i32(); v != 2 && el.err == nil {
		el.off -= 4
		el.fail("a committable collector of version %d; txnscope reads version 2 (Flink 1.15 on)", v)
	}
	el = el.sub("the committable collector")
	if m := el.i32(); uint32(m) != collectorMagic && el.err == nil {
		el.off -= 4
		el.fail("a committable collector without its magic number")
	}
	var out []pendingCommit
	cpVersion, checkpoints := el.list("checkpoints", 0, 1)
	for _, cp := range checkpoints {
		id := cp.i64()
		if cpVersion >= 1 {
			cp.i32() // the committer's subtasks
		}
		subVersion, subtasks := cp.list("subtasks", 0, 1, 2)
		for _, sub := range subtasks {
			if subVersion >= 1 {
				sub.i32() // which subtask
			}
			_, requests := sub.list("commit requests", 0)
			for _, req := range requests {
				c := req.committable()
				c.Checkpoint = id
				c.Committable.Checkpoint = id
				req.i32() // retries
				c.State = req.i32()
				c.Finished = c.State == requestFailed || c.State == requestCommitted
				if req.err == nil && req.left() != 0 {
					req.fail("%d bytes after the commit request", req.left())
				}
				if req.err != nil {
					return nil, req.err
				}
				if len(out) == maxCommittables {
					return nil, fmt.Errorf("holds more than %d committables, more than any sink's state", maxCommittables)
				}
				out = append(out, c)
			}
			counts := 3 // committables, drained, failed
			if subVersion == 2 {
				counts = 2 // committables, failed
			}
			for range counts {
				sub.i32()
			}
			if sub.err == nil && sub.left() != 0 {
				sub.fail("%d bytes after the subtask's commits", sub.left())
			}
			if sub.err != nil {
				return nil, sub.err
			}
		}
		if cp.err == nil && cp.left() != 0 {
			cp.fail("%d bytes after the checkpoint's subtasks", cp.left())
		}
		if cp.err != nil {
			return nil, cp.err
		}
	}
	return out, el.err
}

// committable reads a KafkaCommittable, as SimpleVersionedSerialization
// wraps it (version 1 of KafkaCommittableSerializer).
func (r *metaReader) committable() pendingCommit {
	if v := r.i32(); v != 1 && r.err == nil {
		r.off -= 4
		r.fail("a Kafka committable of version %d; txnscope reads version 1 (connector 3.x to 5.0)", v)
	}
	b := r.sub("a Kafka committable")
	var c pendingCommit
	c.Epoch = int16(b.i16())
	c.ProducerID = b.i64()
	c.ID = b.utf()
	if b.err == nil && b.left() != 0 {
		b.fail("%d bytes after the committable", b.left())
	}
	if b.err != nil && r.err == nil {
		r.err = b.err
	}
	return c
}

// list reads SimpleVersionedSerialization's list: its items' serializer
// version (one of versions), then the items, each with its length, as
// readers of their bytes.
func (r *metaReader) list(what string, versions ...int32) (int32, []*metaReader) {
	v := r.i32()
	if !slices.Contains(versions, v) && r.err == nil {
		r.off -= 4
		r.fail("%s of serializer version %d; txnscope reads versions %v", what, v, versions)
	}
	var items []*metaReader
	for range r.count(4, what) {
		items = append(items, r.sub(what))
	}
	if r.err != nil {
		return v, nil
	}
	return v, items
}

// sub reads an int32 length and returns a reader of that many bytes.
func (r *metaReader) sub(what string) *metaReader {
	n := r.positiveOrZero(what + "'s length")
	start := r.off
	b := r.take(int(n))
	return &metaReader{data: b, base: r.base + start, err: r.err}
}

func (r *metaReader) i16() int16 {
	if b := r.take(2); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}

// checkpointCommits decodes a _metadata and the state of every sink
// committer in it, inline or in a file beside it (read reads that file,
// bounded; nil: only inline state is read). It returns what it decoded
// even with an error, for the error to be named with the operator.
func checkpointCommits(data []byte, read func(streamHandle) ([]byte, error)) (*checkpointMeta, []pendingCommit, error) {
	m, err := decodeMetadata(data)
	if err != nil {
		return nil, nil, err
	}
	var out []pendingCommit
	for _, o := range m.Operators {
		for _, s := range o.Subtasks {
			if s.Managed == nil {
				continue
			}
			offsets, ok := s.Managed.States[committerState]
			if !ok {
				continue
			}
			stream := s.Managed.Data.Inline
			if s.Managed.Data.Path != "" {
				if read == nil {
					return m, nil, fmt.Errorf("operator %s subtask %d keeps its committer state in %s, which was not read", o.ID, s.Index, s.Managed.Data.Path)
				}
				if stream, err = read(s.Managed.Data); err != nil {
					return m, nil, fmt.Errorf("operator %s subtask %d: its committer state: %w", o.ID, s.Index, err)
				}
			}
			commits, err := collectorCommits(stream, offsets)
			if err != nil {
				return m, nil, fmt.Errorf("operator %s subtask %d: its committer state %w", o.ID, s.Index, err)
			}
			if out = append(out, commits...); len(out) > maxCommittables {
				return m, nil, fmt.Errorf("holds more than %d committables, more than any sink's state", maxCommittables)
			}
		}
	}
	return m, out, nil
}
