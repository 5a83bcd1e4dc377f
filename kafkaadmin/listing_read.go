package kafkaadmin

import (
	"encoding/binary"
	"errors"
	"unsafe"

	"github.com/txnscope/txnscope/model"
)

// readListing reads a ListTransactions response body (every version is
// flexible: ThrottleMillis, ErrorCode, UnknownStateFilters, then
// TransactionStates of {TransactionalID, ProducerID, TransactionState, tags},
// then tags) straight into a listing: the ids are copied into one block, the
// states are the model's own constants. kmsg would make a struct and two
// strings per id, a million objects at 500,000 ids, to be copied here and
// dropped.
func readListing(src []byte) (out listing, throttle int32, code int16, err error) {
	r := wire{b: src}
	throttle, code = int32(r.uint32()), int16(r.uint16())
	for range r.arrayLen() { // UnknownStateFilters
		r.compactString()
	}
	n := r.arrayLen()
	if r.bad || n*11 > len(r.b) { // the least an entry takes
		return listing{}, 0, 0, errBadListing
	}
	body := r
	size := 0
	for range n {
		size += len(r.compactString())
		r.skip(8)
		r.compactString()
		r.tags()
	}
	r.tags()
	if r.bad || len(r.b) != 0 {
		return listing{}, 0, 0, errBadListing
	}
	r = body
	own := make([]byte, 0, size)
	out = listing{ids: make([]string, n), ls: make([]listed, n)}
	for k := range n {
		start := len(own)
		own = append(own, r.compactString()...)
		out.ids[k] = view(own[start:])
		out.ls[k].pid = int64(r.uint64())
		out.ls[k].state = model.StateOf(view(r.compactString())) // a constant, or a copy
		r.tags()
	}
	return out, throttle, code, nil
}

var errBadListing = errors.New("ListTransactions: a response that does not read as one")

// wire reads Kafka's flexible encoding; a read past the end sets bad and
// returns zeros.
type wire struct {
	b   []byte
	bad bool
}

func (w *wire) take(n int) []byte {
	if w.bad || n < 0 || n > len(w.b) {
		w.bad, w.b = true, nil
		return nil
	}
	out := w.b[:n:n]
	w.b = w.b[n:]
	return out
}

func (w *wire) skip(n int) { w.take(n) }

func (w *wire) uint16() uint16 {
	if b := w.take(2); b != nil {
		return binary.BigEndian.Uint16(b)
	}
	return 0
}

func (w *wire) uint32() uint32 {
	if b := w.take(4); b != nil {
		return binary.BigEndian.Uint32(b)
	}
	return 0
}

func (w *wire) uint64() uint64 {
	if b := w.take(8); b != nil {
		return binary.BigEndian.Uint64(b)
	}
	return 0
}

func (w *wire) uvarint() int {
	if w.bad {
		return 0
	}
	v, n := binary.Uvarint(w.b)
	if n <= 0 || v > 1<<31 {
		w.bad, w.b = true, nil
		return 0
	}
	w.b = w.b[n:]
	return int(v)
}

// arrayLen is a compact array's length (a null array is empty).
func (w *wire) arrayLen() int {
	return max(w.uvarint()-1, 0)
}

// compactString is a view of a compact string's bytes (nil for null).
func (w *wire) compactString() []byte {
	n := w.uvarint() - 1
	if n <= 0 {
		return nil
	}
	return w.take(n)
}

// view is b as a string, without a copy: b must not change while it is used.
func view(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// tags skips a tagged-fields section.
func (w *wire) tags() {
	for range w.uvarint() {
		w.uvarint() // the tag
		w.skip(w.uvarint())
	}
}
