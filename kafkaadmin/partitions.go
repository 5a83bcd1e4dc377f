package kafkaadmin

import (
	"context"
	"errors"
	"maps"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
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
	return metaOf(resp, out), ""
}

// metaOf puts the topics of resp into out.
func metaOf(resp *kmsg.MetadataResponse, out metaMap) metaMap {
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
	return out
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

// has reports whether a problem with p is filed.
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
// second is at least the high watermark read first (read the other way round,
// or at once, a transaction ending in between shows an LSO behind a high
// watermark that already holds its marker). An LSO past the high watermark
// read before it is clamped, so a snapshot never holds LSO > HWM.
//
// Each leader in meta (this refresh's) is asked directly and on its own: kgo
// would first ask for metadata again, perhaps of a broker that hangs, and one
// leader that does not answer would hold up the others' second read. The LSO
// is asked only where the high watermark was read, so such a leader is waited
// out once. Without meta, or without a leader in it, kgo finds the leaders.
func (c *Client) stableOffsets(ctx context.Context, tps []tp, meta metaMap, errs *partErrs) (hwm, lso map[tp]int64) {
	hwm, lso = make(map[tp]int64, len(tps)), make(map[tp]int64, len(tps))
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for leader, ps := range byLeader(tps, meta) {
		wg.Go(func() {
			h := c.offsets(ctx, leader, ps, 0, "high watermark", errs)
			read := make([]tp, 0, len(h))
			for _, p := range ps {
				if _, ok := h[p]; ok {
					read = append(read, p)
				}
			}
			l := c.offsets(ctx, leader, read, 1, "last stable offset", errs)
			mu.Lock()
			defer mu.Unlock()
			maps.Copy(hwm, h)
			maps.Copy(lso, l)
		})
	}
	wg.Wait()
	for p, l := range lso {
		if h, ok := hwm[p]; ok && l > h {
			hwm[p] = l
		}
	}
	return hwm, lso
}

// byLeader groups tps by their leader in meta; -1 holds those it has none for.
func byLeader(tps []tp, meta metaMap) map[int32][]tp {
	out := map[int32][]tp{}
	for _, p := range tps {
		l := int32(-1)
		if meta != nil {
			if at, msg := meta.leaderOf(p); msg == "" && at >= 0 {
				l = at
			}
		}
		out[l] = append(out[l], p)
	}
	return out
}

// offsets lists the latest offset of each partition: the high watermark with
// read_uncommitted (isolation 0), the last stable offset with read_committed
// (1). leader is asked for all of them (kgo finds each one's when it is -1);
// a partition it no longer leads, or all of them when it cannot be connected
// to, are asked again where kgo finds the leaders.
func (c *Client) offsets(ctx context.Context, leader int32, tps []tp, isolation int8, what string, errs *partErrs) map[tp]int64 {
	out := make(map[tp]int64, len(tps))
	if len(tps) == 0 {
		return out
	}
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
	var shards []kgo.ResponseShard
	if leader >= 0 {
		resp, err := c.kgo.Broker(int(leader)).Request(ctx, req)
		shards = []kgo.ResponseShard{{Meta: kgo.BrokerMetadata{NodeID: leader}, Req: req, Resp: resp, Err: err}}
	} else {
		shards = c.kgo.RequestSharded(ctx, req)
	}
	noteSilentShards(parent, ctx, shards)
	var moved []tp
	for _, sh := range shards {
		if sh.Err != nil && leader >= 0 && dialRefused(sh.Err) && ctx.Err() == nil {
			// The leader is down (a restart): kgo finds the partitions'
			// leaders now, and retries. Not after any other error: a
			// connection cut because a request on it timed out, or a
			// connect that timed out (a hung broker's accept queue is
			// full), is a broker that hangs, and would be waited out
			// again (TestCluster3PausedBroker).
			return c.offsets(parent, -1, tps, isolation, what, errs)
		}
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
				switch e := kerr.ErrorForCode(rp.ErrorCode); {
				case e != nil && leader >= 0 && leaderMoved(e):
					moved = append(moved, p)
				case e != nil:
					errs.record(p, true, what, e)
				default:
					out[p] = rp.Offset
				}
			}
		}
	}
	if len(moved) > 0 {
		maps.Copy(out, c.offsets(parent, -1, moved, isolation, what, errs))
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

// dialFailed reports a broker that could not be connected to.
func dialFailed(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// dialRefused is dialFailed at once: nothing listens (refused, reset), not
// a connect that ran out of time.
func dialRefused(err error) bool {
	var op *net.OpError
	return dialFailed(err) && !(errors.As(err, &op) && op.Timeout()) && !errors.Is(err, context.DeadlineExceeded)
}
