package kafkaadmin

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
)

// TestHeldRowsWhileTheLogIsRead: while the log is first read, at holdRowsAt
// ids or more, a Poll keeps the last listing's rows (no listing, no second
// generation of every row) and says so on the snapshot, partitions marked
// as for ids that may be missing; past holdRowsFor, or once the log is no
// longer being read, it lists again. kfake has no coordinators' log: the
// reader is one that says it is reading.
func TestHeldRowsWhileTheLogIsRead(t *testing.T) {
	defer func(at int, for_ time.Duration) { holdRowsAt, holdRowsFor = at, for_ }(holdRowsAt, holdRowsFor)
	holdRowsAt, holdRowsFor = 2, time.Minute

	_, boot := kafkatest.NewCluster(t)
	kafkatest.InitIDs(t, boot, time.Minute, "held-a", "held-b")
	open := kafkatest.OpenTxn(t, boot, "held-open", "held-topic", time.Minute)
	defer open.Close()
	c, err := New(Config{Bootstrap: boot, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	first, err := c.Poll(ctx, nil)
	if err != nil || len(first.Txns) != 3 {
		t.Fatalf("first poll: %v, %d rows", err, len(first.Txns))
	}
	f := &follower{why: "reading " + txnStateTopic, reading: true, moved: make(chan struct{}), done: make(chan struct{})}
	c.followed.Store(f)
	defer close(f.done) // Close waits for the reader

	// An id begun after the listing: the held rows do not have it.
	kafkatest.InitIDs(t, boot, time.Minute, "held-new")
	held, err := c.Poll(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	if len(held.Txns) != 3 || &held.Txns[0] != &first.Txns[0] {
		t.Errorf("while the log is read: %d rows, shared %v; want the listing's 3, shared", len(held.Txns), &held.Txns[0] == &first.Txns[0])
	}
	if !held.RowsAt.Equal(first.TakenAt) || !strings.Contains(held.Hidden, "held while __transaction_state is read") {
		t.Errorf("rows at %v (want %v), note %q", held.RowsAt, first.TakenAt, held.Hidden)
	}
	if tx, ok := held.Txn("held-open"); !ok || !tx.State.Open() {
		t.Errorf("the open id in the held rows: %+v, %v", tx, ok)
	}
	for _, p := range held.Partitions {
		if !p.OwnersHidden {
			t.Errorf("partition %v not marked: a pinner's owner may be an id begun since", p.TopicPartition)
		}
	}
	// Held again from the held snapshot: still since the first listing.
	again, err := c.Poll(ctx, held)
	if err != nil || !again.RowsAt.Equal(first.TakenAt) {
		t.Fatalf("held twice: %v, rows at %v", err, again.RowsAt)
	}

	// Held too long: listed again.
	holdRowsFor = 0
	fresh, err := c.Poll(ctx, again)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := fresh.Txn("held-new"); !ok || !fresh.RowsAt.IsZero() || strings.Contains(fresh.Hidden, "held") {
		t.Errorf("past holdRowsFor: %d rows, rows at %v, note %q; want listed again", len(fresh.Txns), fresh.RowsAt, fresh.Hidden)
	}

	// The log read through (no longer reading): listed, whatever the time.
	holdRowsFor = time.Minute
	f.mu.Lock()
	f.reading, f.why = false, "cannot read "+txnStateTopic
	f.mu.Unlock()
	if s, err := c.Poll(ctx, held); err != nil || !s.RowsAt.IsZero() || len(s.Txns) != 4 {
		t.Errorf("not reading: %v, rows at %v, %d rows; want 4 listed", err, s.RowsAt, len(s.Txns))
	}
}

// TestFirstPollDescribesTheOpenOnesAtAMillion: a first poll of holdRowsAt
// ids or more describes its open ids, the rows the list shows first, and
// leaves the others pending (the UI's describe batch copied every row); a
// smaller one describes nothing, as before.
func TestFirstPollDescribesTheOpenOnesAtAMillion(t *testing.T) {
	defer func(at int) { holdRowsAt = at }(holdRowsAt)
	_, boot := kafkatest.NewCluster(t)
	kafkatest.InitIDs(t, boot, time.Minute, "idle-a", "idle-b")
	open := kafkatest.OpenTxn(t, boot, "busy-0-1", "busy-topic", time.Minute)
	defer open.Close()
	for _, tc := range []struct {
		at       int
		openDone bool
	}{{2, true}, {1000, false}} {
		holdRowsAt = tc.at
		c, err := New(Config{Bootstrap: boot, Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		first, err := c.Poll(ctx, nil)
		cancel()
		c.Close()
		if err != nil || len(first.Txns) != 3 {
			t.Fatalf("first poll: %v, %d rows", err, len(first.Txns))
		}
		for _, tx := range first.Txns {
			want := tc.openDone && tx.ID == "busy-0-1"
			if tx.Described != want || tx.Pending == want {
				t.Errorf("holdRowsAt %d: %s described %v, pending %v; want described %v", tc.at, tx.ID, tx.Described, tx.Pending, want)
			}
		}
		if tx, _ := first.Txn("busy-0-1"); tc.openDone && (len(tx.Partitions) != 1 || tx.TimeoutMs != 60000) {
			t.Errorf("the open id as described: %+v", tx)
		}
	}
}

// TestFirstPollLetsGoOfTheOrderAtAMillion: following the log, a first poll
// of holdRowsAt ids or more keeps no listing order (the polls after it hold
// its rows until the log is read); below, it keeps it for the next listing.
func TestFirstPollLetsGoOfTheOrderAtAMillion(t *testing.T) {
	defer func(at int) { holdRowsAt = at }(holdRowsAt)
	_, boot := kafkatest.NewCluster(t)
	kafkatest.InitIDs(t, boot, time.Minute, "order-a", "order-b", "order-c")
	for _, tc := range []struct {
		at   int
		kept bool
	}{{3, false}, {4, true}} {
		holdRowsAt = tc.at
		c, err := New(Config{Bootstrap: boot, Timeout: 5 * time.Second, FollowLog: true})
		if err != nil {
			t.Fatal(err)
		}
		s, err := c.Poll(context.Background(), nil)
		if err != nil || len(s.Txns) != 3 {
			c.Close()
			t.Fatalf("first poll: %v, %d rows", err, len(s.Txns))
		}
		c.order.mu.Lock()
		kept := c.order.ids != nil
		c.order.mu.Unlock()
		c.Close()
		if kept != tc.kept {
			t.Errorf("holdRowsAt %d, 3 ids listed: order kept %v, want %v", tc.at, kept, tc.kept)
		}
	}
}
