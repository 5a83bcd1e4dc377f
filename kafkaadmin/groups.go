package kafkaadmin

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/model"
)

// listedGroup is one consumer group as ListGroups reports it.
type listedGroup struct {
	id    string
	state string
}

// maxFetchPairs bounds groups × pinned partitions named in one OffsetFetch;
// past it every group's offsets are fetched whole and filtered here, which
// costs the brokers more but keeps the request small.
const maxFetchPairs = 50000

// listGroups asks every broker for its groups (one request each). Share
// groups are left out: they commit no offsets.
func (c *Client) listGroups(ctx context.Context) ([]listedGroup, string) {
	ctx, cancel := c.deadline(ctx)
	defer cancel()
	req := kmsg.NewPtrListGroupsRequest()
	var (
		out   []listedGroup
		probs []string
	)
	for _, sh := range c.kgo.RequestSharded(ctx, req) {
		if sh.Err != nil {
			probs = append(probs, fmt.Sprintf("broker %d: %s", sh.Meta.NodeID, errText(sh.Err)))
			continue
		}
		resp := sh.Resp.(*kmsg.ListGroupsResponse)
		if e := kerr.ErrorForCode(resp.ErrorCode); e != nil {
			probs = append(probs, fmt.Sprintf("broker %d: %s", sh.Meta.NodeID, errText(e)))
			continue
		}
		for _, g := range resp.Groups {
			if g.GroupType == "share" || g.ProtocolType == "share" {
				continue
			}
			out = append(out, listedGroup{id: g.Group, state: g.GroupState})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	if len(probs) > 0 && len(out) == 0 {
		return nil, "consumer groups: " + strings.Join(probs, "; ")
	}
	return out, ""
}

// groupCommits reads the committed offsets of every group on the pinned
// partitions: one OffsetFetch per group coordinator (v8+ batches groups).
func (c *Client) groupCommits(ctx context.Context, groups []listedGroup, pinned []tp, meta metaMap) ([]model.GroupCommit, string) {
	if len(groups) == 0 || len(pinned) == 0 {
		return nil, ""
	}
	ctx, cancel := c.deadline(ctx)
	defer cancel()
	state := make(map[string]string, len(groups))
	want := make(map[tp]bool, len(pinned))
	for _, p := range pinned {
		want[p] = true
	}
	var topics []kmsg.OffsetFetchRequestGroupTopic
	if len(groups)*len(pinned) <= maxFetchPairs {
		for topic, parts := range groupByTopic(pinned) {
			rt := kmsg.NewOffsetFetchRequestGroupTopic()
			rt.Topic = topic
			rt.TopicID = meta[topic].id
			rt.Partitions = parts
			topics = append(topics, rt)
		}
	}
	req := kmsg.NewPtrOffsetFetchRequest()
	for _, g := range groups {
		state[g.id] = g.state
		rg := kmsg.NewOffsetFetchRequestGroup()
		rg.Group = g.id
		rg.Topics = topics // nil: every partition the group committed
		req.Groups = append(req.Groups, rg)
	}
	var (
		out    []model.GroupCommit
		failed = map[string]int{}
	)
	for _, sh := range c.kgo.RequestSharded(ctx, req) {
		if sh.Err != nil {
			failed[errText(sh.Err)] += len(sh.Req.(*kmsg.OffsetFetchRequest).Groups)
			continue
		}
		resp := sh.Resp.(*kmsg.OffsetFetchResponse)
		if e := kerr.ErrorForCode(resp.ErrorCode); e != nil {
			failed[errText(e)] += len(sh.Req.(*kmsg.OffsetFetchRequest).Groups)
			continue
		}
		for _, g := range resp.Groups {
			switch e := kerr.ErrorForCode(g.ErrorCode); {
			case e == kerr.GroupIDNotFound:
				continue // deleted since it was listed
			case e != nil:
				failed[errText(e)]++
				continue
			}
			for _, t := range g.Topics {
				for _, p := range t.Partitions {
					x := tp{Topic: t.Topic, Partition: p.Partition}
					if !want[x] || p.Offset < 0 || p.ErrorCode != 0 {
						continue
					}
					out = append(out, model.GroupCommit{Group: g.Group, State: state[g.Group], TopicPartition: x, Offset: p.Offset})
				}
			}
		}
	}
	model.SortGroupCommits(out)
	return out, failedText(failed)
}

// failedText sums up groups whose offsets could not be read, by error.
func failedText(failed map[string]int) string {
	if len(failed) == 0 {
		return ""
	}
	var parts []string
	for why, n := range failed {
		parts = append(parts, fmt.Sprintf("%d groups: %s", n, why))
	}
	sort.Strings(parts)
	return "consumer group offsets not read for " + strings.Join(parts, "; ")
}
