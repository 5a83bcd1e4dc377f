package kafkaadmin_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// TestConfirmLogOwners: the rows of a log read behind its coordinators (seen
// in a rolling restart: an id Empty in the log while its coordinator had it
// Ongoing on the partition) are not judged on. An id whose row leaves a
// pinning producer without its transaction is described afresh and the
// coordinator's answer replaces the row: the partition is pinned by a live
// transaction, not hanging. An id the coordinator no longer knows holds
// judgement on the partition (H?), never H!.
func TestConfirmLogOwners(t *testing.T) {
	_, boot := kafkatest.NewCluster(t)
	kafkatest.OpenTxn(t, boot, "live-0-1", "orders", time.Minute)
	kafkatest.OpenTxn(t, boot, "other-0-1", "payments", time.Minute)
	a := newAdmin(t, boot)
	truth := eventually(t, a, nil, 10*time.Second, func(s *model.Snapshot) bool {
		for _, tp := range []model.TopicPartition{{Topic: "orders"}, {Topic: "payments"}} {
			if p, ok := s.Partition(tp); !ok || !p.Pinned() || len(p.Producers) == 0 {
				return false
			}
		}
		return true
	})
	live := txnOf(t, truth, "live-0-1")

	// What a stale log shows: live-0-1 Empty with no partitions, and
	// other-0-1's producer owned by an id that has expired since.
	stale := *truth
	stale.Txns = slices.Clone(truth.Txns)
	for i := range stale.Txns {
		switch stale.Txns[i].ID {
		case "live-0-1":
			stale.Txns[i].State, stale.Txns[i].Partitions, stale.Txns[i].StartUnixMs = model.Empty, nil, 0
		case "other-0-1":
			stale.Txns[i].ID, stale.Txns[i].State, stale.Txns[i].Partitions = "expired-0-1", model.Empty, nil
		}
	}
	stale.Sort()
	// Judged as it stands, both partitions would be hanging past a short maximum.
	later := truth.TakenAt.Add(time.Hour)
	stale.BrokerMaxTimeoutMs = 1000
	hangingOn := func(s *model.Snapshot) (hanging, maybe []string) {
		for _, p := range model.Pins(s, nil, later) {
			if p.Hanging {
				hanging = append(hanging, p.Topic)
			}
			if p.MaybeHanging {
				maybe = append(maybe, p.Topic)
			}
		}
		return
	}
	if h, _ := hangingOn(&stale); len(h) != 2 {
		t.Fatalf("the stale rows should read as two hanging partitions, got %v", h)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	kafkaadmin.ConfirmLogOwners(a, ctx, &stale)
	got := txnOf(t, &stale, "live-0-1")
	if got.State != model.Ongoing || !slices.Equal(got.Partitions, live.Partitions) || got.ProducerEpoch != live.ProducerEpoch {
		t.Errorf("live-0-1 after the check: %+v, want the coordinator's %+v", got, live)
	}
	hanging, maybe := hangingOn(&stale)
	if len(hanging) != 0 || !slices.Equal(maybe, []string{"payments"}) {
		t.Errorf("hanging %v, maybe %v: want none hanging, payments held as maybe", hanging, maybe)
		for _, p := range model.Pins(&stale, nil, later) {
			t.Logf("%s: why %q maybe %q owner %v %+v hidden %v", p.Topic, p.Why, p.Maybe, p.HasOwner, p.Owner, p.OwnersHidden)
		}
	}
}
