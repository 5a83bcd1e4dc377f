package kafkaadmin

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/model"
)

func TestNeedsDescribe(t *testing.T) {
	idle := &model.Txn{ID: "a", State: model.Empty, ProducerID: 7, Described: true}
	complete := &model.Txn{ID: "a", State: model.CompleteCommit, ProducerID: 7, Described: true}
	listedOnly := &model.Txn{ID: "a", State: model.Empty, ProducerID: 7}
	pending := &model.Txn{ID: "a", State: model.CompleteCommit, ProducerID: 7, Pending: true}
	for _, tc := range []struct {
		name string
		l    listed
		prev *model.Txn
		want bool
	}{
		{"new id", listed{state: model.Empty, pid: 7}, nil, true},
		{"open", listed{state: model.Ongoing, pid: 7}, idle, true},
		{"preparing", listed{state: model.PrepareCommit, pid: 7}, idle, true},
		{"fencing", listed{state: model.PrepareEpochFence, pid: 7}, idle, true},
		{"idle, unchanged", listed{state: model.Empty, pid: 7}, idle, false},
		{"complete, unchanged", listed{state: model.CompleteCommit, pid: 7}, complete, false},
		{"state changed", listed{state: model.CompleteAbort, pid: 7}, complete, true},
		{"producer id changed", listed{state: model.Empty, pid: 8}, idle, true},
		{"never described", listed{state: model.Empty, pid: 7}, listedOnly, true},
	} {
		if got := needsDescribe(tc.l, tc.prev, false); got != tc.want {
			t.Errorf("%s: needsDescribe = %v, want %v", tc.name, got, tc.want)
		}
	}
	// A progressive load's pending row waits for its batch (Poll) unless it
	// changed; Refresh, which must describe everything, takes it.
	for _, tc := range []struct {
		name string
		l    listed
		all  bool
		want bool
	}{
		{"pending, unchanged, Poll", listed{state: model.CompleteCommit, pid: 7}, false, false},
		{"pending, unchanged, Refresh", listed{state: model.CompleteCommit, pid: 7}, true, true},
		{"pending, state changed", listed{state: model.CompleteAbort, pid: 7}, false, true},
		{"pending, producer changed", listed{state: model.CompleteCommit, pid: 8}, false, true},
		{"pending, now open", listed{state: model.Ongoing, pid: 7}, false, true},
	} {
		if got := needsDescribe(tc.l, pending, tc.all); got != tc.want {
			t.Errorf("%s: needsDescribe = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestApplyOutcomes(t *testing.T) {
	ends := []ending{{id: "a", epoch: 3}, {id: "b", epoch: 3}, {id: "c", epoch: 3}}
	outcomes := map[string]model.State{"a": model.CompleteCommit, "b": model.CompleteAbort, "c": model.CompleteAbort}
	for _, tc := range []struct {
		name   string
		epochs [3]int16
		want   [3]model.State
	}{
		{"no bumps", [3]int16{3, 3, 3}, [3]model.State{model.CompleteCommit, model.CompleteAbort, model.CompleteAbort}},
		// A marker read is evidence whatever the epoch: model.Diff tells a
		// fence or a timeout from the bump.
		{"bumped", [3]int16{4, 4, 3}, [3]model.State{model.CompleteCommit, model.CompleteAbort, model.CompleteAbort}},
	} {
		snap := &model.Snapshot{Txns: []model.Txn{
			{ID: "a", ProducerEpoch: tc.epochs[0]}, {ID: "b", ProducerEpoch: tc.epochs[1]}, {ID: "c", ProducerEpoch: tc.epochs[2]},
		}}
		applyOutcomes(snap, ends, outcomes)
		for i, tx := range snap.Txns {
			if tx.Outcome() != tc.want[i] {
				t.Errorf("%s: %s outcome %q, want %q", tc.name, tx.ID, tx.Outcome(), tc.want[i])
			}
		}
	}
}

func TestWatched(t *testing.T) {
	tp := func(p int32) model.TopicPartition { return model.TopicPartition{Topic: "t", Partition: p} }
	prev := &model.Snapshot{Partitions: []model.Partition{
		{TopicPartition: tp(0), HighWatermark: 10, LastStableOffset: 4}, // pinned: stays watched
		{TopicPartition: tp(1), HighWatermark: 10, LastStableOffset: 10},
	}}
	txns := []model.Txn{
		{ID: "open", State: model.Ongoing, Partitions: []model.TopicPartition{tp(2), tp(3)}},
		{ID: "idle", State: model.CompleteCommit, Partitions: []model.TopicPartition{tp(5)}},
	}
	got := watched(prev, txns, []model.TopicPartition{tp(7), tp(2)})
	want := []model.TopicPartition{tp(0), tp(2), tp(3), tp(7)}
	if len(got) != len(want) {
		t.Fatalf("watched = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("watched = %v, want %v", got, want)
		}
	}
}

func TestUnlistedKeepsIDsOfSilentCoordinators(t *testing.T) {
	prev := &model.Snapshot{Txns: []model.Txn{
		{ID: "on-1", Coordinator: 1, State: model.Ongoing},
		{ID: "on-2", Coordinator: 2, State: model.Ongoing},
		{ID: "gone", Coordinator: 1, State: model.Empty},
	}}
	list := map[string]listed{"on-1": {state: model.Ongoing, coord: 1}}
	got := unlisted(notListedOf(prev, list), map[int32]error{2: errors.New("connection refused")})
	if len(got) != 1 || got[0].ID != "on-2" || !strings.Contains(got[0].Err, "coordinator 2 did not answer") {
		t.Fatalf("unlisted = %+v", got)
	}
	if got := unlisted(notListedOf(prev, list), nil); got != nil {
		t.Fatalf("every coordinator answered, yet %+v", got)
	}
}

func notListedOf(prev *model.Snapshot, list map[string]listed) []*model.Txn {
	var l listing
	for id, x := range list {
		l.ids, l.ls = append(l.ids, id), append(l.ls, x)
	}
	return pairWithPrev(prev, l, nil, nil).notListed
}

// pairWithPrev gives what a lookup of every listed id in prev gives: each
// listed id once (its first listing), with prev's row when prev had it,
// prev's unlisted rows apart, and the rows in id order, on random listings in
// random orders against random previous snapshots (new ids, vanished ids, a
// duplicate row in prev, an id listed twice), whatever order it is told the
// last listing had: the true one, one from another snapshot, or garbage.
func TestPairWithPrevMatchesLookups(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 600 {
		prev := &model.Snapshot{}
		for i := range rng.IntN(40) {
			prev.Txns = append(prev.Txns, model.Txn{ID: fmt.Sprintf("id-%03d", rng.IntN(60)), ProducerID: int64(i)})
		}
		prev.Sort()
		var list listing
		first := map[string]listed{}
		for range rng.IntN(50) {
			id := fmt.Sprintf("id-%03d", rng.IntN(60))
			l := listed{pid: rng.Int64N(5), coord: int32(len(list.ids))}
			list.ids, list.ls = append(list.ids, id), append(list.ls, l)
			if f, dup := first[id]; !dup {
				first[id] = l
			} else {
				f.coord = -1 // listed by two brokers: which one coordinates is unknown
				first[id] = f
			}
		}
		// The order that made prev, as listOrder gives it: the listing's
		// own (some places not listed), or another one.
		var was []string
		var seq []int32
		switch round % 3 {
		case 1:
			for _, id := range list.ids {
				i, ok := prev.Pos(id)
				if !ok || rng.IntN(4) == 0 {
					was, seq = append(was, ""), append(seq, -1)
					continue
				}
				was, seq = append(was, id), append(seq, int32(i))
			}
		case 2:
			for _, i := range rng.Perm(len(prev.Txns)) {
				if i > 0 && prev.Txns[i-1].ID == prev.Txns[i].ID {
					continue // a refresh gives no order to a snapshot with an id twice
				}
				was, seq = append(was, prev.Txns[i].ID), append(seq, int32(i))
			}
		}
		if round%4 == 3 {
			prev, was, seq = nil, nil, nil // a first listing (sortedNews)
		}
		paired := pairWithPrev(prev, list, was, seq)
		rows, notListed := slices.Collect(paired.rows()), paired.notListed
		if paired.n != len(rows) {
			t.Fatalf("round %d: %d rows counted, %d made", round, paired.n, len(rows))
		}
		if prev == nil {
			prev = &model.Snapshot{} // has nothing, as no previous snapshot
		}
		if len(rows) != len(first) {
			t.Fatalf("round %d: %d rows for %d listed ids", round, len(rows), len(first))
		}
		for i, r := range rows {
			if i > 0 && rows[i-1].id >= r.id {
				t.Fatalf("round %d: rows out of order at %d: %q then %q", round, i, rows[i-1].id, r.id)
			}
			if r.l != first[r.id] || list.ids[r.k] != r.id {
				t.Fatalf("round %d: %q paired with the wrong listing", round, r.id)
			}
			want, had := prev.Txn(r.id)
			if had != (r.prev != nil) || (had && r.prev.ProducerID != want.ProducerID) {
				t.Fatalf("round %d: %q paired with prev %+v, want %+v (%v)", round, r.id, r.prev, want, had)
			}
		}
		n := 0
		for _, p := range prev.Txns {
			if _, ok := first[p.ID]; !ok {
				if notListed[n].ID != p.ID {
					t.Fatalf("round %d: not listed %q, want %q", round, notListed[n].ID, p.ID)
				}
				n++
			}
		}
		if n != len(notListed) {
			t.Fatalf("round %d: %d not listed, want %d", round, len(notListed), n)
		}
	}
}

// A listing in the order of the last one pairs every id at its old place,
// without a lookup: the right rows even in a snapshot whose lookups find
// nothing; one new id in the middle and one gone put it out of step only
// there. The order applies to the snapshot it made, no other.
func TestPairWithPrevFollowsTheListingOrder(t *testing.T) {
	places := []string{"m", "c", "x", "a", "q"}
	prev := &model.Snapshot{}
	for _, id := range []string{"a", "c", "m", "q", "x"} {
		prev.Txns = append(prev.Txns, model.Txn{ID: id, ProducerID: 7})
	}
	var o listOrder
	o.set(prev.Txns, []int32{3, 1, 0, 4, 2}, len(places))
	was, seq := o.take(prev)
	if len(seq) != len(places) || was[2] != "x" || seq[2] != 4 {
		t.Fatalf("no order for the snapshot it made: %v %v", was, seq)
	}
	if w, s := o.take(prev); w != nil || s != nil {
		t.Fatalf("an order taken twice: %v", s)
	}
	o.set(prev.Txns, []int32{3, 1, 0, 4, 2}, len(places))
	if w, s := o.take(&model.Snapshot{Txns: slices.Clone(prev.Txns)}); w != nil || s != nil {
		t.Fatalf("an order for a copy: %v", s)
	}
	// Rows whose ids no lookup finds (out of order, no index): only the
	// order can pair them.
	prev.Txns[0].ID, prev.Txns[4].ID = "x", "a"
	seq[2], seq[3] = 0, 4
	next := listing{ids: []string{"m", "b", "x", "a", "q"}, ls: make([]listed, 5)}
	paired := pairWithPrev(prev, next, was, seq)
	got, notListed := slices.Collect(paired.rows()), paired.notListed
	var ids []string
	for _, r := range got {
		ids = append(ids, r.id)
		if (r.prev == nil) != (r.id == "b") || (r.prev != nil && r.prev.ID != r.id) {
			t.Fatalf("%q paired with %+v", r.id, r.prev)
		}
	}
	if len(ids) != 5 || len(notListed) != 1 || notListed[0].ID != "c" {
		t.Fatalf("rows %v, not listed %v", ids, notListed)
	}
}

// The partitions read while the ids were listed serve when they include
// every partition now watched; the rows kept are those a scan of the watched
// ones would give: watched, or pinned.
func TestEarlyScanServesWhatItRead(t *testing.T) {
	tp := func(topic string, p int32) model.TopicPartition {
		return model.TopicPartition{Topic: topic, Partition: p}
	}
	for _, tc := range []struct {
		read, watch []model.TopicPartition
		want        bool
	}{
		{nil, nil, true},
		{[]model.TopicPartition{tp("a", 0), tp("a", 2), tp("b", 1)}, []model.TopicPartition{tp("a", 2), tp("b", 1)}, true},
		{[]model.TopicPartition{tp("a", 0), tp("a", 2)}, []model.TopicPartition{tp("a", 1)}, false},
		{[]model.TopicPartition{tp("a", 0)}, []model.TopicPartition{tp("a", 0), tp("b", 0)}, false},
		{nil, []model.TopicPartition{tp("a", 0)}, false},
	} {
		if got := covers(tc.read, tc.watch); got != tc.want {
			t.Errorf("covers(%v, %v) = %v, want %v", tc.read, tc.watch, got, tc.want)
		}
	}
	parts := []model.Partition{
		{TopicPartition: tp("a", 0), HighWatermark: 9, LastStableOffset: 9}, // watched before, not now
		{TopicPartition: tp("a", 1), HighWatermark: 9, LastStableOffset: 3}, // pinned
		{TopicPartition: tp("b", 0), HighWatermark: 9, LastStableOffset: 9}, // watched now
	}
	got := stillShown(parts, []model.TopicPartition{tp("b", 0), tp("c", 0)})
	if len(got) != 2 || got[0].TopicPartition != tp("a", 1) || got[1].TopicPartition != tp("b", 0) {
		t.Fatalf("stillShown = %+v", got)
	}
}
