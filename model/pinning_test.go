package model

import (
	"slices"
	"strings"
	"testing"
	"time"
)

var pinT0 = time.Date(2026, 3, 14, 3, 0, 0, 0, time.UTC)

func pprod(pid int64, epoch int16, start int64, lastWrite time.Duration) Producer {
	pr := Producer{ProducerID: pid, ProducerEpoch: epoch, LastSequence: 1, CurrentTxnStartOffset: start}
	if lastWrite >= 0 {
		pr.LastWriteMs = WriteMs(pinT0.Add(-lastWrite))
	}
	return pr
}

func part(topic string, n int32, hwm, lso int64, prs ...Producer) Partition {
	return Partition{TopicPartition: TopicPartition{Topic: topic, Partition: n}, Leader: 1,
		HighWatermark: hwm, LastStableOffset: lso, Producers: prs}
}

func otxn(id string, s State, pid int64, epoch int16, parts ...TopicPartition) Txn {
	return Txn{ID: id, State: s, ProducerID: pid, ProducerEpoch: epoch, TimeoutMs: 60000,
		StartUnixMs: pinT0.Add(-10 * time.Second).UnixMilli(), Partitions: parts, Described: true}
}

func tpOf(topic string, n int32) TopicPartition { return TopicPartition{Topic: topic, Partition: n} }

func TestPins(t *testing.T) {
	const old = 20 * time.Minute // past the 15 minute default max timeout
	tp := tpOf("orders", 0)
	cases := []struct {
		name   string
		parts  []Partition
		txns   []Txn
		maxMs  int64
		now    time.Time
		pinned bool // the partition is in Pins at all

		pinner       int64 // 0: none
		owner        string
		blocking     bool
		hanging      bool
		maybe        bool // MaybeHanging, checked when set
		hangingPIDs  []int64
		whyContains  string
		hangingOwner []string // HangingIDs
	}{
		{
			name:  "an idempotent producer without a transaction is never the pinner",
			parts: []Partition{part("orders", 0, 120, 100, pprod(1, 0, -1, time.Second), pprod(2, 3, 100, time.Second))},
			txns:  []Txn{otxn("job-0-1", Ongoing, 2, 3, tp)},
			now:   pinT0, pinned: true, pinner: 2, owner: "job-0-1", blocking: true,
		},
		{
			name:  "only idempotent producers: no pinner, not hanging while young",
			parts: []Partition{part("orders", 0, 120, 100, pprod(1, 0, -1, time.Second))},
			now:   pinT0, pinned: true,
		},
		{
			name:  "no pinner for longer than the max timeout: hanging by an unknown producer",
			parts: []Partition{part("orders", 0, 120, 100, pprod(1, 0, -1, time.Second))},
			now:   pinT0.Add(old), pinned: true, hanging: true, whyContains: "unknown producer",
		},
		{
			name: "no pinner for longer than the max timeout while a coordinator did not answer: maybe hanging, never hanging",
			parts: []Partition{func() Partition {
				p := part("orders", 0, 120, 100, pprod(1, 0, -1, time.Second))
				p.OwnersHidden = true
				return p
			}()},
			now: pinT0.Add(old), pinned: true, hanging: false, maybe: true,
		},
		{
			name:  "a partition that is not pinned is no pin",
			parts: []Partition{part("orders", 0, 100, 100, pprod(2, 3, -1, time.Second))},
			txns:  []Txn{otxn("job-0-1", CompleteCommit, 2, 3)},
			now:   pinT0,
		},
		{
			name: "several open producers: the one at the LSO pins; an old unowned one further up hangs",
			parts: []Partition{part("orders", 0, 300, 100,
				pprod(2, 3, 100, time.Second), pprod(5, 0, 150, old), pprod(6, 1, 180, time.Second))},
			txns: []Txn{otxn("job-0-1", Ongoing, 2, 3, tp), otxn("job-1-1", Ongoing, 6, 1, tp)},
			now:  pinT0, pinned: true, pinner: 2, owner: "job-0-1", blocking: true,
			hanging: true, hangingPIDs: []int64{5}, whyContains: "producer 5: " + string(NoOwner),
		},
		{
			name:  "the epoch moved on and the transaction no longer lists the partition: hanging",
			parts: []Partition{part("orders", 0, 800, 500, pprod(4003, 4, 500, 47*time.Minute))},
			txns:  []Txn{otxn("job-2-41", Ongoing, 4003, 5, tpOf("orders", 4))},
			now:   pinT0, pinned: true, pinner: 4003, owner: "job-2-41",
			hanging: true, hangingPIDs: []int64{4003}, whyContains: string(NotInTxn),
			hangingOwner: []string{"job-2-41"},
		},
		{
			name:  "the epoch moved on but its transaction lists the partition: that marker ends it",
			parts: []Partition{part("orders", 0, 800, 500, pprod(4003, 4, 500, 47*time.Minute))},
			txns:  []Txn{otxn("job-2-41", Ongoing, 4003, 5, tp)},
			now:   pinT0, pinned: true, pinner: 4003, owner: "job-2-41", blocking: true,
		},
		{
			name:  "ending under transaction version 2: the coordinator's epoch is one up, still blocking",
			parts: []Partition{part("orders", 0, 120, 100, pprod(2, 3, 100, time.Second))},
			txns:  []Txn{otxn("job-0-1", PrepareCommit, 2, 4, tp)},
			now:   pinT0, pinned: true, pinner: 2, owner: "job-0-1", blocking: true,
		},
		{
			name:  "owner idle, pinned longer than the broker's max timeout: hanging by both rules",
			parts: []Partition{part("orders", 0, 2, 0, pprod(7, 0, 0, 2*time.Minute))},
			txns:  []Txn{otxn("lost", Empty, 7, 0)},
			maxMs: 60000, now: pinT0, pinned: true, pinner: 7, owner: "lost",
			hanging: true, hangingPIDs: []int64{7}, whyContains: "longer than the 1m0s max transaction timeout",
			hangingOwner: []string{"lost"},
		},
		{
			name:  "owner idle but the pin is young: an orphan, not hanging yet",
			parts: []Partition{part("orders", 0, 2, 0, pprod(7, 0, 0, 2*time.Minute))},
			txns:  []Txn{otxn("lost", Empty, 7, 0)},
			now:   pinT0, pinned: true, pinner: 7, owner: "lost",
		},
		{
			name:  "an owner not described yet is not judged",
			parts: []Partition{part("orders", 0, 120, 100, pprod(2, 3, 100, old))},
			txns:  []Txn{{ID: "secret", State: Ongoing, ProducerID: 2, Err: "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"}},
			now:   pinT0, pinned: true, pinner: 2, owner: "secret", blocking: true,
		},
		{
			name:  "the owner's row is last known (its coordinator did not answer): neither rule judges it",
			parts: []Partition{part("orders", 0, 120, 100, pprod(2, 3, 100, old))},
			txns: []Txn{func() Txn {
				t := otxn("job-0-1", CompleteCommit, 2, 3)
				t.Err = "coordinator 3 did not answer, showing the last known state: no answer within the timeout"
				return t
			}()},
			now: pinT0, pinned: true, pinner: 2, owner: "job-0-1", maybe: true,
		},
		{
			name: "a read error without producers is not called hanging",
			parts: []Partition{{TopicPartition: tp, Leader: 1, HighWatermark: 120, LastStableOffset: 100,
				Err: "producers: NOT_LEADER_OR_FOLLOWER"}},
			now: pinT0.Add(old), pinned: true,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &Snapshot{TakenAt: pinT0, Partitions: c.parts, Txns: c.txns, BrokerMaxTimeoutMs: c.maxMs}
			s.Sort()
			pins := Pins(s, nil, c.now)
			if !c.pinned {
				if len(pins) != 0 {
					t.Fatalf("pins %+v, want none", pins)
				}
				return
			}
			if len(pins) != 1 {
				t.Fatalf("%d pins, want 1", len(pins))
			}
			p := pins[0]
			if got := int64(0); p.HasPinner {
				got = p.Pinner.ProducerID
				if got != c.pinner {
					t.Errorf("pinner %d, want %d", got, c.pinner)
				}
			} else if c.pinner != 0 {
				t.Errorf("no pinner, want %d", c.pinner)
			}
			if p.HasOwner != (c.owner != "") || p.Owner.ID != c.owner {
				t.Errorf("owner %q (%v), want %q", p.Owner.ID, p.HasOwner, c.owner)
			}
			if p.Blocking != c.blocking {
				t.Errorf("blocking %v, want %v", p.Blocking, c.blocking)
			}
			if p.Hanging != c.hanging {
				t.Errorf("hanging %v (%q), want %v", p.Hanging, p.Why, c.hanging)
			}
			if c.maybe && !p.MaybeHanging {
				t.Errorf("not maybe hanging (%q)", p.Maybe)
			}
			if c.hangingPIDs != nil && !slices.Equal(p.HangingPIDs, c.hangingPIDs) {
				t.Errorf("hanging producers %v, want %v", p.HangingPIDs, c.hangingPIDs)
			}
			if c.whyContains != "" && !strings.Contains(strings.Join(p.Why, " | "), c.whyContains) {
				t.Errorf("why %q, want it to mention %q", p.Why, c.whyContains)
			}
			ids := HangingIDs(s, pins)
			var got []string
			for id := range ids {
				got = append(got, id)
			}
			slices.Sort(got)
			if !slices.Equal(got, c.hangingOwner) {
				t.Errorf("hanging ids %v, want %v", got, c.hangingOwner)
			}
		})
	}
}

func TestPinsStuckGroups(t *testing.T) {
	tp := tpOf("orders", 0)
	s := &Snapshot{TakenAt: pinT0,
		Partitions: []Partition{part("orders", 0, 120, 100, pprod(2, 3, 100, time.Second))},
		Txns:       []Txn{otxn("job-0-1", Ongoing, 2, 3, tp)},
		GroupCommits: []GroupCommit{
			{Group: "at-lso", State: "Stable", TopicPartition: tp, Offset: 100},
			{Group: "behind-markers", State: "Stable", TopicPartition: tp, Offset: 100 - StuckSlack},
			{Group: "share-at-lso", State: "Stable", Type: GroupShare, TopicPartition: tp, Offset: 100},
			{Group: "share-behind", State: "Stable", Type: GroupShare, TopicPartition: tp, Offset: 99},
			{Group: "lagging", State: "Stable", TopicPartition: tp, Offset: 100 - StuckSlack - 1},
			{Group: "read-uncommitted", State: "Stable", TopicPartition: tp, Offset: 115},
			{Group: "never-committed", State: "Empty", TopicPartition: tp, Offset: -1},
			{Group: "other-partition", State: "Stable", TopicPartition: tpOf("orders", 1), Offset: 100},
		},
	}
	s.Sort()
	SortGroupCommits(s.GroupCommits)
	pins := Pins(s, nil, pinT0)
	want := []StuckGroup{
		{Group: "at-lso", State: "Stable", Committed: 100, LagLSO: 0, LagHWM: 20},
		{Group: "behind-markers", State: "Stable", Committed: 90, LagLSO: 10, LagHWM: 30},
		{Group: "share-at-lso", State: "Stable", Type: GroupShare, Committed: 100, LagLSO: 0, LagHWM: 20},
	}
	if len(pins) != 1 || !slices.Equal(pins[0].Stuck, want) {
		t.Fatalf("stuck %+v, want %+v", pins, want)
	}
	// A share group's start offset stands for its commit; its type goes with it.
	blocked := BlockedGroups(pins)
	if i := slices.IndexFunc(blocked, func(b BlockedGroup) bool { return b.Group == "share-at-lso" }); i < 0 || blocked[i].Type != GroupShare {
		t.Errorf("blocked %+v: want share-at-lso typed share", blocked)
	}
}

func TestPinsSortedByPinnedDuration(t *testing.T) {
	tr := NewPinTracker()
	s1 := &Snapshot{TakenAt: pinT0, Partitions: []Partition{part("a", 0, 10, 5), part("b", 0, 10, 9)}}
	s1.Sort()
	tr.Observe(s1)
	s2 := &Snapshot{TakenAt: pinT0.Add(time.Minute), Partitions: []Partition{
		part("a", 0, 10, 5), part("b", 0, 10, 9), part("c", 0, 1000, 1)}}
	s2.Sort()
	tr.Observe(s2)
	pins := Pins(s2, tr, pinT0.Add(time.Minute))
	var order []string
	for _, p := range pins {
		order = append(order, p.Topic)
	}
	// a and b since the start (a holds more back), c is new despite its size.
	if !slices.Equal(order, []string{"a", "b", "c"}) {
		t.Fatalf("order %v, want [a b c]", order)
	}
	if !pins[0].AtLeast || pins[0].PinnedFor(pinT0.Add(time.Minute)) != time.Minute {
		t.Errorf("a: since %v at least %v", pins[0].Since, pins[0].AtLeast)
	}
	if pins[2].AtLeast || pins[2].PinnedFor(pinT0.Add(time.Minute)) != 0 {
		t.Errorf("c: since %v at least %v", pins[2].Since, pins[2].AtLeast)
	}
}

func TestPinTracker(t *testing.T) {
	tp := tpOf("orders", 0)
	snap := func(at time.Duration, parts ...Partition) *Snapshot {
		s := &Snapshot{TakenAt: pinT0.Add(at), Partitions: parts}
		s.Sort()
		return s
	}
	unread := Partition{TopicPartition: tp, HighWatermark: -1, LastStableOffset: -1, Err: "leader unavailable"}
	steps := []struct {
		snap    *Snapshot
		lso     int64
		since   time.Duration
		atLeast bool
		known   bool
	}{
		{snap(0, part("orders", 0, 10, 5)), 5, 0, true, true},
		{snap(2*time.Second, part("orders", 0, 12, 5)), 5, 0, true, true},                // same LSO: same pin
		{snap(4*time.Second, unread), 5, 0, true, true},                                  // a failed read keeps it
		{snap(6*time.Second, part("orders", 0, 14, 8)), 8, 6 * time.Second, false, true}, // moved: a new pin
		{snap(8*time.Second, part("orders", 0, 14, 14)), 14, 0, false, false},            // released
		{snap(10*time.Second, part("orders", 0, 20, 14)), 14, 10 * time.Second, false, true},
		{snap(12 * time.Second), 14, 0, false, false}, // gone from the snapshot: not pinned any more
	}
	tr := NewPinTracker()
	for i, st := range steps {
		tr.Observe(st.snap)
		at, atLeast, ok := tr.Since(tp, st.lso)
		if ok != st.known {
			t.Fatalf("step %d: known %v, want %v", i, ok, st.known)
		}
		if !ok {
			continue
		}
		if !at.Equal(pinT0.Add(st.since)) || atLeast != st.atLeast {
			t.Errorf("step %d: since %v (at least %v), want +%v (%v)", i, at.Sub(pinT0), atLeast, st.since, st.atLeast)
		}
	}
}

func TestBlockedGroups(t *testing.T) {
	a, b := tpOf("orders", 0), tpOf("orders", 1)
	pins := []Pin{
		{Partition: part("orders", 0, 120, 100), Since: pinT0.Add(-time.Hour), Hanging: true,
			Stuck: []StuckGroup{{Group: "billing", State: "Stable", LagLSO: 0, LagHWM: 20}}},
		{Partition: part("orders", 1, 50, 40), Since: pinT0.Add(-time.Minute), HasOwner: true, Owner: Txn{ID: "job-1-1"},
			Stuck: []StuckGroup{{Group: "billing", LagLSO: 2, LagHWM: 12}, {Group: "analytics", State: "Stable", LagHWM: 10}}},
	}
	got := BlockedGroups(pins)
	if len(got) != 2 {
		t.Fatalf("%d groups, want 2: %+v", len(got), got)
	}
	billing, analytics := got[0], got[1]
	if billing.Group != "billing" || !slices.Equal(billing.Partitions, []TopicPartition{a, b}) ||
		billing.LagLSO != 2 || billing.LagHWM != 32 || !billing.Hanging || !billing.Since.Equal(pinT0.Add(-time.Hour)) ||
		!slices.Equal(billing.Blockers, []string{"job-1-1"}) {
		t.Errorf("billing %+v", billing)
	}
	if analytics.Group != "analytics" || analytics.Hanging || !slices.Equal(analytics.Partitions, []TopicPartition{b}) {
		t.Errorf("analytics %+v", analytics)
	}
}
