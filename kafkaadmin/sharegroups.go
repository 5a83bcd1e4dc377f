package kafkaadmin

import (
	"context"
	"errors"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/model"
)

// shareIsolation is the group config that makes a share group read only
// committed records (KIP-932); its default is read_uncommitted, which no
// open transaction holds back.
const shareIsolation = "share.isolation.level"

// shareStarts reads, for the share groups among groups that read
// committed records, how far they have acknowledged on the pinned
// partitions: a share group's "committed offset" is the first offset it has
// not acknowledged. The share coordinator keeps a start offset and the
// acknowledged ranges past it, and DescribeShareGroupOffsets gives the start
// offset and the lag, the offsets from the first unacknowledged one to the
// high watermark (Kafka 4.4: a group that acknowledged offsets 0-4 of 14
// answers start 0, lag 8); so the position is the high watermark, as this
// refresh read it, less the lag, and never below the start offset. A high
// watermark that moved between the two reads shows the group further on,
// not stuck. A group whose isolation cannot be read is counted as not read,
// never taken for one or the other.
func (c *Client) shareStarts(ctx context.Context, groups []listedGroup, pinned []tp, hwm map[tp]int64) ([]model.GroupCommit, string) {
	if len(groups) == 0 || len(pinned) == 0 {
		return nil, ""
	}
	failed := groupFailures{}
	committed := c.readCommittedShares(ctx, groups, failed)
	if len(committed) == 0 {
		return nil, failed.text()
	}
	rctx, cancel := c.deadline(ctx)
	defer cancel()
	req := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
	byID := map[string]listedGroup{}
	for _, g := range committed {
		byID[g.id] = g
		rg := kmsg.NewDescribeShareGroupOffsetsRequestGroup()
		rg.GroupID = g.id
		for topic, parts := range groupByTopic(pinned) {
			rt := kmsg.NewDescribeShareGroupOffsetsRequestGroupTopic()
			rt.Topic = topic
			rt.Partitions = parts
			rg.Topics = append(rg.Topics, rt)
		}
		req.Groups = append(req.Groups, rg)
	}
	want := make(map[tp]bool, len(pinned))
	for _, p := range pinned {
		want[p] = true
	}
	var out []model.GroupCommit
	answered := map[string]bool{}
	shards := c.kgo.RequestSharded(rctx, req)
	noteSilentShards(ctx, rctx, shards)
	for _, sh := range shards {
		asked := sh.Req.(*kmsg.DescribeShareGroupOffsetsRequest).Groups
		if sh.Err != nil {
			for _, g := range asked {
				answered[g.GroupID] = true
			}
			failed.add(sh.Err, len(asked))
			continue
		}
		for _, g := range sh.Resp.(*kmsg.DescribeShareGroupOffsetsResponse).Groups {
			answered[g.GroupID] = true
			if e := kerr.ErrorForCode(g.ErrorCode); e != nil {
				if e != kerr.GroupIDNotFound {
					failed.add(e, 1)
				}
				continue
			}
			lg := byID[g.GroupID]
			for _, t := range g.Topics {
				for _, p := range t.Partitions {
					x := tp{Topic: t.Topic, Partition: p.Partition}
					// -1: the share-partition was never started; nothing is held there.
					if !want[x] || p.ErrorCode != 0 || p.StartOffset < 0 {
						continue
					}
					at := p.StartOffset
					if h, ok := hwm[x]; ok && p.Lag >= 0 {
						at = max(at, h-p.Lag)
					}
					out = append(out, model.GroupCommit{Group: g.GroupID, State: lg.state, Type: model.GroupShare, TopicPartition: x, Offset: at})
				}
			}
		}
	}
	if left := len(committed) - len(answered); left > 0 {
		failed.add(errors.New("the coordinator's answer left them out"), left)
	}
	return out, failed.text()
}

// readCommittedShares are the groups whose share.isolation.level is
// read_committed (DescribeConfigs on GROUP resources, Kafka 4.1+).
func (c *Client) readCommittedShares(ctx context.Context, groups []listedGroup, failed groupFailures) []listedGroup {
	rctx, cancel := c.deadline(ctx)
	defer cancel()
	req := kmsg.NewPtrDescribeConfigsRequest()
	for _, g := range groups {
		r := kmsg.NewDescribeConfigsRequestResource()
		r.ResourceType = kmsg.ConfigResourceTypeGroupConfig
		r.ResourceName = g.id
		r.ConfigNames = []string{shareIsolation}
		req.Resources = append(req.Resources, r)
	}
	resp, err := req.RequestWith(rctx, c.kgo)
	if err != nil {
		failed.add(err, len(groups))
		return nil
	}
	byID := map[string]listedGroup{}
	for _, g := range groups {
		byID[g.id] = g
	}
	var out []listedGroup
	seen := map[string]bool{}
	for _, r := range resp.Resources {
		seen[r.ResourceName] = true
		if e := kerr.ErrorForCode(r.ErrorCode); e != nil {
			if e != kerr.GroupIDNotFound {
				failed.add(e, 1)
			}
			continue
		}
		for _, cfg := range r.Configs {
			if cfg.Name == shareIsolation && cfg.Value != nil && strings.EqualFold(*cfg.Value, "read_committed") {
				out = append(out, byID[r.ResourceName])
			}
		}
	}
	if left := len(groups) - len(seen); left > 0 {
		failed.add(errors.New("DescribeConfigs left out their share.isolation.level"), left)
	}
	return out
}
