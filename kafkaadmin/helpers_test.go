package kafkaadmin_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// kfake's own cluster loop may still be finishing a slept request of a
// fault test when the run ends: that goroutine is the fake's, not ours.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/twmb/franz-go/pkg/kfake.(*Cluster).run"))
}

func newAdmin(t testing.TB, bootstrap []string) *kafkaadmin.Client {
	t.Helper()
	a, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: bootstrap, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(a.Close)
	return a
}

func refresh(t testing.TB, a *kafkaadmin.Client, prev *model.Snapshot) *model.Snapshot {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := a.Refresh(ctx, prev)
	if err != nil {
		t.Fatalf("Refresh: %v", err)
	}
	return s
}

func txnOf(t testing.TB, s *model.Snapshot, id string) model.Txn {
	t.Helper()
	tx, ok := s.Txn(id)
	if !ok {
		t.Fatalf("%s not in snapshot (%d ids)", id, len(s.Txns))
	}
	return tx
}

func partOf(t testing.TB, s *model.Snapshot, topic string, p int32) model.Partition {
	t.Helper()
	part, ok := s.Partition(model.TopicPartition{Topic: topic, Partition: p})
	if !ok {
		t.Fatalf("%s-%d not in snapshot (have %v)", topic, p, s.Partitions)
	}
	return part
}

// kinds lists the events Diff reports for one id.
func kinds(prev, next *model.Snapshot, id string) []model.EventKind {
	var out []model.EventKind
	for _, e := range model.Diff(prev, next) {
		if e.ID == id {
			out = append(out, e.Kind)
		}
	}
	return out
}

func wantKind(t testing.TB, prev, next *model.Snapshot, id string, k model.EventKind) {
	t.Helper()
	if got := kinds(prev, next, id); !slices.Contains(got, k) {
		t.Fatalf("Diff for %s = %v, want %q among them", id, got, k)
	}
}

// eventually re-reads until ok accepts a snapshot (the coordinator's timeout
// scan runs on its own clock).
func eventually(t testing.TB, a *kafkaadmin.Client, prev *model.Snapshot, within time.Duration, ok func(*model.Snapshot) bool) *model.Snapshot {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		s := refresh(t, a, prev)
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s", within)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
