package kafkaadmin_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
)

// The tests of this file hold the request on its way while the producer
// ends the transaction shown and begins its next one (issue 19, item 4).
// Kafka offers no conditional abort: the request fences whatever is open when
// it lands. kfake aborts that inline and answers without an error, where
// Kafka answers CONCURRENT_TRANSACTIONS: an answer without an error says
// nothing about what was open.

// holdFirst holds the first request of key in the cluster until meanwhile has
// run (the cluster serves the producer's connections in between), then lets
// the cluster handle it as usual; it counts them all.
func holdFirst(c *kfake.Cluster, key kmsg.Key, meanwhile func()) *atomic.Int64 {
	var n atomic.Int64
	c.ControlKey(int16(key), func(kmsg.Request) (kmsg.Response, error, bool) {
		if n.Add(1) > 1 {
			return nil, nil, false
		}
		c.KeepControl()
		done := make(chan struct{})
		go func() {
			defer close(done)
			meanwhile()
		}()
		c.SleepControl(func() { <-done })
		return nil, nil, false
	})
	return &n
}

// committedValues is what a read_committed consumer reads of topic's
// partition p, up to its last stable offset.
func committedValues(t *testing.T, boot []string, topic string, p int32) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	adm, err := kgo.NewClient(kgo.SeedBrokers(boot...))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	lsos, err := kadm.NewClient(adm).ListCommittedOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	lso, _ := lsos.Lookup(topic, p)
	cl, err := kgo.NewClient(kgo.SeedBrokers(boot...), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {p: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	// Markers and aborted records take offsets a reader never sees: read
	// until a poll brings nothing more.
	var out []string
	for {
		pctx, pcancel := context.WithTimeout(ctx, 500*time.Millisecond)
		fs := cl.PollFetches(pctx)
		pcancel()
		if ctx.Err() != nil {
			t.Fatalf("reading %s-%d (last stable offset %d): %v", topic, p, lso.Offset, ctx.Err())
		}
		if fs.NumRecords() == 0 {
			break
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, string(r.Value)) })
	}
	return out
}

// produceValues writes one record per value to topic's partition p in cl's
// open transaction.
func produceValues(t *testing.T, cl *kgo.Client, topic string, p int32, values ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, v := range values {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: p, Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatalf("produce %q: %v", v, err)
		}
	}
}

// fenced fails unless cl's open transaction can no longer commit.
func fenced(t *testing.T, cl *kgo.Client) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := cl.EndTransaction(ctx, kgo.TryCommit)
	if err == nil {
		t.Fatal("the newer transaction committed: the request did not abort it")
	}
	return err
}

// TestForceTerminateInFlightAbortsTheNewer is the race of issue 19, item 4:
// the InitProducerId is held on its way while the producer commits the
// transaction shown (T1) and begins T2 under the same producer id and epoch
// (transaction version 1), writing to the same partition. kfake aborts T2
// and answers without an error. The result must not say that nothing was
// aborted: T2's records are gone, and read_committed readers see only T1's.
func TestForceTerminateInFlightAbortsTheNewer(t *testing.T) {
	t.Parallel()
	c, boot := kafkatest.NewCluster(t)
	const id, topic = "orders-enricher-0-7", "orders"
	p := kafkatest.Producer(t, boot, id, time.Minute)
	kafkatest.Begin(t, p)
	produceValues(t, p, topic, 0, "t1-a", "t1-b")
	a := newAdmin(t, boot)
	act := forceTerminate(txnOf(t, refresh(t, a, nil), id))

	inits := holdFirst(c, kmsg.InitProducerID, func() {
		kafkatest.End(t, p, true)
		time.Sleep(5 * time.Millisecond)
		kafkatest.Begin(t, p)
		produceValues(t, p, topic, 0, "t2-a")
	})
	r, j := executeJournal(t, a, act)
	t.Logf("result: %s", r.Summary())
	if r.Sends != 1 || inits.Load() != 1 || len(j.Tries()) != 1 {
		t.Fatalf("result %+v after %d InitProducerId: want exactly one", r, inits.Load())
	}
	if r.OK() || !r.Unknown {
		t.Errorf("the request aborted a transaction nobody confirmed: want an unknown outcome, got %q (unknown %v)", r.Summary(), r.Unknown)
	}
	for _, want := range []string{"a newer transaction of " + id, "ABORT marker", "most likely aborted it"} {
		if !strings.Contains(r.Summary(), want) {
			t.Errorf("the result should say a newer transaction was aborted (%q): %s", want, r.Summary())
		}
	}
	if strings.Contains(r.Summary(), "nothing was aborted") {
		t.Errorf("the result claims nothing was aborted: %s", r.Summary())
	}
	if err := fenced(t, p); !errors.Is(err, kerr.ProducerFenced) && !errors.Is(err, kerr.InvalidProducerEpoch) {
		t.Errorf("T2's commit: %v, want PRODUCER_FENCED or INVALID_PRODUCER_EPOCH", err)
	}
	if got := committedValues(t, boot, topic, 0); strings.Join(got, ",") != "t1-a,t1-b" {
		t.Errorf("read_committed reads %q, want T1's records only", got)
	}
}
