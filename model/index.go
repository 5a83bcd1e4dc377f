package model

import (
	"cmp"
	"encoding/binary"
	"hash/maphash"
	"slices"
	"strings"
	"sync"
)

// txnIndex finds a transaction by id in one hash probe or two: a refresh
// looks up every listed id in the previous snapshot, and at 500,000 ids a
// binary search of string compares was a third of its CPU. It is an open
// addressing table of positions in Txns (plus one; 0 is empty), at most half
// full: 8 bytes per id, a quarter of what a map[string]int would take.
type txnIndex struct {
	seed  maphash.Seed
	slots []uint32
	// base and n are the Txns it was built for: a snapshot whose Txns was
	// replaced or resliced since is searched instead.
	base *Txn
	n    int
	// inOrder: built for rows in id order by construction (the log's, which
	// nobody writes), so Sort need not check them.
	inOrder bool
}

func newTxnIndex(txns []Txn) *txnIndex {
	return indexInto(nil, txns, len(txns))
}

// indexInto is newTxnIndex with room for at least room ids, in reuse's
// slots when they are big enough and nobody else holds them (cleared here).
func indexInto(reuse []uint32, txns []Txn, room int) *txnIndex {
	size := 8
	for size < 2*max(len(txns), room) {
		size *= 2
	}
	slots := reuse
	if len(slots) >= size {
		clear(slots)
	} else {
		slots = make([]uint32, size)
	}
	size = len(slots)
	x := &txnIndex{seed: maphash.MakeSeed(), slots: slots, n: len(txns)}
	if len(txns) > 0 {
		x.base = &txns[0]
	}
	mask := uint64(size - 1)
	for i := range txns {
		h := maphash.String(x.seed, txns[i].ID) & mask
		for ; x.slots[h] != 0; h = (h + 1) & mask {
			if txns[x.slots[h]-1].ID == txns[i].ID {
				break // a duplicate id: the first one stays, as a search finds it
			}
		}
		if x.slots[h] == 0 {
			x.slots[h] = uint32(i + 1)
		}
	}
	return x
}

// add indexes txns[i], an id not in x yet, when x has room (at most half
// full after it); the caller builds a bigger one otherwise.
func (x *txnIndex) add(txns []Txn, i int) {
	mask := uint64(len(x.slots) - 1)
	h := maphash.String(x.seed, txns[i].ID) & mask
	for x.slots[h] != 0 {
		h = (h + 1) & mask
	}
	x.slots[h] = uint32(i + 1)
	x.n = len(txns)
	x.base = &txns[0]
}

// fits reports whether x was built for txns.
func (x *txnIndex) fits(txns []Txn) bool {
	return x != nil && x.n == len(txns) && (len(txns) == 0 || x.base == &txns[0])
}

// find returns the position of id in txns, or -1 when the index does not
// have it.
func (x *txnIndex) find(txns []Txn, id string) int {
	mask := uint64(len(x.slots) - 1)
	for h := maphash.String(x.seed, id) & mask; x.slots[h] != 0; h = (h + 1) & mask {
		if i := int(x.slots[h] - 1); txns[i].ID == id {
			return i
		}
	}
	return -1
}

// search is the lookup without an index: Txns is sorted by id.
func search(txns []Txn, id string) (int, bool) {
	return slices.BinarySearchFunc(txns, id, func(t Txn, id string) int { return strings.Compare(t.ID, id) })
}

// sortTxns sorts by id and reports whether any row moved. It sorts a slim
// key per row, holding the id's first 32 bytes, and then moves each row
// once: moving the rows inside the sort, and comparing strings that each
// sit elsewhere in memory, cost three times more at 500,000 ids.
func sortTxns(txns []Txn) bool {
	if slices.IsSortedFunc(txns, func(a, b Txn) int { return strings.Compare(a.ID, b.ID) }) {
		return false
	}
	keys := make([]idKey, len(txns))
	for i := range txns {
		keys[i] = newIDKey(txns[i].ID, i)
	}
	sortIDKeys(keys, func(i int) string { return txns[i].ID })
	// Row k comes from keys[k].i: follow each cycle of that permutation,
	// marking the rows done by setting their key's i to k.
	for k := range keys {
		if int(keys[k].i) == k {
			continue
		}
		held := txns[k]
		j := k
		for {
			from := int(keys[j].i)
			keys[j].i = int32(j)
			if from == k {
				txns[j] = held
				break
			}
			txns[j] = txns[from]
			j = from
		}
	}
	return true
}

// OrderByID is the order that sorts ids (equal ids in their order in ids),
// as positions in ids: sortTxns' slim keys, for rows that are not Txns yet.
func OrderByID(ids []string) []int {
	keys := make([]idKey, len(ids))
	for i, id := range ids {
		keys[i] = newIDKey(id, i)
	}
	sortIDKeys(keys, func(i int) string { return ids[i] })
	out := make([]int, len(keys))
	for k := range keys {
		out[k] = int(keys[k].i)
	}
	return out
}

// sortIDKeys sorts keys by id, equal ids by position; id gives the id of a
// key's position. Keys hold keyBytes of their id from an offset: sorted by
// those bytes, each run of keys that tie on them is keyed again from
// keyBytes further on and sorted in its turn, so that no comparison looks
// at a string (most ids of a Flink job share a prefix longer than a key).
func sortIDKeys(keys []idKey, id func(int) string) { sortKeysFrom(keys, 0, id) }

// sortKeysFrom sorts keys whose ids all share their first at bytes.
func sortKeysFrom(keys []idKey, at int, id func(int) string) {
	if at > 0 {
		for k := range keys {
			keys[k].fill(id(int(keys[k].i)), at)
		}
	}
	sortKeys(keys)
	for start, k := 0, 0; k < len(keys); k++ {
		if k+1 < len(keys) && keys[k+1].sameBytes(keys[k]) {
			continue
		}
		run := keys[start : k+1]
		start = k + 1
		if len(run) == 1 {
			continue
		}
		ended := true // every id of the run ends within its key
		for _, r := range run {
			ended = ended && len(id(int(r.i))) <= at+keyBytes
		}
		if !ended {
			sortKeysFrom(run, at+keyBytes, id)
			continue
		}
		// The same bytes, zero-padded: a shorter id is a prefix of the
		// longer (which continues with zero bytes) and comes first.
		slices.SortFunc(run, func(a, b idKey) int {
			return cmp.Or(cmp.Compare(len(id(int(a.i))), len(id(int(b.i)))), cmp.Compare(a.i, b.i))
		})
	}
}

// sortKeys sorts keys by their bytes, then position. Past parallelSortAt it
// splits them at a pivot near the median and sorts both sides at once (at
// 2,000,000 ids the sort was 1.6 s of a snapshot on one core). Keys are
// distinct (their i), so each key sorts to exactly one side.
func sortKeys(keys []idKey) {
	if len(keys) < parallelSortAt {
		slices.SortFunc(keys, idKey.compare)
		return
	}
	var sample [63]idKey
	for k := range sample {
		sample[k] = keys[k*(len(keys)-1)/(len(sample)-1)]
	}
	slices.SortFunc(sample[:], idKey.compare)
	pivot := sample[len(sample)/2]
	left := 0
	for j := range keys {
		if keys[j].compare(pivot) < 0 {
			keys[left], keys[j] = keys[j], keys[left]
			left++
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() { slices.SortFunc(keys[:left], idKey.compare) })
	slices.SortFunc(keys[left:], idKey.compare)
	wg.Wait()
}

// parallelSortAt is how many ids sortKeys sorts on two cores.
var parallelSortAt = 1 << 16

// idKey orders an id by keyBytes of it from an offset, big-endian and
// zero-padded: zero-padded bytes order as the strings do, except that a
// shorter id ties with a longer one that continues with zero bytes, which
// sortKeysFrom settles. 32 bytes in all: with 32 bytes of id and an int
// (40), the sort's keys were 80 MB of the exporter's peak at 2,000,000
// ids; 20 bytes of id (24 in all) made Flink's ids (a job's prefix, its
// subtask and checkpoint: 25 to 30 bytes) need a second round and the sort
// 1.5 times slower.
type idKey struct {
	head [3]uint64
	tail uint32
	i    int32
}

const keyBytes = 28

func newIDKey(id string, i int) idKey {
	k := idKey{i: int32(i)}
	k.fill(id, 0)
	return k
}

// fill sets k's bytes to id's from at.
func (k *idKey) fill(id string, at int) {
	var b [keyBytes]byte
	if at < len(id) {
		copy(b[:], id[at:])
	}
	for j := range k.head {
		k.head[j] = binary.BigEndian.Uint64(b[8*j:])
	}
	k.tail = binary.BigEndian.Uint32(b[24:])
}

func (k idKey) sameBytes(o idKey) bool { return k.head == o.head && k.tail == o.tail }

func (k idKey) compareBytes(o idKey) int {
	for j := range k.head {
		if k.head[j] != o.head[j] {
			return cmp.Compare(k.head[j], o.head[j])
		}
	}
	return cmp.Compare(k.tail, o.tail)
}

func (k idKey) compare(o idKey) int {
	if c := k.compareBytes(o); c != 0 {
		return c
	}
	return cmp.Compare(k.i, o.i)
}

// movedTo is x for a copy of the rows it was built for (same ids at the same
// positions, another backing array), sharing its slots: a describe batch
// copies 500,000 rows and must not lose the index or rebuild it.
func (x *txnIndex) movedTo(from, to []Txn) *txnIndex {
	if !x.fits(from) || len(to) != len(from) {
		return nil
	}
	y := *x
	if len(to) > 0 {
		y.base = &to[0]
	}
	return &y
}
