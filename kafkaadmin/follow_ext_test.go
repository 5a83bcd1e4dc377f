package kafkaadmin_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
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

// A cluster whose __transaction_state the follower can read, then one
// record it cannot: kfake has no coordinators' log, so this test writes one
// (a topic of that name, records encoded as Kafka's coordinators write
// them). The follower's rows and events become the snapshot's; the record
// of an unknown value version hands the history back to the polls, with why.
func TestFollowerTakesTheLogAndLetsGoOfWhatItCannotRead(t *testing.T) {
	_, boot := kafkatest.NewCluster(t)
	w, err := kgo.NewClient(kgo.SeedBrokers(boot...), kgo.DefaultProduceTopic("__transaction_state"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	now := time.Now().UnixMilli()
	write := func(id string, state int8, version int16) {
		t.Helper()
		k := kmsg.NewTxnMetadataKey()
		k.TransactionalID = id
		v := kmsg.NewTxnMetadataValue()
		v.Version, v.ProducerID, v.ProducerEpoch, v.TimeoutMillis = version, 7, 1, 60000
		v.State, v.StartTimestamp, v.LastUpdateTimestamp = kmsg.TransactionState(state), now-1000, now
		if state == 1 { // Ongoing
			v.Topics = []kmsg.TxnMetadataValueTopic{{Topic: "orders", Partitions: []int32{0}}}
		}
		val := v.AppendTo(nil)
		if version > 1 {
			val[1] = byte(version) // a version kmsg does not know
		}
		if err := w.ProduceSync(ctx, &kgo.Record{Key: k.AppendTo(nil), Value: val}).FirstErr(); err != nil {
			t.Fatalf("writing the log: %v", err)
		}
	}
	write("log-job-0-1", 4, 1) // CompleteCommit: the past
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
	write("log-job-0-2", 1, 1) // Ongoing, now
	var evs []model.Event
	s = poll(func(s *model.Snapshot) bool { evs = append(evs, s.Events...); return len(evs) > 0 })
	if tx, ok := s.Txn("log-job-0-2"); !ok || tx.State != model.Ongoing || len(tx.Partitions) != 1 ||
		evs[0].Kind != model.Began || !evs[0].Logged || evs[0].ID != "log-job-0-2" {
		t.Fatalf("after a begin: row %+v (%v), events %+v", tx, ok, evs)
	}
	write("log-job-0-3", 1, 2)
	s = poll(func(s *model.Snapshot) bool { return !s.Source.Log })
	if !strings.Contains(s.Source.Why, "cannot read __transaction_state") || !strings.Contains(s.Source.Why, "log-job-0-3") || s.Events != nil {
		t.Fatalf("after a record of an unknown version: source %+v", s.Source)
	}
}
