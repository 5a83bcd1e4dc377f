package kafkaadmin

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/model"
)

type tp = model.TopicPartition

// topicMeta is what metadata says about one topic.
type topicMeta struct {
	id     [16]byte
	err    string
	denied error // err is this authorization refusal
	leader map[int32]int32
	perr   map[int32]string
}

// metaMap is metadata per topic name.
type metaMap map[string]topicMeta

// leaderOf returns the partition's leader, or -1 and why not.
func (m metaMap) leaderOf(p tp) (int32, string) {
	t, ok := m[p.Topic]
	switch {
	case !ok:
		return -1, "metadata: topic not reported"
	case t.err != "":
		return -1, "metadata: " + t.err
	case t.perr[p.Partition] != "":
		return t.leader[p.Partition], "metadata: " + t.perr[p.Partition]
	}
	l, ok := t.leader[p.Partition]
	if !ok {
		return -1, "metadata: partition not reported"
	}
	return l, ""
}

// topicMetadata reads leaders and topic ids of the given topics. A failure
// leaves the map empty: every partition then carries the error.
func (c *Client) topicMetadata(ctx context.Context, topics []string) (metaMap, string) {
	if len(topics) == 0 {
		return metaMap{}, ""
	}
	return c.metadata(ctx, topics)
}

// metadata reads leaders and topic ids of topics, or of every topic when
// topics is nil.
func (c *Client) metadata(ctx context.Context, topics []string) (metaMap, string) {
	out := make(metaMap, len(topics))
	req := kmsg.NewPtrMetadataRequest()
	for _, t := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t)
		req.Topics = append(req.Topics, rt)
	}
	resp, err := c.hedgedMetadata(ctx, req)
	if err != nil {
		return out, "metadata: " + errText(err)
	}
	for _, t := range resp.Topics {
		if t.Topic == nil {
			continue
		}
		m := topicMeta{id: t.TopicID, leader: map[int32]int32{}, perr: map[int32]string{}}
		if e := kerr.ErrorForCode(t.ErrorCode); e != nil {
			m.err = errText(e)
			if authErr(e) {
				m.denied = e
			}
		}
		for _, p := range t.Partitions {
			m.leader[p.Partition] = p.Leader
			if e := kerr.ErrorForCode(p.ErrorCode); e != nil {
				m.perr[p.Partition] = errText(e)
			}
		}
		out[*t.Topic] = m
	}
	return out, ""
}

// partErrs collects per-partition problems from several requests.
type partErrs struct {
	mu     sync.Mutex
	m      map[tp][]string
	denied map[tp]denial // acl.go
}

func (e *partErrs) add(p tp, msg string) {
	if msg == "" {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.m == nil {
		e.m = map[tp][]string{}
	}
	for _, have := range e.m[p] {
		if have == msg {
			return
		}
	}
	e.m[p] = append(e.m[p], msg)
}

// get is every problem of p in one line, a refusal first.
func (e *partErrs) get(p tp) string {
	part := model.Partition{TopicPartition: p}
	e.fill(&part)
	return part.Err
}

// has reports whether a problem with p is filed; unlike get it may be called
// while other reads are still filing theirs.
func (e *partErrs) has(p tp) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, denied := e.denied[p]
	return denied || len(e.m[p]) > 0
}

func groupByTopic(tps []tp) map[string][]int32 {
	m := make(map[string][]int32)
	for _, p := range tps {
		m[p.Topic] = append(m[p.Topic], p.Partition)
	}
	return m
}

// stableOffsets reads the high watermarks, then the last stable offsets. Both
// only grow and LSO ≤ HWM at any instant, so reading them in this order never
// shows a partition pinned that was not: with no open transaction the LSO read
// second is at least the high watermark read first. An LSO past the high
// watermark read before it is clamped, so a snapshot never holds LSO > HWM.
func (c *Client) stableOffsets(ctx context.Context, tps []tp, errs *partErrs) (hwm, lso map[tp]int64) {
	// At once: one after the other, a hung leader was waited out twice.
	var wg sync.WaitGroup
	wg.Go(func() { hwm = c.offsets(ctx, tps, 0, "high watermark", errs) })
	lso = c.offsets(ctx, tps, 1, "last stable offset", errs)
	wg.Wait()
	for p, l := range lso {
		if h, ok := hwm[p]; ok && l > h {
			hwm[p] = l
		}
	}
	return hwm, lso
}

// offsets lists the latest offset of each partition: the high watermark with
// read_uncommitted (isolation 0), the last stable offset with read_committed (1).
func (c *Client) offsets(ctx context.Context, tps []tp, isolation int8, what string, errs *partErrs) map[tp]int64 {
	parent := ctx
	ctx, cancel := c.deadline(ctx)
	defer cancel()
	req := kmsg.NewPtrListOffsetsRequest()
	req.IsolationLevel = isolation
	req.TimeoutMillis = int32(c.cfg.Timeout / time.Millisecond)
	for topic, parts := range groupByTopic(tps) {
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = topic
		for _, p := range parts {
			rp := kmsg.NewListOffsetsRequestTopicPartition()
			rp.Partition = p
			rp.Timestamp = -1 // latest
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	out := make(map[tp]int64, len(tps))
	shards := c.kgo.RequestSharded(ctx, req)
	noteHungShards(parent, ctx, shards)
	for _, sh := range shards {
		if sh.Err != nil {
			for _, rt := range sh.Req.(*kmsg.ListOffsetsRequest).Topics {
				for _, rp := range rt.Partitions {
					errs.record(tp{Topic: rt.Topic, Partition: rp.Partition}, true, what, sh.Err)
				}
			}
			continue
		}
		for _, rt := range sh.Resp.(*kmsg.ListOffsetsResponse).Topics {
			for _, rp := range rt.Partitions {
				p := tp{Topic: rt.Topic, Partition: rp.Partition}
				if e := kerr.ErrorForCode(rp.ErrorCode); e != nil {
					errs.record(p, true, what, e)
					continue
				}
				out[p] = rp.Offset
			}
		}
	}
	unanswered(tps, out, errs, true, what)
	return out
}

// unanswered marks the partitions an answer left out without an error: a
// missing offset or producer list is unknown, not "none".
func unanswered[V any](tps []tp, got map[tp]V, errs *partErrs, offsets bool, what string) {
	for _, p := range tps {
		if _, ok := got[p]; !ok && !errs.has(p) {
			errs.record(p, offsets, what, errors.New("the broker's answer left this partition out"))
		}
	}
}
