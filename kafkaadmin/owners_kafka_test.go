package kafkaadmin

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// realKafka is the shared test broker of scripts/kafka-up, or skips. listOwners only reads
// (DescribeTransactions of ids nobody uses, Metadata, ListTransactions), so the shared
// broker will do.
func realKafka(tb testing.TB) string {
	b := os.Getenv("TXNSCOPE_KAFKA_BOOTSTRAP")
	if b == "" {
		tb.Skip("TXNSCOPE_KAFKA_BOOTSTRAP is not set: start scripts/kafka-up and source its env")
	}
	return b
}

func clientFor(tb testing.TB, bootstrap ...string) *Client {
	c, err := New(Config{Bootstrap: bootstrap, Timeout: 10 * time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(c.Close)
	return c
}

// TestTxnPartitionOnKafka: a new id's first record lands in the __transaction_state partition
// txnPartition names, on a real broker; and a settled broker vouches for its listing.
func TestTxnPartitionOnKafka(t *testing.T) {
	bootstrap := realKafka(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	for i := range 4 {
		id := fmt.Sprintf("txnscope-partition-check-%d-%016x", i, rand.Uint64())
		before := txnStateEnds(ctx, t, adm)
		init := kmsg.NewPtrInitProducerIDRequest()
		init.TransactionalID, init.TransactionTimeoutMillis = kmsg.StringPtr(id), 60000
		init.ProducerID, init.ProducerEpoch = -1, -1
		resp, err := init.RequestWith(ctx, cl)
		if err == nil {
			err = kerr.ErrorForCode(resp.ErrorCode)
		}
		if err != nil {
			t.Fatalf("InitProducerId %s: %v", id, err)
		}
		var grew []int
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			// The record may reach the high watermark a moment later.
			after := txnStateEnds(ctx, t, adm)
			grew = grew[:0]
			for p := range after {
				if after[p] > before[p] {
					grew = append(grew, p)
				}
			}
			if slices.Contains(grew, txnPartition(id, len(after))) || time.Now().After(deadline) {
				break
			}
		}
		after := txnStateEnds(ctx, t, adm)
		// Other tests share the broker and may write to other partitions
		// meanwhile: the one named must be among those that grew.
		if want := txnPartition(id, len(after)); !slices.Contains(grew, want) {
			t.Errorf("%s was written to __transaction_state partitions %v, txnPartition says %d", id, grew, want)
		}
	}

	c := clientFor(t, bootstrap)
	if _, hidden, err := c.listOwnersSeen(ctx, []int64{1}); err != nil || hidden {
		t.Fatalf("a settled broker: listOwners = hidden %v, %v", hidden, err)
	}
}

func txnStateEnds(ctx context.Context, t *testing.T, adm *kadm.Client) map[int]int64 {
	t.Helper()
	ends, err := adm.ListEndOffsets(ctx, txnStateTopic)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]int64{}
	ends.Each(func(o kadm.ListedOffset) { out[int(o.Partition)] = o.Offset })
	if len(out) == 0 {
		t.Fatalf("%s has no partitions", txnStateTopic)
	}
	return out
}

// BenchmarkListOwners is what the check costs a caller: listOwners for one producer id against
// kfake (3 brokers, no __transaction_state: 50 probes) and the real broker (50 partitions),
// next to the bare listing it replaces (listTxnsOn).
func BenchmarkListOwners(b *testing.B) {
	checked := func(c *Client) error {
		_, err := c.listOwners(context.Background(), []int64{1})
		return err
	}
	bare := func(c *Client) error {
		_, _, err := c.listTxnsOn(context.Background(), []int64{1}, nil)
		return err
	}
	run := func(b *testing.B, bootstrap []string, list func(*Client) error) {
		c := clientFor(b, bootstrap...)
		for b.Loop() {
			if err := list(c); err != nil {
				b.Fatal(err)
			}
		}
	}
	fake, err := kfake.NewCluster(kfake.NumBrokers(3))
	if err != nil {
		b.Fatal(err)
	}
	defer fake.Close()
	b.Run("kfake/checked", func(b *testing.B) { run(b, fake.ListenAddrs(), checked) })
	b.Run("kfake/bare", func(b *testing.B) { run(b, fake.ListenAddrs(), bare) })
	b.Run("kafka/checked", func(b *testing.B) { run(b, []string{realKafka(b)}, checked) })
	b.Run("kafka/bare", func(b *testing.B) { run(b, []string{realKafka(b)}, bare) })
}
