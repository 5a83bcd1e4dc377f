package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/txnscope/txnscope/internal/testutil"
	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/model"
)

// txnLogWriter writes raw records into __transaction_state of a private test broker. Kafka 4.4
// refuses a client's produce to an internal topic (INVALID_TOPIC_EXCEPTION) unless its client id
// is "__admin_client" (AdminUtils.ADMIN_CLIENT_ID), which the broker lets write them given WRITE
// on the topic: on a broker without an authorizer, anyone. Only ever a broker the test started.
type txnLogWriter struct {
	t  *testing.T
	cl *kgo.Client
}

func newTxnLogWriter(t *testing.T, b *Broker, clientID string) *txnLogWriter {
	t.Helper()
	requireLoopback(t, b.Bootstrap)
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Bootstrap), kgo.ClientID(clientID), kgo.DefaultProduceTopic(txnStateTopic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DisableIdempotentWrite(), kgo.RecordRetries(2))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &txnLogWriter{t: t, cl: cl}
}

// write appends key and value to partition and returns the record's offset, or the broker's error.
func (w *txnLogWriter) write(ctx context.Context, partition int32, key, value []byte) (int64, error) {
	r, err := w.cl.ProduceSync(ctx, &kgo.Record{Partition: partition, Key: key, Value: value}).First()
	if err != nil {
		return 0, err
	}
	return r.Offset, nil
}

func (w *txnLogWriter) mustWrite(ctx context.Context, partition int32, key, value []byte) int64 {
	w.t.Helper()
	off, err := w.write(ctx, partition, key, value)
	if err != nil {
		w.t.Fatalf("writing %s-%d: %v", txnStateTopic, partition, err)
	}
	return off
}

// txnLogPartition is the partition of __transaction_state (50 of them) that holds id, as Kafka
// picks it: the absolute value of Java's String.hashCode, modulo 50.
func txnLogPartition(id string) int32 {
	var h int32
	for _, c := range utf16.Encode([]rune(id)) {
		h = 31*h + int32(c)
	}
	switch {
	case h == math.MinInt32: // Kafka's Utils.abs
		h = 0
	case h < 0:
		h = -h
	}
	return h % 50
}

// sinceReplay is the replay object of `snapshot --since -o json`, read field by field.
type sinceReplay struct {
	CompleteSince  *time.Time `json:"complete_since"`
	NeverCompacted *bool      `json:"never_compacted"`
	OldestRecord   *time.Time `json:"oldest_record"`
	Unreadable     []struct {
		Partition   int32  `json:"partition"`
		Kind        string `json:"kind"`
		Count       int    `json:"count"`
		FirstOffset int64  `json:"first_offset"`
		LastOffset  int64  `json:"last_offset"`
		Why         string `json:"why"`
	} `json:"unreadable"`
	Events []struct {
		TransactionalID string `json:"transactional_id"`
		Kind            string `json:"kind"`
	} `json:"events"`
}

// Records of __transaction_state that txnscope cannot read, on a real broker: one of a value
// version newer than it reads, under a real transactional id, and one whose bytes no Kafka
// writes. snapshot --since reads on past them, lists them by partition and offset in the JSON
// (exit 0, a note on stderr and a comment line in the table) and claims completeness only after
// them; before them, on a log never compacted, it is complete since its first record. The TUI's
// follower skips the same records: the newer one hands the rows to the polls, the header naming
// it, until the id's next transaction rewrites its state; the broken one, whose id is unknown,
// hands them to the polls for good.
func TestTxnLogRecordsItCannotRead(t *testing.T) {
	t.Parallel()
	b := StartBroker(t, BrokerOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	bin := buildTxnscope(ctx, t)
	tp := topicOn(ctx, t, newAdmin(t, b.Bootstrap))
	id := name(t, "txn")
	p := producer(t, b.Bootstrap, id, time.Minute)
	openTxn(ctx, t, p, tp, 1, "c1")
	endTxn(ctx, t, p, true)
	// A second id in another partition of the log, written later: the first record of each
	// partition is no bound on a log that never lost one.
	other := name(t, "other")
	for txnLogPartition(other) == txnLogPartition(id) {
		other = name(t, "other")
	}
	time.Sleep(50 * time.Millisecond)
	o := producer(t, b.Bootstrap, other, time.Minute)
	openTxn(ctx, t, o, tp, 1, "o1")
	endTxn(ctx, t, o, true)

	since := func(output string) (stdout, stderr string) {
		t.Helper()
		stdout, stderr, code := runBin(ctx, bin, "snapshot", "--since", "10m", "-o", output, "-b", b.Bootstrap)
		if code != 0 {
			t.Fatalf("snapshot --since -o %s: exit %d, want 0\nstderr: %s", output, code, stderr)
		}
		return stdout, stderr
	}
	replay := func() (sinceReplay, string) {
		t.Helper()
		out, stderr := since("json")
		testutil.CheckSnapshotJSON(t, []byte(out))
		var doc struct {
			Replay sinceReplay `json:"replay"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, out)
		}
		return doc.Replay, stderr
	}

	// This broker's log has never been compacted: complete since its first record.
	r, _ := replay()
	if r.NeverCompacted == nil || !*r.NeverCompacted || r.CompleteSince == nil || r.OldestRecord == nil ||
		!r.CompleteSince.Equal(*r.OldestRecord) || r.Unreadable == nil || len(r.Unreadable) != 0 {
		t.Errorf("a fresh broker's log: never compacted %v, complete since %v, oldest %v, unreadable %v",
			r.NeverCompacted, r.CompleteSince, r.OldestRecord, r.Unreadable)
	}

	var part int32 = -1
	sc := newScope(t, b.Bootstrap)
	if err := sc.c.ReadTxnLog(ctx, func(rec model.TxnLogRecord) {
		if rec.ID == id {
			part = rec.Partition
		}
	}); err != nil || part != txnLogPartition(id) {
		t.Fatalf("the id's partition of %s: %d, want %d (%v)", txnStateTopic, part, txnLogPartition(id), err)
	}

	// What Kafka 4.4 allows: a plain client may not write the internal topic.
	key, newer := kafkatest.TxnLogKey(0, id), kafkatest.NewerTxnLogValue(2)
	if _, err := newTxnLogWriter(t, b, "txnscope-it").write(ctx, part, key, newer); !errors.Is(err, kerr.InvalidTopicException) {
		t.Fatalf("a plain client writing %s: %v, want INVALID_TOPIC_EXCEPTION", txnStateTopic, err)
	}
	w := newTxnLogWriter(t, b, "__admin_client")

	follow := newLogScope(t, b.Bootstrap)
	follow.live(ctx)
	pollUntil := func(what string, ok func(*model.Snapshot) bool) *model.Snapshot {
		t.Helper()
		for {
			s := follow.poll(ctx)
			if ok(s) {
				return s
			}
			select {
			case <-ctx.Done():
				t.Fatalf("waiting for %s: source %+v", what, s.Source)
			case <-time.After(200 * time.Millisecond):
			}
		}
	}

	before := time.Now().Truncate(time.Millisecond)
	newerAt := w.mustWrite(ctx, part, key, newer)
	newerWhere := fmt.Sprintf("partition %d offset %d (newer version", part, newerAt)
	s := pollUntil("the newer record", func(s *model.Snapshot) bool { return !s.Source.Log })
	if !strings.Contains(s.Source.Why, newerWhere) || !strings.Contains(s.Source.Why, "version 2, newer than txnscope reads") {
		t.Fatalf("after a record of a newer version: source %+v, want why naming %q", s.Source, newerWhere)
	}
	// The id's next transaction writes its whole state again: the log is exact once more.
	openTxn(ctx, t, p, tp, 1, "c2")
	endTxn(ctx, t, p, true)
	// The log may be read between the commit's PrepareCommit and its
	// CompleteCommit record.
	s = pollUntil("the log again, the commit complete", func(s *model.Snapshot) bool {
		tx, ok := s.Txn(id)
		return s.Source.Log && ok && tx.State == model.CompleteCommit
	})
	if tx, ok := s.Txn(id); !ok || tx.State != model.CompleteCommit {
		t.Fatalf("the id's row from the log after its next transaction: %+v (%v)", tx, ok)
	}

	brokenPart := (part + 1) % 50
	brokenAt := w.mustWrite(ctx, brokenPart, []byte{0xde, 0xad, 0xbe, 0xef}, []byte{1, 2, 3})
	brokenWhere := fmt.Sprintf("partition %d offset %d (corrupt: the key does not decode (4 bytes))", brokenPart, brokenAt)
	s = pollUntil("the broken record", func(s *model.Snapshot) bool { return !s.Source.Log })
	if !strings.Contains(s.Source.Why, brokenWhere) {
		t.Fatalf("after a broken record: source %+v, want why naming %q", s.Source, brokenWhere)
	}
	// A record of unknown id may have been any id's of its partition: another transaction
	// of the id, then one more broken record behind it in the same partition; once the
	// follower counts that one, it has read the transaction, and still leaves the rows to the polls.
	openTxn(ctx, t, p, tp, 1, "c3")
	endTxn(ctx, t, p, true)
	again := w.mustWrite(ctx, part, []byte{0xde, 0xad}, nil)
	s = pollUntil("the third record", func(s *model.Snapshot) bool { return strings.HasPrefix(s.Source.Why, "3 records") })
	if s.Source.Log {
		t.Fatalf("the log is the source again after a record of unknown id: %+v", s.Source)
	}

	r, stderr := replay()
	var got []string
	for _, u := range r.Unreadable {
		got = append(got, fmt.Sprintf("%d %s %d %d-%d", u.Partition, u.Kind, u.Count, u.FirstOffset, u.LastOffset))
	}
	want := []string{
		fmt.Sprintf("%d newer version 1 %d-%d", part, newerAt, newerAt),
		fmt.Sprintf("%d corrupt 1 %d-%d", brokenPart, brokenAt, brokenAt),
		fmt.Sprintf("%d corrupt 1 %d-%d", part, again, again),
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("unreadable %q, want %q", got, want)
	}
	if r.NeverCompacted == nil || *r.NeverCompacted || r.CompleteSince == nil || !r.CompleteSince.After(before) {
		t.Errorf("never compacted %v, complete since %v: want false and after %s, the first record it cannot read",
			r.NeverCompacted, r.CompleteSince, before)
	}
	commits := 0
	for _, e := range r.Events {
		if e.TransactionalID == id && e.Kind == "committed" {
			commits++
		}
	}
	if commits != 3 || !strings.HasPrefix(stderr, "txnscope: note: 3 records of __transaction_state txnscope cannot read") {
		t.Errorf("%d commits of %s replayed, want 3; stderr %q", commits, id, stderr)
	}
	table, stderr := since("table")
	if !strings.Contains(table, "\n# 3 records of __transaction_state txnscope cannot read, in 2 partitions: ") ||
		!strings.Contains(stderr, newerWhere) || !strings.Contains(stderr, brokenWhere) {
		t.Errorf("the table and its note:\n%s\nstderr %q", table, stderr)
	}
}
