package kafkaadmin

import (
	"context"
	"fmt"
	"maps"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/model"
)

// A partition's producer state (DescribeProducers) is where an abort is
// planned from and re-checked against, and how a refresh sees open
// transactions on the partitions it watches.

// DescribeProducers lists the producer state of one partition, at its leader,
// or at the given broker (a replica) when broker >= 0. Rows are sorted by
// producer id.
func (c *Client) DescribeProducers(ctx context.Context, p model.TopicPartition, broker int32) ([]model.Producer, error) {
	ctx, cancel := c.scope(ctx)
	defer cancel()
	rows, errs := c.describeProducersOn(ctx, []tp{p}, broker)
	if msg := errs.get(p); msg != "" {
		return nil, fmt.Errorf("%s-%d: %s", p.Topic, p.Partition, msg)
	}
	r, ok := rows[p]
	if !ok {
		return nil, fmt.Errorf("%s-%d: no answer for this partition", p.Topic, p.Partition)
	}
	return r, nil
}

// describeProducersOn is DescribeProducers on the leaders (broker < 0, kgo
// routes each partition), or entirely on one broker.
func (c *Client) describeProducersOn(ctx context.Context, tps []tp, broker int32) (map[tp][]model.Producer, *partErrs) {
	var errs partErrs
	if broker < 0 {
		return c.producers(ctx, tps, &errs), &errs
	}
	ctx, cancel := c.deadline(ctx)
	defer cancel()
	req := producersRequest(tps)
	out := make(map[tp][]model.Producer, len(tps))
	what := fmt.Sprintf("producers on broker %d", broker)
	resp, err := c.kgo.Broker(int(broker)).Request(ctx, req)
	if err != nil {
		for _, p := range tps {
			errs.record(p, false, what, err)
		}
		return out, &errs
	}
	readProducers(resp.(*kmsg.DescribeProducersResponse), what, out, &errs)
	return out, &errs
}

// producers runs DescribeProducers on the partitions' leaders.
func (c *Client) producers(ctx context.Context, tps []tp, errs *partErrs) map[tp][]model.Producer {
	if len(tps) == 0 {
		return nil // kgo would send an empty request to some broker
	}
	rctx, cancel := c.deadline(ctx)
	defer cancel()
	req := producersRequest(tps)
	out := make(map[tp][]model.Producer, len(tps))
	shards := c.kgo.RequestSharded(rctx, req)
	noteSilentShards(ctx, rctx, shards)
	for _, sh := range shards {
		if sh.Err != nil {
			for _, rt := range sh.Req.(*kmsg.DescribeProducersRequest).Topics {
				for _, p := range rt.Partitions {
					errs.record(tp{Topic: rt.Topic, Partition: p}, false, "producers", sh.Err)
				}
			}
			continue
		}
		readProducers(sh.Resp.(*kmsg.DescribeProducersResponse), "producers", out, errs)
	}
	unanswered(tps, out, errs, false, "producers")
	return out
}

// producersRequest asks DescribeProducers about tps.
func producersRequest(tps []tp) *kmsg.DescribeProducersRequest {
	req := kmsg.NewPtrDescribeProducersRequest()
	for topic, parts := range groupByTopic(tps) {
		rt := kmsg.NewDescribeProducersRequestTopic()
		rt.Topic = topic
		rt.Partitions = parts
		req.Topics = append(req.Topics, rt)
	}
	return req
}

// readProducers files each partition of resp in out, its producers sorted by
// id, or its error in errs under what.
func readProducers(resp *kmsg.DescribeProducersResponse, what string, out map[tp][]model.Producer, errs *partErrs) {
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			p := tp{Topic: rt.Topic, Partition: rp.Partition}
			if e := kerr.ErrorForCode(rp.ErrorCode); e != nil {
				errs.record(p, false, what, e)
				continue
			}
			ids := make([]int64, len(rp.ActiveProducers))
			for i := range rp.ActiveProducers {
				ids[i] = rp.ActiveProducers[i].ProducerID
			}
			rows := make([]model.Producer, len(ids))
			for k, i := range model.ProducerOrder(ids) {
				rows[k] = fromActiveProducer(rp.ActiveProducers[i])
			}
			out[p] = rows
		}
	}
}

func fromActiveProducer(ap kmsg.DescribeProducersResponseTopicPartitionActiveProducer) model.Producer {
	pr := model.Producer{
		ProducerID:            ap.ProducerID,
		ProducerEpoch:         int16(ap.ProducerEpoch),
		LastSequence:          ap.LastSequence,
		CoordinatorEpoch:      ap.CoordinatorEpoch,
		CurrentTxnStartOffset: ap.CurrentTxnStartOffset,
	}
	if ap.LastTimestamp > 0 {
		pr.LastWriteMs = ap.LastTimestamp
	}
	return pr
}

// producersOf is producers with each leader in meta asked directly: kgo
// would first ask for metadata, perhaps of a broker that hangs, and wait it
// out a second time in a refresh that already has (TestCluster3PausedBroker
// saw that Metadata request); kgo finds the leaders meta does not know.
func (c *Client) producersOf(ctx context.Context, tps []tp, meta metaMap, errs *partErrs) map[tp][]model.Producer {
	out := make(map[tp][]model.Producer, len(tps))
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for leader, ps := range byLeader(tps, meta) {
		wg.Go(func() {
			var got map[tp][]model.Producer
			if leader < 0 {
				got = c.producers(ctx, ps, errs)
			} else {
				got = c.producersAt(ctx, leader, ps, errs)
			}
			mu.Lock()
			defer mu.Unlock()
			maps.Copy(out, got)
		})
	}
	wg.Wait()
	return out
}

// producersAt asks leader for the producers of tps; a leader that refuses
// the connection at once (a restart) is left to kgo to find again.
func (c *Client) producersAt(ctx context.Context, leader int32, tps []tp, errs *partErrs) map[tp][]model.Producer {
	parent := ctx
	ctx, cancel := c.deadline(ctx)
	defer cancel()
	out := make(map[tp][]model.Producer, len(tps))
	resp, err := c.kgo.Broker(int(leader)).Request(ctx, producersRequest(tps))
	noteSilent(parent, ctx, leader, err)
	if err != nil {
		if dialRefused(err) && ctx.Err() == nil && parent.Err() == nil {
			return c.producers(parent, tps, errs)
		}
		for _, p := range tps {
			errs.record(p, false, "producers", err)
		}
		return out
	}
	readProducers(resp.(*kmsg.DescribeProducersResponse), "producers", out, errs)
	unanswered(tps, out, errs, false, "producers")
	return out
}
