package kafkaadmin_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// kfake has no coordinator log: a Poll that would follow it lists and
// describes as always, and says why the history comes from polls; no
// error, and Close stops the reader.
func TestPollFallsBackToPollsWithoutTheLog(t *testing.T) {
	t.Parallel()
	_, boot := kafkatest.NewCluster(t)
	a, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: boot, Timeout: 5 * time.Second, FollowLog: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var why string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		s, err := a.Poll(ctx, nil)
		if err != nil {
			t.Fatalf("Poll: %v", err)
		}
		if s.Source.Log || s.Events != nil {
			t.Fatalf("the log is the source on kfake: %+v", s.Source)
		}
		why = s.Source.Why
		if strings.Contains(why, "has no __transaction_state") {
			return
		}
	}
	t.Fatalf("source why %q, want it to say the cluster has no __transaction_state", why)
}

// TestFollowerGoneAfterClose: the log's reader, waiting to try a cluster
// without the log again, is gone the moment Close returns. Not parallel:
// the goroutines of the other tests would be counted.
func TestFollowerGoneAfterClose(t *testing.T) {
	_, boot := kafkatest.NewCluster(t)
	before := goleak.IgnoreCurrent()
	a, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: boot, Timeout: 5 * time.Second, FollowLog: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if a.LogLive() == nil {
		t.Fatal("no LogLive with FollowLog")
	}
	for range 3 {
		if _, err := a.Poll(ctx, nil); err != nil {
			t.Fatalf("Poll: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	a.Close()
	if err := goleak.Find(before); err != nil {
		t.Fatalf("after Close: %v", err)
	}
}

// A cluster whose __transaction_state the follower can read, then records
// it cannot: kfake has no coordinators' log, so this test writes one (a
// topic of that name, records encoded as Kafka's coordinators write them).
// The follower's rows and events become the snapshot's. A record of an
// unknown value version is skipped and counted, and hands the rows to the
// polls, the header saying which record, until its id's next record makes
// the log exact again; a record whose key cannot be read (so any id of its
// partition may be stale) hands them to the polls for good.
func TestFollowerTakesTheLogAndSkipsWhatItCannotRead(t *testing.T) {
	_, boot := kafkatest.NewCluster(t)
	lw := kafkatest.NewTxnLog(t, boot)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lw.State(0, "log-job-0-1", 4) // CompleteCommit: the past
	a, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: boot, Timeout: 5 * time.Second, FollowLog: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var prev *model.Snapshot
	poll := func(ok func(*model.Snapshot) bool) *model.Snapshot {
		t.Helper()
		for {
			s, err := a.Poll(ctx, prev)
			if err != nil {
				t.Fatalf("Poll: %v", err)
			}
			prev = s
			if ok(s) {
				return s
			}
			select {
			case <-ctx.Done():
				t.Fatalf("waiting: last source %+v, %d rows", s.Source, len(s.Txns))
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	select {
	case <-a.LogLive():
		t.Fatal("LogLive closed before the log was read")
	default:
	}
	s := poll(func(s *model.Snapshot) bool { return s.Source.Log })
	select {
	case <-a.LogLive():
	default:
		t.Fatal("the log is the source and LogLive is still open")
	}
	if tx, ok := s.Txn("log-job-0-1"); !ok || tx.State != model.CompleteCommit || !tx.Described {
		t.Fatalf("the log's row: %+v (%v)", tx, ok)
	}
	lw.State(0, "log-job-0-2", 1) // Ongoing, now
	var evs []model.Event
	s = poll(func(s *model.Snapshot) bool { evs = append(evs, s.Events...); return len(evs) > 0 })
	if tx, ok := s.Txn("log-job-0-2"); !ok || tx.State != model.Ongoing || len(tx.Partitions) != 1 ||
		evs[0].Kind != model.Began || !evs[0].Logged || evs[0].ID != "log-job-0-2" {
		t.Fatalf("after a begin: row %+v (%v), events %+v", tx, ok, evs)
	}

	off := lw.Raw(0, kafkatest.TxnLogKey(0, "log-job-0-3"), kafkatest.NewerTxnLogValue(2))
	s = poll(func(s *model.Snapshot) bool { return !s.Source.Log })
	want := fmt.Sprintf("1 record of __transaction_state txnscope cannot read: partition 0 offset %d (newer version: "+
		`the value of "log-job-0-3": version 2, newer than txnscope reads (1))`, off)
	if s.Source.Why != want || s.Events != nil {
		t.Fatalf("after a record of an unknown version: source %+v\nwant why %q", s.Source, want)
	}
	// Its id's next record holds its whole state: the log is exact again,
	// and still says what it skipped.
	lw.State(0, "log-job-0-3", 4)
	s = poll(func(s *model.Snapshot) bool { return s.Source.Log })
	if tx, ok := s.Txn("log-job-0-3"); !ok || tx.State != model.CompleteCommit || s.Source.Unread != want {
		t.Fatalf("after the id's next record: row %+v (%v), source %+v", tx, ok, s.Source)
	}

	bad := lw.Raw(1, []byte{0xde, 0xad}, []byte{0xbe, 0xef})
	s = poll(func(s *model.Snapshot) bool { return !s.Source.Log })
	for _, part := range []string{"2 records of __transaction_state txnscope cannot read, in 2 partitions",
		fmt.Sprintf("partition 1 offset %d (corrupt: the key does not decode (2 bytes))", bad)} {
		if !strings.Contains(s.Source.Why, part) {
			t.Fatalf("after a broken key: source %+v, want why with %q", s.Source, part)
		}
	}
	// A readable record in that partition, then one more broken one: once
	// the follower counts the second, it has read the first, and still
	// leaves the rows to the polls.
	lw.State(1, "log-job-1-1", 4)
	lw.Raw(1, []byte{0xde, 0xad}, nil)
	s = poll(func(s *model.Snapshot) bool { return strings.HasPrefix(s.Source.Unread, "3 records") })
	if s.Source.Log || !strings.HasPrefix(s.Source.Why, "3 records") {
		t.Fatalf("after a readable record behind a record of unknown id: %+v", s.Source)
	}
}

// snapshot --since and the TUI's replay read on past the records they
// cannot read, list them by partition, and say the log is complete only
// after them; a log never compacted is complete since its first record.
func TestReplaySkipsAndCountsWhatItCannotRead(t *testing.T) {
	t.Parallel()
	_, boot := kafkatest.NewCluster(t)
	lw := kafkatest.NewTxnLog(t, boot)
	a := newAdmin(t, boot)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	lw.State(0, "replay-0-1", 1)
	lw.State(0, "replay-0-1", 4)
	lw.State(1, "replay-1-1", 4)
	r, err := a.Replay(ctx, time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Whole || !r.Complete.Equal(r.Oldest) || len(r.Unread) != 0 || len(r.Events) != 3 {
		t.Fatalf("a log never compacted: %+v", r)
	}

	before := time.Now().Truncate(time.Millisecond) // records are dated in ms
	newer := lw.Raw(0, kafkatest.TxnLogKey(0, "replay-0-1"), kafkatest.NewerTxnLogValue(7))
	lw.Raw(0, kafkatest.TxnLogKey(3, "replay-0-1"), kafkatest.NewerTxnLogValue(1))
	corrupt := lw.Raw(2, kafkatest.TxnLogKey(0, "replay-2-1"), []byte{0, 1, 0})
	lw.State(0, "replay-0-2", 1)
	r, err = a.Replay(ctx, time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []model.Unread{
		{Partition: 0, Kind: model.UnreadNewer, Count: 2, FirstOffset: newer, LastOffset: newer + 1,
			Why: `the value of "replay-0-1": version 7, newer than txnscope reads (1)`},
		{Partition: 2, Kind: model.UnreadCorrupt, Count: 1, FirstOffset: corrupt, LastOffset: corrupt,
			Why: `the value of "replay-2-1" does not decode (3 bytes)`},
	}
	if !reflect.DeepEqual(r.Unread, want) {
		t.Fatalf("unread %+v\nwant %+v", r.Unread, want)
	}
	if r.Whole || !r.Complete.After(before) || len(r.Events) != 4 {
		t.Fatalf("complete since %s (whole %v), %d events; want after %s, not whole, 4 events", r.Complete, r.Whole, len(r.Events), before)
	}
	n := 0
	if err := a.ReadTxnLog(ctx, func(rec model.TxnLogRecord) {
		if rec.Unread != "" {
			n++
		}
	}); err != nil || n != 3 {
		t.Fatalf("ReadTxnLog handed %d unread records (%v), want 3 in their place", n, err)
	}
}

// With FollowOnLetGo the log's first read waits for LetGo (the exporter,
// once it has let go of the first listing's rows), then goes live as
// without it; the polls meanwhile list, and say the log is being read.
func TestFollowerWaitsForLetGo(t *testing.T) {
	t.Parallel()
	_, boot := kafkatest.NewCluster(t)
	lw := kafkatest.NewTxnLog(t, boot)
	lw.State(0, "letgo-job-0-1", 4)
	a, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: boot, Timeout: 5 * time.Second, FollowLog: true, FollowOnLetGo: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := a.Poll(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Source.Log || !s.Source.Reading {
		t.Fatalf("the first poll's source: %+v, want the log being read", s.Source)
	}
	select {
	case <-a.LogLive():
		t.Fatal("the log was read before LetGo")
	case <-time.After(time.Second): // the reader, let go, is live in a few ms
	}
	a.LetGo()
	a.LetGo() // twice is once
	select {
	case <-a.LogLive():
	case <-ctx.Done():
		t.Fatal("the log is not live after LetGo")
	}
	s, err = a.Poll(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tx, ok := s.Txn("letgo-job-0-1"); !s.Source.Log || !ok || tx.State != model.CompleteCommit {
		t.Fatalf("after LetGo: source %+v, row %+v (%v)", s.Source, tx, ok)
	}
}
