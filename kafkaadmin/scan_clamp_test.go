package kafkaadmin_test

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// The high watermark and the LSO come from two requests. When the LSO read second
// is past the high watermark read first (the log moved on in between), the
// partition must show as caught up, never as LSO > HWM nor as pinned.
func TestLSOReadPastTheHighWatermarkIsNotAPin(t *testing.T) {
	t.Parallel()
	c, boot := kafkatest.NewCluster(t)
	p := kafkatest.Producer(t, boot, "clamp-0-1", time.Minute)
	kafkatest.Begin(t, p)
	kafkatest.Produce(t, p, "orders", 0, 3)
	kafkatest.End(t, p, true)

	// Every read_uncommitted ListOffsets answers 0: a high watermark read before
	// the records arrived.
	c.ControlKey(int16(kmsg.ListOffsets), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := kreq.(*kmsg.ListOffsetsRequest)
		if req.IsolationLevel != 0 {
			return nil, nil, false
		}
		resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
		for _, rt := range req.Topics {
			st := kmsg.NewListOffsetsResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewListOffsetsResponseTopicPartition()
				sp.Partition, sp.Offset, sp.Timestamp = rp.Partition, 0, -1
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})

	orders0 := model.TopicPartition{Topic: "orders", Partition: 0}
	a, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: boot, Timeout: 5 * time.Second, Watch: []model.TopicPartition{orders0}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	s := refresh(t, a, nil)
	part, ok := s.Partition(orders0)
	if !ok {
		t.Fatal("the watched orders-0 is not in the snapshot")
	}
	if part.LastStableOffset <= 0 || part.HighWatermark != part.LastStableOffset || part.Pinned() {
		t.Errorf("orders-0: HWM %d LSO %d pinned %v; want the LSO (past 0) and HWM equal, not pinned",
			part.HighWatermark, part.LastStableOffset, part.Pinned())
	}
	for _, p := range s.Partitions {
		if p.LastStableOffset > p.HighWatermark {
			t.Errorf("%s-%d: LSO %d above HWM %d", p.Topic, p.Partition, p.LastStableOffset, p.HighWatermark)
		}
	}
}
