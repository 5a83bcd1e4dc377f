package flinkrest

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
)

// A completed checkpoint's _metadata, decoded as Flink's own
// MetadataV3…V6 serializers write it (Flink 1.20 writes version 4, 2.2
// version 6): the checkpoint's id, then each operator's state, subtask by
// subtask, as handles to the bytes of its state (inline, or a file beside
// _metadata). Only what locates operator state is kept; keyed and channel
// state is read past, never kept. Every count is checked against the bytes
// left before anything is made for it, and whatever cannot be read stops
// the decoding with the byte offset where it stopped: evidence that cannot
// be read is no evidence.

// checkpointMeta is a decoded _metadata.
type checkpointMeta struct {
	Version   int32
	ID        int64
	Operators []operatorMeta
}

// operatorMeta is one operator of the job and its subtasks' state. Name and
// UID are written from metadata version 5 on.
type operatorMeta struct {
	Name, UID                   string
	ID                          string // Flink's OperatorID, as its REST API prints it
	Parallelism, MaxParallelism int32
	Subtasks                    []subtaskMeta
}

// subtaskMeta is one subtask's operator state (Finished: it had ended, and
// holds none).
type subtaskMeta struct {
	Index        int32
	Finished     bool
	Managed, Raw *operatorStateHandle
}

// operatorStateHandle locates an operator's list states: each state's
// elements start at Offsets in the stream Data is (or Data locates).
type operatorStateHandle struct {
	States map[string][]int64
	Data   streamHandle
}

// streamHandle is where a stream of state bytes is: Inline in _metadata,
// or a file (Path, relative to the checkpoint's directory when Relative).
type streamHandle struct {
	Inline   []byte
	Path     string
	Relative bool
	Size     int64
}

// The handle types of MetadataV2V3SerializerBase.
const (
	handleNull               = 0
	handleByteStream         = 1
	handleFile               = 2
	handleKeyGroups          = 3
	handleOperator           = 4
	handleIncremental        = 5
	handleRelativeFile       = 6
	handleSavepointKeyGroups = 7
	handleChangelog          = 8
	handleChangelogBytes     = 9
	handleChangelogFile      = 10
	handleIncrementalV2      = 11
	handleKeyGroupsV2        = 12
	handleChangelogFileV2    = 13
	handleChangelogV2        = 14
)

const (
	masterStateMagic = 0xc96b1696
	// maxHandleDepth bounds the changelog handles' nesting: Flink writes
	// one level.
	maxHandleDepth = 4
)

// decodeMetadata decodes a whole _metadata (its magic number and version
// first).
func decodeMetadata(data []byte) (*checkpointMeta, error) {
	r := &metaReader{data: data}
	if r.i32() != metadataMagic {
		return nil, fmt.Errorf("does not start with Flink's magic number")
	}
	m := &checkpointMeta{Version: r.i32()}
	if m.Version < 3 || m.Version > 6 {
		return nil, fmt.Errorf("is of metadata version %d; txnscope reads versions 3 to 6 (Flink 1.11 to 2.2)", m.Version)
	}
	if m.ID = r.i64(); r.err == nil && m.ID < 0 {
		r.fail("invalid checkpoint id %d", m.ID)
	}
	for range r.count(8, "master states") {
		if uint32(r.i32()) != masterStateMagic && r.err == nil {
			r.fail("a master state without its magic number")
		}
		r.skip(int(r.positive("a master state's length")))
	}
	for range r.count(32, "operators") {
		m.Operators = append(m.Operators, r.operator(m.Version))
	}
	// Versions 4 on end with the checkpoint's properties, Java-serialized:
	// nothing txnscope needs.
	if r.err != nil {
		return nil, r.err
	}
	return m, nil
}

func (r *metaReader) operator(version int32) operatorMeta {
	var o operatorMeta
	if version >= 5 {
		o.Name, o.UID = r.utf(), r.utf()
	}
	var id [16]byte
	// OperatorID(lower, upper); Flink prints the lower part first.
	binary.BigEndian.PutUint64(id[:8], uint64(r.i64()))
	binary.BigEndian.PutUint64(id[8:], uint64(r.i64()))
	o.ID = hex.EncodeToString(id[:])
	o.Parallelism, o.MaxParallelism = r.i32(), r.i32()
	if h := r.stream(0); h != nil && h.Path != "" && r.err == nil {
		r.fail("an operator coordinator's state that is not inline")
	}
	n := r.i32()
	if n < 0 || r.err != nil {
		return o // fully finished
	}
	if int(n) > r.left()/4 {
		r.fail("%d subtask states, more than the bytes left hold", n)
		return o
	}
	for range n {
		s := subtaskMeta{Index: r.i32()}
		if s.Index < 0 {
			s.Index, s.Finished = -s.Index-1, true
		} else {
			s.Managed, s.Raw = r.subtask(version)
		}
		if r.err != nil {
			return o
		}
		o.Subtasks = append(o.Subtasks, s)
	}
	return o
}

// subtask reads one subtask's state, keeping its operator state.
func (r *metaReader) subtask(version int32) (managed, raw *operatorStateHandle) {
	if r.i32() != 0 {
		managed = r.operatorState()
	}
	if r.i32() != 0 {
		raw = r.operatorState()
	}
	r.keyed(0)
	r.keyed(0)
	for range 2 { // input channels, then result subpartitions
		for range r.count(4, "channel states") {
			r.channel(version)
		}
	}
	return managed, raw
}

func (r *metaReader) operatorState() *operatorStateHandle {
	switch t := r.u8(); t {
	case handleNull:
		return nil
	case handleOperator:
	default:
		r.fail("unknown operator state handle type %d", t)
		return nil
	}
	h := &operatorStateHandle{States: map[string][]int64{}}
	for range r.count(7, "operator states") {
		name := r.utf()
		r.u8() // distribution mode
		var offsets []int64
		for range r.count(8, "state offsets") {
			offsets = append(offsets, r.i64())
		}
		h.States[name] = offsets
	}
	if s := r.stream(0); s != nil {
		h.Data = *s
	}
	return h
}

// stream reads a stream state handle (nil: none).
func (r *metaReader) stream(depth int) *streamHandle {
	switch t := r.u8(); t {
	case handleNull:
		return nil
	case handleByteStream:
		r.utf() // its name
		n := r.positiveOrZero("an inline state's length")
		return &streamHandle{Inline: r.bytes(int(n)), Size: int64(n)}
	case handleFile:
		size := r.i64()
		return &streamHandle{Size: size, Path: r.utf()}
	case handleRelativeFile:
		path := r.utf()
		return &streamHandle{Path: path, Relative: true, Size: r.i64()}
	case handleKeyGroups:
		r.keyGroups()
		if depth >= maxHandleDepth {
			r.fail("state handles nested deeper than %d", maxHandleDepth)
			return nil
		}
		r.stream(depth + 1)
		return nil
	default:
		if r.err == nil {
			r.fail("unknown stream state handle type %d", t)
		}
		return nil
	}
}

// keyed reads past a keyed state handle.
func (r *metaReader) keyed(depth int) {
	if depth > maxHandleDepth {
		r.fail("state handles nested deeper than %d", maxHandleDepth)
		return
	}
	switch t := r.u8(); t {
	case handleNull:
	case handleKeyGroups, handleKeyGroupsV2, handleSavepointKeyGroups:
		r.keyGroups()
		r.stream(depth + 1)
		if t == handleKeyGroupsV2 {
			r.utf()
		}
	case handleIncremental, handleIncrementalV2:
		r.i64()
		r.utf()
		r.i32()
		r.i32()
		if t == handleIncrementalV2 {
			r.i64()
		}
		r.stream(depth + 1)
		for range 2 { // shared, then private state
			for range r.count(3, "state files") {
				r.utf()
				r.stream(depth + 1)
			}
		}
		if t == handleIncrementalV2 {
			r.utf()
		}
	case handleChangelog, handleChangelogV2:
		r.i32()
		r.i32()
		r.i64()
		for range 2 { // materialized, then not yet
			for range r.count(1, "changelog handles") {
				r.keyed(depth + 1)
			}
		}
		r.i64()
		if t == handleChangelogV2 {
			r.i64()
		}
		r.utf()
	case handleChangelogBytes:
		r.i32()
		r.i32()
		r.i64()
		r.i64()
		for range r.count(8, "state changes") {
			r.i32()
			r.skip(int(r.positiveOrZero("a state change's length")))
		}
		r.utf()
	case handleChangelogFile, handleChangelogFileV2:
		r.i32()
		r.i32()
		for range r.count(9, "changelog files") {
			r.i64()
			r.stream(depth + 1)
		}
		r.i64()
		r.i64()
		r.utf()
		if t == handleChangelogFileV2 {
			r.utf()
		}
	default:
		if r.err == nil {
			r.fail("unknown keyed state handle type %d", t)
		}
	}
}

// keyGroups reads past a key-group range and its offsets.
func (r *metaReader) keyGroups() {
	r.i32()
	for range r.count(8, "key groups") {
		r.i64()
	}
}

// channel reads past an unaligned checkpoint's channel state handle:
// ChannelStateHandleSerializerV1 up to version 5, V2 (typed, merged
// handles) in version 6.
func (r *metaReader) channel(version int32) {
	merged := false
	if version >= 6 {
		switch t := r.u8(); t {
		case 1, 2:
		case 3, 4:
			merged = true
		default:
			if r.err == nil {
				r.fail("unknown channel state handle type %d", t)
			}
			return
		}
	}
	r.i32() // subtask index
	if merged {
		r.i64()
		r.stream(1)
		r.skip(int(r.positiveOrZero("channel offsets' length")))
		return
	}
	r.i32() // gate or partition
	r.i32() // channel or subpartition
	for range r.count(8, "channel offsets") {
		r.i64()
	}
	r.i64()
	r.stream(1)
}

// metaReader reads Java DataInput's big-endian values, stopping at the
// first it cannot read with where and why (err); reads after that return
// zero values.
type metaReader struct {
	data []byte
	off  int
	base int // where data starts in what the offsets in errors count
	err  error
}

func (r *metaReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("cannot be decoded at byte %d: %s", r.base+r.off, fmt.Sprintf(format, args...))
	}
}

func (r *metaReader) left() int { return len(r.data) - r.off }

func (r *metaReader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > r.left() {
		r.fail("%d bytes wanted, %d left (cut short?)", n, r.left())
		return nil
	}
	b := r.data[r.off : r.off+n]
	r.off += n
	return b
}

func (r *metaReader) skip(n int) { r.take(n) }

func (r *metaReader) bytes(n int) []byte { return r.take(n) }

func (r *metaReader) u8() byte {
	if b := r.take(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *metaReader) i32() int32 {
	if b := r.take(4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (r *metaReader) i64() int64 {
	if b := r.take(8); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

// utf reads a string as Java's DataInput.readUTF writes it.
func (r *metaReader) utf() string {
	var n int
	if b := r.take(2); b != nil {
		n = int(binary.BigEndian.Uint16(b))
	}
	b := r.take(n)
	if r.err != nil {
		return ""
	}
	s, ok := fromModifiedUTF8(b)
	if !ok {
		r.off -= n
		r.fail("a string that is not Java's modified UTF-8")
	}
	return s
}

// count reads a count of items of at least min bytes each, refusing one the
// bytes left cannot hold: nothing is made for what a count only claims.
func (r *metaReader) count(min int, what string) int {
	n := r.i32()
	switch {
	case r.err != nil:
		return 0
	case n < 0:
		r.off -= 4
		r.fail("a negative number of %s (%d)", what, n)
		return 0
	case int64(n)*int64(min) > int64(r.left()):
		left := r.left()
		r.off -= 4
		r.fail("%d %s, more than the %d bytes left hold", n, what, left)
		return 0
	}
	return int(n)
}

func (r *metaReader) positive(what string) int32 {
	n := r.i32()
	if n <= 0 && r.err == nil {
		r.off -= 4
		r.fail("%s of %d", what, n)
		return 0
	}
	return n
}

func (r *metaReader) positiveOrZero(what string) int32 {
	n := r.i32()
	if n < 0 && r.err == nil {
		r.off -= 4
		r.fail("%s of %d", what, n)
		return 0
	}
	return n
}
