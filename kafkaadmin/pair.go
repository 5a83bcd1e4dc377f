package kafkaadmin

import (
	"iter"
	"strings"
	"sync"
	"unsafe"
	"weak"

	"github.com/txnscope/txnscope/model"
)

// row is one listed id, with its previous row when prev had it.
type row struct {
	id   string
	l    listed
	prev *model.Txn
	k    int32 // its place in the listing
}

// listOrder remembers, for the last snapshot a refresh made, the listing
// that made it: each place's id and row. A broker lists its ids in the same
// order from one refresh to the next (new ones slot in, expired ones drop
// out), so the next refresh pairs each listed id with its old row by
// comparing it with the id at its old place, walking both in order: at
// 500,000 ids, hashing every id, or reaching for its row at random, cost a
// third of a refresh. It holds the snapshot's rows only weakly, and applies
// to no other.
type listOrder struct {
	mu  sync.Mutex
	of  weak.Pointer[model.Txn] // the first row of the snapshot
	n   int                     // its rows
	ids []string                // the listed ids, place by place
	seq []int32                 // the row of each place (-1: none)
}

// take returns the order that made prev, or nothing, and forgets it: the
// refresh that takes it sets the next one, and the two need not be held at
// once.
func (o *listOrder) take(prev *model.Snapshot) (ids []string, seq []int32) {
	o.mu.Lock()
	defer o.mu.Unlock()
	defer func() { o.ids, o.seq, o.n = nil, nil, 0 }()
	if prev == nil || len(prev.Txns) == 0 || len(prev.Txns) != o.n || o.of.Value() != &prev.Txns[0] {
		return nil, nil
	}
	return o.ids, o.seq
}

// set remembers the order of a listing that made txns: places[i] is the
// place of txns[i] in it (-1: not listed).
func (o *listOrder) set(txns []model.Txn, places []int32, listed int) {
	var (
		ids []string
		seq []int32
		of  weak.Pointer[model.Txn]
	)
	if len(txns) > 0 && places != nil {
		ids, seq = make([]string, listed), make([]int32, listed)
		for k := range seq {
			seq[k] = -1
		}
		for i, k := range places {
			if k >= 0 {
				ids[k], seq[k] = txns[i].ID, int32(i)
			}
		}
		of = weak.Make(&txns[0])
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.of, o.n, o.ids, o.seq = of, len(txns), ids, seq
}

// paired is a listing paired with the previous snapshot (pairWithPrev).
type paired struct {
	prev *model.Snapshot
	// got is what the listing says of each prev row; n is its place in the
	// listing + 1, 0 when not listed. Written in listing order, read in
	// prev's: reaching into the listing from each row in prev's order cost
	// a cache miss per id.
	got  []listed
	news []row // the ids prev did not have, sorted
	// first, without a prev, are the listing's places of the rows, sorted
	// (firstSorted), instead of news.
	list  listing
	first []int32
	// notListed are prev's rows the listing did not have.
	notListed []*model.Txn
	n         int // rows
}

// pairWithPrev pairs every listed id with its row in prev: at its old place
// in the listing that made prev (was and seq, see listOrder), else by a
// lookup in prev. Each id gets one row (the first place it is listed: kfake
// lists every id on every broker). New ids get strings of their own: the
// listing's are views into a block as big as the whole response.
func pairWithPrev(prev *model.Snapshot, list listing, was []string, seq []int32) paired {
	out := paired{prev: prev}
	var (
		pos []int32 // per prev row: its place in seq (once a lookup needs it)
		p   int     // the next place of seq
	)
	if prev == nil {
		out.list, out.first = list, firstSorted(list)
		out.n = len(out.first)
		return out
	}
	out.got = make([]listed, len(prev.Txns))
	for k, id := range list.ids {
		j := -1
		switch {
		case p < len(seq) && seq[p] >= 0 && was[p] == id:
			j = int(seq[p])
			p++
		case p+1 < len(seq) && seq[p+1] >= 0 && was[p+1] == id: // the id at p is gone
			j = int(seq[p+1])
			p += 2
		case prev != nil:
			if i, ok := prev.Pos(id); ok {
				j = i
				if pos == nil {
					pos = placesOf(seq, len(prev.Txns))
				}
				if pos[j] >= 0 {
					p = int(pos[j]) + 1 // back in step after an id came or went
				}
			}
		}
		switch {
		case j < 0:
			out.news = append(out.news, row{id: id, l: list.ls[k], k: int32(k)})
		case out.got[j].n == 0:
			out.got[j] = list.ls[k]
			out.got[j].n = int32(k) + 1
		default:
			severalListed(&out.got[j], list.ls[k])
		}
	}
	out.news = firstOfEach(out.news)
	out.n = len(out.news)
	out.olds(func(j int, listed bool) {
		if listed {
			out.n++
		} else {
			out.notListed = append(out.notListed, &prev.Txns[j])
		}
	})
	return out
}

// olds calls fn for each row of prev, saying whether it was listed, but for
// the second rows of an id whose first was listed. Only the rows not listed
// are compared with the row before: the listed ones are the first of their
// id (Pos finds the first), and comparing the neighbours of 500,000 rows,
// scattered in memory, cost as much as pairing them.
func (p *paired) olds(fn func(j int, listed bool)) {
	listedRun := false // the rows before, back to the last of another id, were listed
	for j := range p.got {
		if p.got[j].n > 0 {
			listedRun = true
			fn(j, true)
			continue
		}
		if listedRun && j > 0 && p.prev.Txns[j-1].ID == p.prev.Txns[j].ID {
			continue // a second row of one id: the first is the id's
		}
		listedRun = false
		fn(j, false)
	}
}

// rows are the listed ids in id order: prev's order with the new ids merged
// in, so that sorting the snapshot is only a check.
func (p *paired) rows() iter.Seq[row] {
	return func(yield func(row) bool) {
		for _, k := range p.first {
			if !yield(row{id: p.list.ids[k], l: p.list.ls[k], k: k}) {
				return
			}
		}
		news := p.news
		for j := range p.got {
			l := &p.got[j]
			if l.n == 0 {
				continue
			}
			t := &p.prev.Txns[j]
			for len(news) > 0 && news[0].id < t.ID {
				if !yield(news[0]) {
					return
				}
				news = news[1:]
			}
			r := row{id: t.ID, l: *l, prev: t, k: l.n - 1}
			r.l.n = 0
			if !yield(r) {
				return
			}
		}
		for _, r := range news {
			if !yield(r) {
				return
			}
		}
	}
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
// string of its own: copied in listing order, so that the next refresh,
// walking the listing and the ids of the last one side by side, reads both
// in order.
func firstOfEach(news []row) []row {
	var own idArena
	if len(news) >= arenaFrom {
		n := 0
		for i := range news {
			n += len(news[i].id)
		}
		own = make(idArena, 0, n)
	}
	ids := make([]string, len(news))
	for i := range news { // in listing order
		news[i].id = own.clone(news[i].id)
		ids[i] = news[i].id
	}
	out := make([]row, 0, len(news))
	for _, i := range model.OrderByID(ids) {
		r := news[i]
		if n := len(out); n > 0 && out[n-1].id == r.id {
			severalListed(&out[n-1].l, r.l)
			continue
		}
		out = append(out, r)
	}
	return out
}

// firstSorted is a first listing's order, every id new: the first place
// of each id, sorted by id, its row made from the listing when asked for
// (paired.rows); an id listed again marks its first place (severalListed).
// The ids stay the listing's own (readListing copies them into a block of
// their own). Gathered in listing order, copied into an arena and sorted
// into rows as firstOfEach does, they were 230 MB more of a first
// refresh's peak at 2,000,000 ids.
func firstSorted(list listing) []int32 {
	order := model.OrderByID(list.ids)
	out := make([]int32, 0, len(order))
	for _, k := range order {
		if n := len(out); n > 0 && list.ids[out[n-1]] == list.ids[k] {
			severalListed(&list.ls[out[n-1]], list.ls[k])
			continue
		}
		out = append(out, int32(k))
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

// severalListed notes that a second broker listed the id of first (kfake
// lists every id on every broker): which one coordinates it is not known.
func severalListed(first *listed, again listed) {
	if again.coord != first.coord {
		first.coord = -1
	}
}
