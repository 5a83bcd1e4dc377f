package integration

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// scope drives txnscope's own Kafka layer the way the TUI does: every poll is a
// Refresh given the previous snapshot, diffed into events and added to a History.
type scope struct {
	t      *testing.T
	c      *kafkaadmin.Client
	prev   *model.Snapshot
	hist   *model.History
	events []model.Event
}

func newScope(t *testing.T, bootstrap string, watch ...model.TopicPartition) *scope {
	t.Helper()
	requireLoopback(t, bootstrap)
	c, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: []string{bootstrap}, Timeout: 10 * time.Second, Watch: watch})
	if err != nil {
		t.Fatalf("kafkaadmin.New(%s): %v", bootstrap, err)
	}
	t.Cleanup(c.Close)
	return &scope{t: t, c: c, hist: model.NewHistory(1000)}
}

// poll refreshes once and records what changed since the last poll.
func (s *scope) poll(ctx context.Context) *model.Snapshot {
	s.t.Helper()
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	snap, err := s.c.Refresh(rctx, s.prev)
	if err != nil {
		s.t.Fatalf("Refresh: %v", err)
	}
	if s.prev == nil {
		s.hist.Baseline(snap)
	} else {
		evs := model.Diff(s.prev, snap)
		s.hist.Add(evs)
		s.events = append(s.events, evs...)
	}
	s.prev = snap
	return snap
}

// until polls every 100 ms until ok accepts a snapshot, and returns it.
func (s *scope) until(ctx context.Context, what string, ok func(*model.Snapshot) bool) *model.Snapshot {
	s.t.Helper()
	for {
		snap := s.poll(ctx)
		if ok(snap) {
			return snap
		}
		select {
		case <-ctx.Done():
			s.t.Fatalf("waiting for %s: %v; last snapshot: %s", what, ctx.Err(), s.describe(snap))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// untilState polls until id shows state.
func (s *scope) untilState(ctx context.Context, id string, state model.State) (*model.Snapshot, model.Txn) {
	s.t.Helper()
	snap := s.until(ctx, fmt.Sprintf("%s to be %s", id, state), func(snap *model.Snapshot) bool {
		tx, ok := snap.Txn(id)
		return ok && tx.State == state
	})
	tx, _ := snap.Txn(id)
	return snap, tx
}

// kinds lists the events seen so far for one id, in order.
func (s *scope) kinds(id string) []model.EventKind {
	var out []model.EventKind
	for _, e := range s.events {
		if e.ID == id {
			out = append(out, e.Kind)
		}
	}
	return out
}

// describe is the part of a snapshot a failure message needs: our ids and partitions.
func (s *scope) describe(snap *model.Snapshot) string {
	if snap == nil {
		return "none"
	}
	var b strings.Builder
	for _, tx := range snap.Txns {
		if strings.Contains(tx.ID, "txnscope-it-") && strings.Contains(tx.ID, s.t.Name()) {
			fmt.Fprintf(&b, "[%s %s pid %d epoch %d parts %v err %q] ", tx.ID, tx.State, tx.ProducerID, tx.ProducerEpoch, tx.Partitions, tx.Err)
		}
	}
	for _, p := range snap.Partitions {
		if strings.Contains(p.Topic, s.t.Name()) {
			fmt.Fprintf(&b, "[%s-%d HWM %d LSO %d producers %+v err %q] ", p.Topic, p.Partition, p.HighWatermark, p.LastStableOffset, p.Producers, p.Err)
		}
	}
	return b.String()
}

func txnOf(t *testing.T, snap *model.Snapshot, id string) model.Txn {
	t.Helper()
	tx, ok := snap.Txn(id)
	if !ok {
		t.Fatalf("%s not in the snapshot (%d ids)", id, len(snap.Txns))
	}
	return tx
}

func partOf(t *testing.T, snap *model.Snapshot, tp model.TopicPartition) model.Partition {
	t.Helper()
	p, ok := snap.Partition(tp)
	if !ok {
		t.Fatalf("%s-%d not in the snapshot (partitions: %d)", tp.Topic, tp.Partition, len(snap.Partitions))
	}
	return p
}

// name gives each test its own topic or transactional id; the random part keeps
// reruns against the same broker apart.
func name(t *testing.T, kind string) string {
	return fmt.Sprintf("txnscope-it-%s-%s-%08x", kind, strings.ReplaceAll(t.Name(), "/", "."), rand.Uint32())
}

// topicOn creates a one-partition topic for the test and returns its partition 0.
func topicOn(ctx context.Context, t *testing.T, adm *kadm.Client) model.TopicPartition {
	t.Helper()
	topic := name(t, "topic")
	resp, err := adm.CreateTopic(ctx, 1, 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("CreateTopic(%s): %v", topic, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		_, _ = adm.DeleteTopic(ctx, topic)
	})
	// A loaded broker may answer a produce before it serves the new partition
	// (UNKNOWN_TOPIC_OR_PARTITION, seen in CI): wait until it has a leader.
	deadline := time.Now().Add(15 * time.Second)
	for {
		ts, err := adm.ListTopics(ctx, topic)
		if err == nil {
			if d, ok := ts[topic]; ok && d.Err == nil && len(d.Partitions) == 1 && d.Partitions[0].Err == nil && d.Partitions[0].Leader >= 0 {
				break
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("CreateTopic(%s): no leader after 15 s (%v)", topic, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return model.TopicPartition{Topic: topic, Partition: 0}
}

// producer is a real transactional franz-go client for id, closed when the test ends.
func producer(t *testing.T, bootstrap, id string, timeout time.Duration, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(bootstrap),
		kgo.TransactionalID(id),
		kgo.TransactionTimeout(timeout),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
	}, opts...)...)
	if err != nil {
		t.Fatalf("producer %s: %v", id, err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// openTxn begins a transaction on cl and writes n records to tp in it.
func openTxn(ctx context.Context, t *testing.T, cl *kgo.Client, tp model.TopicPartition, n int, value string) {
	t.Helper()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatalf("BeginTransaction: %v", err)
	}
	produce(ctx, t, cl, tp, n, value)
}

func produce(ctx context.Context, t *testing.T, cl *kgo.Client, tp model.TopicPartition, n int, value string) {
	t.Helper()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: tp.Topic, Partition: tp.Partition, Value: fmt.Appendf(nil, "%s-%d", value, i)}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce to %s-%d: %v", tp.Topic, tp.Partition, err)
	}
}

func endTxn(ctx context.Context, t *testing.T, cl *kgo.Client, commit bool) {
	t.Helper()
	if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		t.Fatalf("EndTransaction(commit=%v): %v", commit, err)
	}
}

// clients are the two transaction protocols a Kafka 4 broker serves: transaction version 2
// (KIP-890 part 2: every commit and abort bumps the epoch), which franz-go uses when the broker
// offers it, and version 1, which every client older than Kafka 4.0 still speaks.
func clientVersions() []clientVersion {
	return []clientVersion{
		{"txn-v2", nil},
		{"txn-v1", []kgo.Opt{kgo.MaxVersions(kversion.V3_9_0())}},
	}
}

type clientVersion struct {
	name string
	opts []kgo.Opt
}

// isFenced reports an error that tells a producer another one took its id.
func isFenced(err error) bool {
	return errors.Is(err, kerr.ProducerFenced) || errors.Is(err, kerr.InvalidProducerEpoch) ||
		errors.Is(err, kerr.InvalidProducerIDMapping)
}

// offsetsOf reads a partition's high watermark and last stable offset straight
// from the broker, as a check independent of txnscope.
func offsetsOf(ctx context.Context, t *testing.T, adm *kadm.Client, tp model.TopicPartition) (hwm, lso int64) {
	t.Helper()
	ends, err := adm.ListEndOffsets(ctx, tp.Topic)
	if err != nil {
		t.Fatalf("ListEndOffsets: %v", err)
	}
	stable, err := adm.ListCommittedOffsets(ctx, tp.Topic)
	if err != nil {
		t.Fatalf("ListCommittedOffsets: %v", err)
	}
	e, _ := ends.Lookup(tp.Topic, tp.Partition)
	s, _ := stable.Lookup(tp.Topic, tp.Partition)
	if e.Err != nil || s.Err != nil {
		t.Fatalf("offsets of %s-%d: %v / %v", tp.Topic, tp.Partition, e.Err, s.Err)
	}
	return e.Offset, s.Offset
}

// consume reads tp from the start with the given isolation level until it reads
// the value until, and returns the values read.
func consume(ctx context.Context, t *testing.T, bootstrap string, tp model.TopicPartition, committed bool, until string) []string {
	t.Helper()
	opts := []kgo.Opt{
		kgo.SeedBrokers(bootstrap),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{tp.Topic: {tp.Partition: kgo.NewOffset().AtStart()}}),
	}
	if committed {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	} else {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadUncommitted()))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatalf("consumer: %v", err)
	}
	defer cl.Close()
	var got []string
	for {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consuming %s-%d (read_committed=%v): %v; read so far %v", tp.Topic, tp.Partition, committed, err, got)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("fetch: %v", err) })
		done := false
		fs.EachRecord(func(r *kgo.Record) {
			got = append(got, string(r.Value))
			done = done || string(r.Value) == until
		})
		if done {
			return got
		}
	}
}
