package model

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// When ACLs hide some transactional ids, a producer no visible id owns may
// belong to a hidden one: the pins must say "possibly hanging", never
// HANGING, and never mark it for an abort.
func TestPinsWithHiddenOwners(t *testing.T) {
	const old = 20 * time.Minute // past the 15 minute default max timeout
	tp := tpOf("orders", 0)
	cases := []struct {
		name      string
		part      Partition
		txns      []Txn
		hanging   bool
		maybe     bool
		whyHas    string
		maybeHas  string
		hangingID []string
	}{
		{
			name:    "all ids visible: no owner is hanging (control)",
			part:    part("orders", 0, 120, 100, pprod(7, 0, 100, old)),
			hanging: true, whyHas: "producer 7: no transactional id owns the producer",
		},
		{
			name:  "ids hidden: no visible owner is only possibly hanging",
			part:  hidden(part("orders", 0, 120, 100, pprod(7, 0, 100, old))),
			maybe: true, maybeHas: "producer 7: possibly hanging: owner may be hidden by ACLs",
		},
		{
			name: "ids hidden: the pin rule says possibly too",
			part: hidden(part("orders", 0, 120, 100, pprod(7, 0, 100, -1))),
			// no last timestamp: only the pinned-for-long rule can fire, by txnscope's clock
			maybe: true, maybeHas: "by producer 7, which no visible transaction owns: possibly hanging: owner may be hidden by ACLs",
		},
		{
			name:    "ids hidden: a visible owner that does not list the partition is still hanging",
			part:    hidden(part("orders", 0, 120, 100, pprod(8, 2, 100, old))),
			txns:    []Txn{otxn("job-0-1", Ongoing, 8, 2, tpOf("orders", 1))},
			hanging: true, whyHas: "producer 8: the partition is not in its transaction", hangingID: []string{"job-0-1"},
		},
		{
			name: "ids hidden: a visible owner holding it is not hanging at all",
			part: hidden(part("orders", 0, 120, 100, pprod(8, 2, 100, time.Second))),
			txns: []Txn{otxn("job-0-1", Ongoing, 8, 2, tp)},
		},
		{
			name:    "ids hidden: one real hanging producer and one maybe on the same partition",
			part:    hidden(part("orders", 0, 120, 100, pprod(7, 0, 100, old), pprod(8, 2, 110, old))),
			txns:    []Txn{otxn("job-0-1", Ongoing, 8, 2, tpOf("orders", 1))},
			hanging: true, whyHas: "producer 8: the partition is not in its transaction",
			maybeHas: "producer 7: possibly hanging", hangingID: []string{"job-0-1"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &Snapshot{TakenAt: pinT0.Add(-old), Txns: c.txns, Partitions: []Partition{c.part}}
			s.Sort()
			tr := NewPinTracker()
			tr.Observe(s)
			later := *s
			later.TakenAt = pinT0
			tr.Observe(&later)
			pins := Pins(&later, tr, pinT0)
			if len(pins) != 1 {
				t.Fatalf("%d pins", len(pins))
			}
			p := pins[0]
			if p.Hanging != c.hanging || p.MaybeHanging != c.maybe {
				t.Fatalf("Hanging=%v MaybeHanging=%v, want %v %v (why %q, maybe %q)", p.Hanging, p.MaybeHanging, c.hanging, c.maybe, p.Why, p.Maybe)
			}
			if c.whyHas != "" && !strings.Contains(strings.Join(p.Why, "\n"), c.whyHas) {
				t.Errorf("Why = %q, want %q", p.Why, c.whyHas)
			}
			if c.maybeHas != "" && !strings.Contains(strings.Join(p.Maybe, "\n"), c.maybeHas) {
				t.Errorf("Maybe = %q, want %q", p.Maybe, c.maybeHas)
			}
			if c.maybeHas == "" && len(p.Maybe) > 0 {
				t.Errorf("Maybe = %q, want none", p.Maybe)
			}
			for _, w := range p.Why {
				if strings.Contains(w, string(NoOwner)) && c.part.OwnersHidden {
					t.Errorf("with hidden ids a Why says %q", w)
				}
			}
			var ids []string
			for id := range HangingIDs(&later, pins) {
				ids = append(ids, id)
			}
			slices.Sort(ids)
			if !slices.Equal(ids, c.hangingID) {
				t.Errorf("HangingIDs = %v, want %v", ids, c.hangingID)
			}
		})
	}
}

func TestFindHangingHidden(t *testing.T) {
	now := pinT0
	rows := []ProducerOn{
		{TopicPartition: tpOf("orders", 0), Producer: pprod(7, 0, 100, 20*time.Minute)},
		{TopicPartition: tpOf("orders", 1), Producer: pprod(8, 0, 100, 20*time.Minute)},
		{TopicPartition: tpOf("orders", 2), Producer: pprod(9, 0, 100, 20*time.Minute)},
	}
	gone := Owner{ID: "gone"}
	elsewhere := otxn("job", Ongoing, 9, 0, tpOf("orders", 5))
	owners := map[int64]Owner{8: gone, 9: {ID: "job", Txn: &elsewhere}}
	reasons := func(hs []Hanging) []HangingReason {
		var out []HangingReason
		for _, h := range hs {
			out = append(out, h.Reason)
		}
		return out
	}
	if got := reasons(FindHanging(rows, now, DefaultMaxTxnTimeout, owners)); !slices.Equal(got, []HangingReason{NoOwner, OwnerNotFound, NotInTxn}) {
		t.Errorf("visible: %v", got)
	}
	if got := reasons(FindHangingHidden(rows, now, DefaultMaxTxnTimeout, owners, true)); !slices.Equal(got, []HangingReason{OwnerMaybeHidden, OwnerNotFound, NotInTxn}) {
		t.Errorf("hidden: %v", got)
	}
}

func TestDenied(t *testing.T) {
	for s, want := range map[string]bool{
		"no permission: TOPIC_AUTHORIZATION_FAILED: Not authorized to access topics: [Topic authorization failed.]": true,
		"no permission to read the producer state: TOPIC_AUTHORIZATION_FAILED: x":                                   true,
		"high watermark: NOT_LEADER_OR_FOLLOWER: x":                                                                 false,
		"": false,
	} {
		if got := Denied(s); got != want {
			t.Errorf("Denied(%q) = %v", s, got)
		}
	}
}
