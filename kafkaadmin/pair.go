package kafkaadmin

import (
	"strings"
	"sync"
	"unsafe"

	"github.com/txnscope/txnscope/model"
)

// row is one listed id, with its previous row when prev had it.
type row struct {
	id    string
	l     listed
	prev  *model.Txn
	k     int32 // its place in the listing
	asked bool  // it needs a describe (needsDescribe)
	later bool  // ... which is left to the progressive describe (choose)
}

// listOrder remembers, for the last snapshot a refresh made, the row of each
// place in its listing. A broker lists its ids in the same order from one
// refresh to the next (new ones slot in, expired ones drop out), so the next
// refresh pairs each listed id with the row at its old place by comparing
// two strings: at 500,000 ids, hashing every id into a map instead was a
// third of a refresh. A stale or foreign order only costs lookups: every
// pairing is checked against the id.
type listOrder struct {
	mu  sync.Mutex
	seq []int32
}

func (o *listOrder) get() []int32 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.seq
}

func (o *listOrder) set(seq []int32) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seq = seq
}

// pairWithPrev pairs every listed id with its row in prev: at its old place
// in the listing (seq, see listOrder), else by a lookup in prev. Each id gets
// one row (the first place it is listed: kfake lists every id on every
// broker), and the rows come out in prev's order with the new ids merged in,
// so that sorting the snapshot is only a check. New ids get strings of their
// own: the listing's are views into a response. notListed are prev's rows the
// listing did not have.
func pairWithPrev(prev *model.Snapshot, list listing, seq []int32) (rows []row, notListed []*model.Txn) {
	var (
		news []row
		at   []int32 // per prev row: its place in the listing + 1, 0 when not listed
		pos  []int32 // per prev row: its place in seq
		p    int     // the next place of seq
	)
	if prev != nil {
		at = make([]int32, len(prev.Txns))
		pos = placesOf(seq, len(prev.Txns))
	}
	for k, id := range list.ids {
		j := -1
		if p < len(seq) && seq[p] >= 0 && int(seq[p]) < len(at) && prev.Txns[seq[p]].ID == id {
			j = int(seq[p])
			p++
			for j > 0 && prev.Txns[j-1].ID == id {
				j-- // the first row of a duplicated id is the id's
			}
		} else if prev != nil {
			if i, ok := prev.Pos(id); ok {
				j = i
				if pos[j] >= 0 {
					p = int(pos[j]) + 1 // back in step after an id came or went
				}
			}
		}
		switch {
		case j < 0:
			news = append(news, row{id: id, l: list.ls[k], k: int32(k)})
		case at[j] == 0:
			at[j] = int32(k) + 1
		default:
			severalListed(&list.ls[at[j]-1], list.ls[k])
		}
	}
	rows = make([]row, 0, list.len())
	listedRun := false // the id of the row before was listed
	for j := range at {
		t := &prev.Txns[j]
		dup := j > 0 && prev.Txns[j-1].ID == t.ID
		switch {
		case dup && listedRun:
			// a second row of one id: the first is the id's
		case at[j] > 0:
			k := at[j] - 1
			rows = append(rows, row{id: t.ID, l: list.ls[k], prev: t, k: k})
			listedRun = true
		default:
			listedRun = false
			notListed = append(notListed, t)
		}
	}
	return mergeRows(rows, firstOfEach(news)), notListed
}

// placesOf inverts seq: the place of each of n rows in it, -1 when absent.
func placesOf(seq []int32, n int) []int32 {
	pos := make([]int32, n)
	for i := range pos {
		pos[i] = -1
	}
	for p, j := range seq {
		if j >= 0 && int(j) < n && pos[j] < 0 {
			pos[j] = int32(p)
		}
	}
	return pos
}

// firstOfEach sorts new ids, keeps the first listing of each and gives it a
// string of its own.
func firstOfEach(news []row) []row {
	ids := make([]string, len(news))
	for i := range news {
		ids[i] = news[i].id
	}
	out := make([]row, 0, len(news))
	var own idArena
	if len(news) >= arenaFrom {
		own = make(idArena, 0, bytesOf(ids))
	}
	for _, i := range model.OrderByID(ids) {
		r := news[i]
		if n := len(out); n > 0 && out[n-1].id == r.id {
			severalListed(&out[n-1].l, r.l)
			continue
		}
		r.id = own.clone(r.id)
		out = append(out, r)
	}
	return out
}

// arenaFrom is how many new ids a refresh copies into one block rather than
// one string each: a first load of 500,000 ids is then one allocation for
// the GC instead of 500,000. A block lives as long as any of its ids, so the
// few new ids of a steady refresh get strings of their own.
const arenaFrom = 1000

// idArena copies strings into one block, as long as it has room.
type idArena []byte

func (a *idArena) clone(s string) string {
	if len(*a)+len(s) > cap(*a) || len(s) == 0 {
		return strings.Clone(s)
	}
	start := len(*a)
	*a = append(*a, s...)
	return unsafe.String(&(*a)[start], len(s))
}

func bytesOf(ids []string) int {
	n := 0
	for _, id := range ids {
		n += len(id)
	}
	return n
}

// severalListed notes that a second broker listed the id of first (kfake
// lists every id on every broker): which one coordinates it is not known.
func severalListed(first *listed, again listed) {
	if again.coord != first.coord {
		first.coord = -1
	}
}

// mergeRows merges two runs sorted by id into one: a handful of new ids
// among 500,000 old ones is a linear merge, not a sort of everything.
func mergeRows(old, news []row) []row {
	if len(news) == 0 {
		return old
	}
	if len(old) == 0 {
		return news
	}
	out := make([]row, 0, len(old)+len(news))
	for len(old) > 0 && len(news) > 0 {
		if news[0].id < old[0].id {
			out, news = append(out, news[0]), news[1:]
		} else {
			out, old = append(out, old[0]), old[1:]
		}
	}
	return append(append(out, old...), news...)
}

// orderOf is the listing order of snap: the row of each place of a listing
// of n ids, given the place of each row (-1 for rows not from the listing).
// nil when snap was re-sorted after its rows were placed.
func orderOf(places []int32, n int) []int32 {
	seq := make([]int32, n)
	for i := range seq {
		seq[i] = -1
	}
	for i, k := range places {
		if k >= 0 {
			seq[k] = int32(i)
		}
	}
	return seq
}
