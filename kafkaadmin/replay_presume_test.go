package kafkaadmin_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// A replay of a large log first presumes, from the offsets at times, where
// its newest events are, and reads the records before that in silence. The
// events are the ones a replay of every record keeps; where the guess is
// wrong (too few records counted on an event), it reads the log again and
// still keeps the same ones.
func TestReplayPresumesWhereTheNewestEventsAre(t *testing.T) {
	t.Parallel()
	_, boot := kafkatest.NewCluster(t)
	lw := kafkatest.NewTxnLog(t, boot) // creates the log's partitions
	lw.State(0, "presume-first", 0)
	cl, err := kgo.NewClient(kgo.SeedBrokers(boot...), kgo.DefaultProduceTopic("__transaction_state"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	base := time.Now().Add(-10 * time.Minute).Truncate(time.Millisecond)
	write := func(part int32, id string, state kmsg.TransactionState, start, at time.Time) {
		v := kmsg.NewTxnMetadataValue()
		v.Version, v.ProducerID, v.ProducerEpoch, v.TimeoutMillis = 1, 7, 1, 60000
		v.State, v.StartTimestamp, v.LastUpdateTimestamp = state, start.UnixMilli(), at.UnixMilli()
		if state == 1 || state == 2 {
			v.Topics = []kmsg.TxnMetadataValueTopic{{Topic: "orders", Partitions: []int32{0}}}
		}
		r := &kgo.Record{Partition: part, Key: kafkatest.TxnLogKey(0, id), Value: v.AppendTo(nil), Timestamp: at}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// 40 transactions a second apart, each three records in one of three
	// partitions, written in time order.
	for i := range 40 {
		at := base.Add(time.Duration(i) * time.Second)
		id := fmt.Sprintf("presume-%d", i%7)
		p := int32(i % 3)
		write(p, id, 1, at, at)
		write(p, id, 2, at, at.Add(100*time.Millisecond))
		write(p, id, 4, at, at.Add(200*time.Millisecond))
	}
	a := newAdmin(t, boot)
	const limit = 6
	for _, tt := range []struct {
		since time.Time
		per   int64
		again bool
	}{
		{time.Time{}, 8, false},
		{time.Time{}, 1, true},
		// A window the doubling steps past: the guess is made within it.
		{base.Add(10 * time.Second), 8, false},
	} {
		all, err := a.Replay(ctx, tt.since, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := all.Events[len(all.Events)-limit:]
		got, again, err := kafkaadmin.ReplayPresuming(a, ctx, tt.since, limit, tt.per)
		if err != nil {
			t.Fatal(err)
		}
		if again != tt.again {
			t.Errorf("counting %d records an event: read again %v, want %v", tt.per, again, tt.again)
		}
		if !slices.EqualFunc(got.Events, want, sameEvent) {
			t.Errorf("counting %d records an event: kept\n%v\nwant\n%v", tt.per, got.Events, want)
		}
		if got.Oldest != all.Oldest || got.Whole != all.Whole {
			t.Errorf("counting %d records an event: oldest %v whole %v, want %v %v", tt.per, got.Oldest, got.Whole, all.Oldest, all.Whole)
		}
	}
}

func sameEvent(a, b model.Event) bool {
	a.At, b.At = a.At.UTC(), b.At.UTC()
	a.Begun, b.Begun = a.Begun.UTC(), b.Begun.UTC()
	return a == b
}
