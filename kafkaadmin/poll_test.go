package kafkaadmin_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/testutil"
	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// describes records the ids of every DescribeTransactions from now on (the
// ACL probe's aside) and holds each request until release is closed.
type describes struct {
	mu      sync.Mutex
	ids     []string
	release chan struct{}
	once    sync.Once
}

func watchDescribes(t *testing.T, c *kfake.Cluster, hold bool) *describes {
	d := &describes{release: make(chan struct{})}
	if !hold {
		d.open()
	}
	t.Cleanup(d.open) // a held request must not outlive the test
	c.ControlKey(int16(kmsg.DescribeTransactions), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		var mine []string
		for _, id := range req.(*kmsg.DescribeTransactionsRequest).TransactionalIDs {
			if !strings.HasPrefix(id, "txnscope-acl-probe-") {
				mine = append(mine, id)
			}
		}
		if len(mine) == 0 {
			return nil, nil, false
		}
		d.mu.Lock()
		d.ids = append(d.ids, mine...)
		d.mu.Unlock()
		c.SleepControl(func() { <-d.release })
		return nil, nil, false
	})
	return d
}

func (d *describes) open() { d.once.Do(func() { close(d.release) }) }

func (d *describes) asked() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.ids)
}

func (d *describes) reset() {
	d.mu.Lock()
	d.ids = nil
	d.mu.Unlock()
}

// progressive describes s's pending rows batch by batch, as the TUI does.
func progressive(t *testing.T, a *kafkaadmin.Client, s *model.Snapshot, batch int) *model.Snapshot {
	t.Helper()
	for model.PendingCount(s) > 0 {
		before := model.PendingCount(s)
		d, err := a.Describe(context.Background(), model.NextPending(s, nil, batch))
		if err != nil {
			t.Fatalf("Describe: %v", err)
		}
		s, _ = model.Fill(s, d)
		if model.PendingCount(s) >= before {
			t.Fatalf("a batch described nothing (%d pending)", before)
		}
	}
	return s
}

func someIDs(prefix string, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%d-%d", prefix, i%7, i)
	}
	return ids
}

// The first poll lists every id before a single DescribeTransactions is
// answered; describing the rows it left pending, batch by batch, gives the
// very rows a full Refresh gives.
func TestFirstPollListsEveryIDBeforeAnyDescribe(t *testing.T) {
	t.Parallel()
	c, boot := kafkatest.NewCluster(t)
	kafkatest.InitIDs(t, boot, time.Minute, someIDs("idle", 300)...)
	kafkatest.OpenTxn(t, boot, "open-0-1", "orders", 10*time.Minute)
	kafkatest.OpenTxn(t, boot, "open-1-1", "orders", 10*time.Minute)
	held := watchDescribes(t, c, true)
	a := newAdmin(t, boot)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	first, err := a.Poll(ctx, nil)
	if err != nil {
		t.Fatalf("Poll: %v", err)
	}
	if n := len(held.asked()); n != 0 {
		t.Fatalf("the first poll described %d ids", n)
	}
	if len(first.Txns) != 302 || model.PendingCount(first) != 302 {
		t.Fatalf("first poll: %d ids, %d pending, want 302 listed and pending", len(first.Txns), model.PendingCount(first))
	}
	open := txnOf(t, first, "open-1-1")
	if open.State != model.Ongoing || open.ProducerID < 0 || open.Described || open.ProducerEpoch != 0 || open.HasStart() {
		t.Errorf("a pending row should carry the listing only: %+v", open)
	}

	held.open()
	loaded := progressive(t, a, first, 64)
	full := refresh(t, a, nil)
	if !reflect.DeepEqual(loaded.Txns, full.Txns) {
		for i := range min(len(loaded.Txns), len(full.Txns)) {
			if !reflect.DeepEqual(loaded.Txns[i], full.Txns[i]) {
				t.Fatalf("row %d after the progressive load\n%+v\nfull Refresh\n%+v", i, loaded.Txns[i], full.Txns[i])
			}
		}
		t.Fatalf("%d rows after the progressive load, %d from a full Refresh", len(loaded.Txns), len(full.Txns))
	}
}

// A steady poll describes what changed and nothing else: every open id, and
// at most its budget of new ones; the rest stays pending for the batches,
// and no event comes from a row that is only listed.
func TestPollDescribesWhatChangedWithinItsBudget(t *testing.T) {
	t.Parallel()
	c, boot := kafkatest.NewCluster(t)
	kafkatest.InitIDs(t, boot, time.Minute, someIDs("idle", 100)...)
	kafkatest.OpenTxn(t, boot, "open-0-1", "orders", 10*time.Minute)
	seen := watchDescribes(t, c, false)
	a := newAdmin(t, boot)
	kafkaadmin.SetPollBudget(a, 5)
	ctx := context.Background()

	first, err := a.Poll(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	prev := progressive(t, a, first, 1000)
	seen.reset()
	next, err := a.Poll(ctx, prev)
	if err != nil {
		t.Fatal(err)
	}
	if got := seen.asked(); !slices.Equal(got, []string{"open-0-1"}) {
		t.Errorf("a steady poll described %v, want only the open id", got)
	}
	if evs := model.Diff(prev, next); len(evs) != 0 {
		t.Errorf("nothing happened, events %+v", evs)
	}

	kafkatest.InitIDs(t, boot, time.Minute, someIDs("new", 10)...)
	seen.reset()
	prev = next
	next, err = a.Poll(ctx, prev)
	if err != nil {
		t.Fatal(err)
	}
	asked := seen.asked()
	if len(asked) != 6 || !slices.Contains(asked, "open-0-1") {
		t.Errorf("with a budget of 5, the poll described %v: want the open id and 5 new ones", asked)
	}
	if n := model.PendingCount(next); n != 5 {
		t.Errorf("%d rows pending, want the 5 new ids over the budget", n)
	}
	for _, e := range model.Diff(prev, next) {
		if !strings.HasPrefix(e.ID, "new-") {
			t.Errorf("event %+v about an id that did not change", e)
		}
	}
	if full := progressive(t, a, next, 1000); model.PendingCount(full) != 0 || len(full.Txns) != 111 {
		t.Errorf("after the batches: %d rows, %d pending", len(full.Txns), model.PendingCount(full))
	}
}

// Refresh (snapshot, the one-shot commands) still describes everything, the
// rows a progressive load left pending included.
func TestRefreshDescribesPendingRows(t *testing.T) {
	t.Parallel()
	_, boot := kafkatest.NewCluster(t)
	kafkatest.InitIDs(t, boot, time.Minute, someIDs("idle", 20)...)
	a := newAdmin(t, boot)
	first, err := a.Poll(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := refresh(t, a, first)
	if n := model.PendingCount(s); n != 0 {
		t.Fatalf("Refresh left %d rows pending", n)
	}
	for _, tx := range s.Txns {
		if !tx.Described {
			t.Errorf("%s not described", tx.ID)
		}
	}
}

// Describe answers every id: an id that expired since it was listed comes
// back gone, and ctx ending fails it as a whole.
func TestDescribeGoneAndCancelled(t *testing.T) {
	t.Parallel()
	_, boot := kafkatest.NewCluster(t)
	kafkatest.InitIDs(t, boot, time.Minute, "a-0-1")
	a := newAdmin(t, boot)
	d, err := a.Describe(context.Background(), model.Refs("never-was", "a-0-1"))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Txns) != 1 || d.Txns[0].ID != "a-0-1" || !d.Txns[0].Described || !slices.Equal(d.Gone, []string{"never-was"}) {
		t.Errorf("Describe = %+v", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := a.Describe(ctx, model.Refs("a-0-1")); err == nil {
		t.Errorf("a cancelled Describe did not fail")
	}
}

// A cluster that answers no describe at all fails the batch as a whole, so
// that the TUI shows it disconnected rather than every row broken.
func TestDescribeOfAClusterGoneFails(t *testing.T) {
	t.Parallel()
	a, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: []string{testutil.ClosedAddr(t)}, Timeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.Describe(context.Background(), model.Refs("a-0-1", "b-0-1")); err == nil || !strings.Contains(err.Error(), "no coordinator answered") || !strings.HasPrefix(err.Error(), "cannot reach the cluster: ") {
		t.Errorf("Describe of a closed address = %v, want one starting cannot reach the cluster, naming no coordinator answered", err)
	}
}
