package kafkaadmin

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/model"
)

// TestProducersReadAgainOnlyWhenThePartitionMoved: a pinned partition whose
// offsets stay as they were is asked for its producers twice (the second
// read finds it quiet), then shown from that read; a write, or
// producersFor passing, has it asked again. At 2,000,000 Flink ids a pinned
// partition answered 170,000 producers every refresh.
func TestProducersReadAgainOnlyWhenThePartitionMoved(t *testing.T) {
	cluster, boot := kafkatest.NewCluster(t)
	var asked atomic.Int32
	cluster.ControlKey(int16(kmsg.DescribeProducers), func(kmsg.Request) (kmsg.Response, error, bool) {
		cluster.KeepControl()
		asked.Add(1)
		return nil, nil, false
	})
	open := kafkatest.OpenTxn(t, boot, "cache-open", "cache-topic", time.Minute)
	defer open.Close()
	c, err := New(Config{Bootstrap: boot, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	now := time.Now()
	c.prods.now = func() time.Time { return now }
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	s, err := c.Refresh(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	step := func(what string, wantAsked bool) {
		t.Helper()
		before := asked.Load()
		next, err := c.Refresh(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		s = next
		if got := asked.Load() > before; got != wantAsked {
			t.Errorf("%s: asked for producers %v, want %v", what, got, wantAsked)
		}
		p, ok := s.Partition(tp{Topic: "cache-topic", Partition: 0})
		if !ok || !p.Pinned() || len(p.Producers) != 1 || p.Producers[0].CurrentTxnStartOffset != 0 || p.Err != "" {
			t.Fatalf("%s: partition %+v, %v; want pinned by its one producer", what, p, ok)
		}
	}
	step("the second read, offsets unmoved", true)
	step("quiet: the last read stands", false)
	step("still quiet", false)
	kafkatest.Produce(t, open, "cache-topic", 0, 1)
	step("written to: its offsets moved", true)
	step("moved at the last read: asked beside the offsets", true)
	step("quiet again", false)
	now = now.Add(producersFor)
	step("read producersFor ago", true)
}

// TestProducersNotReusedAcrossAMove: a last read stands only for the same
// offsets, leader and topic (a topic deleted and made again under its name
// has another id), and within producersFor.
func TestProducersNotReusedAcrossAMove(t *testing.T) {
	p := tp{Topic: "t", Partition: 0}
	at := time.Now()
	metaOf := func(leader int32, id byte) metaMap {
		return metaMap{"t": {id: [16]byte{id}, leader: map[int32]int32{0: leader}}}
	}
	rows := []model.Producer{{ProducerID: 7, CurrentTxnStartOffset: 3}}
	for _, tc := range []struct {
		name     string
		meta     metaMap
		hwm, lso int64
		later    time.Duration
		reused   bool
	}{
		{"unmoved", metaOf(1, 1), 10, 3, 0, true},
		{"written to", metaOf(1, 1), 11, 3, 0, false},
		{"its transaction ended", metaOf(1, 1), 10, 10, 0, false},
		{"another leader", metaOf(2, 1), 10, 3, 0, false},
		{"the topic made again", metaOf(1, 2), 10, 3, 0, false},
		{"read producersFor ago", metaOf(1, 1), 10, 3, producersFor, false},
	} {
		c := producerCache{now: func() time.Time { return at }}
		for range 2 { // read twice at the same offsets: quiet
			c.remember([]tp{p}, map[tp][]model.Producer{p: rows}, []tp{p}, metaOf(1, 1), map[tp]int64{p: 10}, map[tp]int64{p: 3})
		}
		c.now = func() time.Time { return at.Add(tc.later) }
		kept, ask := c.reuse([]tp{p}, tc.meta, map[tp]int64{p: tc.hwm}, map[tp]int64{p: tc.lso})
		if got := kept[p] != nil && len(ask) == 0; got != tc.reused {
			t.Errorf("%s: reused %v (asked %v), want %v", tc.name, got, ask, tc.reused)
		}
	}
	// Read once: it may predate its offsets, so it is asked again.
	c := producerCache{}
	c.remember([]tp{p}, map[tp][]model.Producer{p: rows}, []tp{p}, metaOf(1, 1), map[tp]int64{p: 10}, map[tp]int64{p: 3})
	if kept, _ := c.reuse([]tp{p}, metaOf(1, 1), map[tp]int64{p: 10}, map[tp]int64{p: 3}); kept != nil {
		t.Error("a partition read once was reused")
	}
	// A read that failed is forgotten at once, and so is a partition no
	// longer shown.
	c.remember([]tp{p}, map[tp][]model.Producer{p: rows}, []tp{p}, metaOf(1, 1), map[tp]int64{p: 10}, map[tp]int64{p: 3})
	c.remember([]tp{p}, nil, []tp{p}, metaOf(1, 1), map[tp]int64{p: 10}, map[tp]int64{p: 3})
	if len(c.by) != 0 {
		t.Errorf("a failed read left %d partitions remembered", len(c.by))
	}
	c.remember([]tp{p}, map[tp][]model.Producer{p: rows}, []tp{p}, metaOf(1, 1), map[tp]int64{p: 10}, map[tp]int64{p: 3})
	c.remember(nil, nil, nil, metaOf(1, 1), nil, nil)
	if len(c.by) != 0 {
		t.Errorf("%d partitions remembered after none was shown", len(c.by))
	}
}
