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
	"github.com/twmb/franz-go/pkg/kversion"

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

// versions are the two transaction versions: under version 1 (kafkatest's
// cluster, capped at Kafka 3.9) a producer keeps its producer id and epoch
// from one transaction to the next; under version 2 (Kafka 4.0's EndTxn v5)
// every commit bumps the epoch, the marker carrying the bumped one.
var versions = []struct {
	name string
	opts []kfake.Opt
}{
	{"txn-v1", nil},
	{"txn-v2", []kfake.Opt{kfake.MaxVersions(kversion.V4_0_0())}},
}

// TestForceTerminateInFlightAbortsTheNewer is the race of issue 19, item 4:
// the InitProducerId is held on its way while the producer commits the
// transaction shown (T1) and begins T2, writing to the same partition. kfake
// aborts T2 and answers without an error. The result must not say that
// nothing was aborted: T2's records are gone, its commit fails, and
// read_committed readers see only T1's records.
func TestForceTerminateInFlightAbortsTheNewer(t *testing.T) {
	t.Parallel()
	for _, v := range versions {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			c, boot := kafkatest.NewCluster(t, v.opts...)
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
			for _, want := range []string{"the one shown had committed before the request arrived (its COMMIT marker is at offset 2 of orders-0)",
				"a newer transaction of " + id + " began after it (at offset 3 of orders-0) and has an ABORT marker at offset 4: this request most likely aborted it and fenced its producer"} {
				if !strings.Contains(r.Summary(), want) {
					t.Errorf("the result should say %q: %s", want, r.Summary())
				}
			}
			if strings.Contains(r.Summary(), "nothing was aborted") {
				t.Errorf("the result claims nothing was aborted: %s", r.Summary())
			}
			// kfake answers T2's EndTxn PRODUCER_FENCED under version 1 and
			// INVALID_TXN_STATE under version 2 (its abort already ended it).
			err := fenced(t, p)
			t.Logf("T2's commit: %v", err)
			if !errors.Is(err, kerr.ProducerFenced) && !errors.Is(err, kerr.InvalidProducerEpoch) && !errors.Is(err, kerr.InvalidTxnState) {
				t.Errorf("T2's commit: %v, want PRODUCER_FENCED, INVALID_PRODUCER_EPOCH or INVALID_TXN_STATE", err)
			}
			if got := committedValues(t, boot, topic, 0); strings.Join(got, ",") != "t1-a,t1-b" {
				t.Errorf("read_committed reads %q, want T1's records only", got)
			}
		})
	}
}

// The newer transaction wrote only to a partition the one shown never
// touched: no log read shows it, so the result cannot say what the request
// aborted, and says so; and when nothing newer began at all the answer
// still proves nothing (it is the same answer), so the result is unknown
// too, saying which logs were read.
func TestForceTerminateInFlightNothingNewerInTheLog(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		newer bool
	}{{"newer elsewhere", true}, {"none newer", false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, boot := kafkatest.NewCluster(t)
			const id, topic = "loader-2-1", "orders"
			p := kafkatest.Producer(t, boot, id, time.Minute)
			kafkatest.Begin(t, p)
			produceValues(t, p, topic, 0, "t1-a")
			a := newAdmin(t, boot)
			act := forceTerminate(txnOf(t, refresh(t, a, nil), id))
			holdFirst(c, kmsg.InitProducerID, func() {
				kafkatest.End(t, p, true)
				if tc.newer {
					time.Sleep(5 * time.Millisecond)
					kafkatest.Begin(t, p)
					produceValues(t, p, topic, 1, "t2-a")
				}
			})
			r := execute(t, a, act)
			t.Logf("result: %s", r.Summary())
			if r.OK() || !r.Unknown || strings.Contains(r.Summary(), "nothing was aborted") {
				t.Errorf("want an unknown outcome that never says nothing was aborted, got %q (unknown %v)", r.Summary(), r.Unknown)
			}
			for _, want := range []string{"unknown outcome, re-check: the coordinator answered without an error: the one shown had committed before the request arrived (its COMMIT marker is at offset 1 of orders-0), and the request fenced its producer",
				"nothing of a newer transaction of " + id + " follows it in the log of orders-0, but a newer one open elsewhere would have been aborted"} {
				if !strings.Contains(r.Summary(), want) {
					t.Errorf("the result should say %q: %s", want, r.Summary())
				}
			}
			if tc.newer {
				fenced(t, p)
				if got := committedValues(t, boot, topic, 1); len(got) != 0 {
					t.Errorf("read_committed reads %q on orders-1, want nothing: T2 was aborted", got)
				}
			}
		})
	}
}

// The same race for an abort on a partition: the WriteTxnMarkers is held
// while the producer's transaction shown commits (its coordinator still
// knew it: kfake is made to hide the partition from DescribeTransactions so
// that it looks hanging) and a newer one writes to the partition under the
// same producer id and epoch. The leader writes the ABORT over the newer
// transaction's records there; its producer goes on and commits, and its
// records on that partition are lost to read_committed readers. The result
// says so instead of "sent; the broker accepted it".
func TestAbortPartitionInFlightAbortsTheNewer(t *testing.T) {
	t.Parallel()
	c, boot := kafkatest.NewCluster(t)
	const topic = "orders"
	p := kafkatest.Producer(t, boot, "hidden-0-3", time.Minute)
	kafkatest.Begin(t, p)
	produceValues(t, p, topic, 0, "t1-a", "t1-b")
	c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.DescribeTransactions}, Topic: topic, Partitions: []int32{0}, Count: -1})
	a := newAdmin(t, boot)
	p0 := partOf(t, refresh(t, a, nil), topic, 0)
	if len(p0.Producers) != 1 {
		t.Fatalf("producers on orders-0: %+v", p0.Producers)
	}
	act := abortOn(p0, p0.Producers[0])

	markers := holdFirst(c, kmsg.WriteTxnMarkers, func() {
		kafkatest.End(t, p, true)
		time.Sleep(5 * time.Millisecond)
		kafkatest.Begin(t, p)
		produceValues(t, p, topic, 0, "t2-a")
	})
	r := execute(t, a, act)
	t.Logf("result: %s", r.Summary())
	if markers.Load() != 1 || r.Sends != 1 {
		t.Fatalf("result %+v after %d WriteTxnMarkers", r, markers.Load())
	}
	const want = "unknown outcome, re-check: the one shown had committed before the marker arrived (its COMMIT marker is at offset 2 of orders-0); " +
		"a newer transaction of producer "
	if r.OK() || !r.Unknown || !strings.HasPrefix(r.Summary(), want) || !strings.Contains(r.Summary(), "began there at offset 3 and an ABORT marker follows at offset 4: this marker most likely aborted its records on orders-0") {
		t.Errorf("result %q (unknown %v), want it to start %q and name the newer transaction's records", r.Summary(), r.Unknown, want)
	}
	// kfake's coordinator still lets it commit; its records on orders-0 are gone.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	t.Logf("the newer transaction's commit: %v", p.EndTransaction(ctx, kgo.TryCommit))
	if got := committedValues(t, boot, topic, 0); strings.Join(got, ",") != "t1-a,t1-b" {
		t.Errorf("read_committed reads %q, want T1's records only", got)
	}
}
