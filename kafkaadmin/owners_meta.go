package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/model"
)

// txnStateView is __transaction_state as one broker's own metadata shows it:
// a coordinator loads a partition only after its metadata names it leader,
// at the epoch it loads with.
type txnStateView struct {
	err     error // the request failed
	exists  bool
	missing bool  // UNKNOWN_TOPIC_OR_PARTITION
	denied  error // ACLs refuse it (Metadata needs DESCRIBE on the topic)
	// leader and epoch are by partition.
	leader, epoch []int32
}

// txnStateMeta asks every broker, once each, in parallel.
func (c *Client) txnStateMeta(ctx context.Context, brokers []int32) map[int32]txnStateView {
	out := make(map[int32]txnStateView, len(brokers))
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for _, b := range brokers {
		wg.Go(func() {
			v := c.txnStateAt(ctx, b)
			mu.Lock()
			out[b] = v
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

func (c *Client) txnStateAt(ctx context.Context, b int32) txnStateView {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(txnStateTopic)
	req.Topics = []kmsg.MetadataRequestTopic{rt}
	req.AllowAutoTopicCreation = false
	resp, err := c.askBroker(ctx, b, req)
	if err != nil {
		return txnStateView{err: err}
	}
	for _, t := range resp.(*kmsg.MetadataResponse).Topics {
		if t.Topic == nil || *t.Topic != txnStateTopic {
			continue
		}
		switch e := kerr.ErrorForCode(t.ErrorCode); {
		case errors.Is(e, kerr.UnknownTopicOrPartition):
			return txnStateView{missing: true}
		case authErr(e):
			return txnStateView{denied: e}
		case e != nil:
			return txnStateView{err: e}
		}
		v := txnStateView{exists: true, leader: make([]int32, len(t.Partitions)), epoch: make([]int32, len(t.Partitions))}
		for _, p := range t.Partitions {
			if p.Partition < 0 || int(p.Partition) >= len(t.Partitions) {
				return txnStateView{err: fmt.Errorf("%s: partition %d of %d reported", txnStateTopic, p.Partition, len(t.Partitions))}
			}
			v.leader[p.Partition], v.epoch[p.Partition] = p.Leader, p.LeaderEpoch
		}
		return v
	}
	return txnStateView{err: errors.New("the topic was not reported")}
}

// txnStatePartitions is how many partitions __transaction_state has, as every
// broker sees it: from the metadata, or the brokers' setting when the
// metadata is refused, or Kafka's default when there is no such topic.
func (c *Client) txnStatePartitions(ctx context.Context, brokers []int32, meta map[int32]txnStateView) (int, error) {
	n, missing, denied := -1, 0, error(nil)
	for _, b := range brokers {
		v := meta[b]
		switch {
		case v.err != nil:
			return 0, fmt.Errorf("%s: broker %d did not say how %s is laid out: %s", notLoaded, b, txnStateTopic, errText(v.err))
		case v.missing:
			missing++
		case v.denied != nil:
			denied = v.denied
		case n >= 0 && n != len(v.leader):
			return 0, fmt.Errorf("%s: the brokers disagree on how many partitions %s has (%d, %d)", notLoaded, txnStateTopic, n, len(v.leader))
		default:
			n = len(v.leader)
		}
	}
	switch {
	case n >= 0 && missing > 0:
		return 0, fmt.Errorf("%s: %s exists on some brokers only (it is being created)", notLoaded, txnStateTopic)
	case n >= 0:
		return n, nil
	case denied == nil:
		return defaultTxnStatePartitions, nil
	}
	n, err := c.txnStatePartitionsSetting(ctx, brokers)
	switch {
	case err != nil && authErr(err):
		return 0, fmt.Errorf("%s to tell how many partitions %s has, so whether every coordinator has loaded cannot be checked (%s; %s)",
			model.NoPermission, txnStateTopic, errText(denied), needTxnStateLayout)
	case err != nil:
		return 0, fmt.Errorf("%s: cannot tell how many partitions %s has (its metadata: %s; %s: %s)",
			notLoaded, txnStateTopic, errText(denied), txnStatePartitionsKey, errText(err))
	}
	return n, nil
}

// needTxnStateLayout names the ACLs that tell how __transaction_state is laid out.
const needTxnStateLayout = "Metadata needs DESCRIBE on the topic " + txnStateTopic + ", or DescribeConfigs DESCRIBE_CONFIGS on the cluster"

// txnStatePartitionsSetting reads the brokers' transaction.state.log.num.partitions;
// they must all say the same.
func (c *Client) txnStatePartitionsSetting(ctx context.Context, brokers []int32) (int, error) {
	req := brokerConfigRequest(brokers, txnStatePartitionsKey)
	ctx, cancel := c.deadline(ctx)
	defer cancel()
	n := 0
	for _, sh := range c.kgo.RequestSharded(ctx, req) {
		if sh.Err != nil {
			return 0, sh.Err
		}
		for _, r := range sh.Resp.(*kmsg.DescribeConfigsResponse).Resources {
			if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
				return 0, err
			}
			v := -1
			for _, cf := range r.Configs {
				if cf.Name == txnStatePartitionsKey && cf.Value != nil {
					v, _ = strconv.Atoi(*cf.Value)
				}
			}
			switch {
			case v <= 0:
				return 0, fmt.Errorf("broker %s did not report it", r.ResourceName)
			case n > 0 && v != n:
				return 0, fmt.Errorf("the brokers disagree (%d, %d)", n, v)
			}
			n = v
		}
	}
	if n == 0 {
		return 0, errors.New("not reported")
	}
	return n, nil
}
