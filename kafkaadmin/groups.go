package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
	typ   string // model.GroupClassic, ...
}

// maxFetchPairs bounds groups × pinned partitions named in one OffsetFetch;
// past it every group's offsets are fetched whole and filtered here, which
// costs the brokers more but keeps the request small.
const maxFetchPairs = 50000

// listGroups asks every broker for its groups (one request each), with
// their types (ListGroups v5+; an older broker's groups are classic). A
// broker of known that kgo did not ask is a failure like any other.
func (c *Client) listGroups(ctx context.Context, known []int32) ([]listedGroup, string) {
	rctx, cancel := c.deadline(ctx)
	defer cancel()
	req := kmsg.NewPtrListGroupsRequest()
	var (
		out   []listedGroup
		probs []string
	)
	shards := c.kgo.RequestSharded(rctx, req)
	noteSilentShards(ctx, rctx, shards)
	unasked := map[int32]error{}
	notAsked(shards, known, unasked)
	for b, why := range unasked {
		probs = append(probs, fmt.Sprintf("broker %d: %s", b, why))
	}
	for _, sh := range shards {
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
			typ := strings.ToLower(g.GroupType)
			switch {
			case g.ProtocolType == "share":
				typ = model.GroupShare
			case typ == "":
				typ = model.GroupClassic
			}
			out = append(out, listedGroup{id: g.Group, state: g.GroupState, typ: typ})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	if len(probs) > 0 {
		sort.Strings(probs)
		// The groups of the brokers that answered are still worth reading;
		// those of the others are missing, and the error says so.
		return out, "consumer groups: " + strings.Join(probs, "; ")
	}
	return out, ""
}

// groupCommits reads the committed offsets of every group on the pinned
// partitions: one OffsetFetch per group coordinator (v8+ batches groups).
func (c *Client) groupCommits(ctx context.Context, groups []listedGroup, pinned []tp, meta metaMap, hwm map[tp]int64) ([]model.GroupCommit, string) {
	if len(groups) == 0 || len(pinned) == 0 {
		return nil, ""
	}
	var shares []listedGroup
	groups = slices.DeleteFunc(slices.Clone(groups), func(g listedGroup) bool {
		if g.typ == model.GroupShare {
			shares = append(shares, g)
			return true
		}
		return false
	})
	var (
		shareCommits []model.GroupCommit
		shareErr     string
		done         = make(chan struct{})
	)
	go func() {
		defer close(done)
		shareCommits, shareErr = c.shareStarts(ctx, shares, pinned, hwm)
	}()
	commits, err := c.offsetCommits(ctx, groups, pinned, meta)
	<-done
	commits = append(commits, shareCommits...)
	model.SortGroupCommits(commits)
	return commits, strings.Join(slices.DeleteFunc([]string{err, shareErr}, func(s string) bool { return s == "" }), "; ")
}

// offsetCommits reads the committed offsets of the groups that commit them.
func (c *Client) offsetCommits(ctx context.Context, groups []listedGroup, pinned []tp, meta metaMap) ([]model.GroupCommit, string) {
	if len(groups) == 0 {
		return nil, ""
	}
	rctx, cancel := c.deadline(ctx)
	defer cancel()
	byID := make(map[string]listedGroup, len(groups))
	for _, g := range groups {
		byID[g.id] = g
	}
	want := make(map[tp]bool, len(pinned))
	for _, p := range pinned {
		want[p] = true
	}
	var (
		out      []model.GroupCommit
		failed   = groupFailures{}
		answered = make(map[string]bool, len(groups))
	)
	shards := c.kgo.RequestSharded(rctx, offsetFetchRequest(groups, pinned, meta))
	noteSilentShards(ctx, rctx, shards)
	for _, sh := range shards {
		asked := sh.Req.(*kmsg.OffsetFetchRequest).Groups
		shardErr := sh.Err
		if shardErr == nil {
			shardErr = kerr.ErrorForCode(sh.Resp.(*kmsg.OffsetFetchResponse).ErrorCode)
		}
		if shardErr != nil {
			for _, g := range asked {
				answered[g.Group] = true // with this error
			}
			failed.add(shardErr, len(asked))
			continue
		}
		for _, g := range sh.Resp.(*kmsg.OffsetFetchResponse).Groups {
			answered[g.Group] = true
			out = append(out, commitsOf(g, byID[g.Group], want, failed)...)
		}
	}
	// A group the answers left out has offsets we did not read, not none.
	if left := len(groups) - len(answered); left > 0 {
		failed.add(errors.New("the coordinator's answer left them out"), left)
	}
	return out, failed.text()
}

// offsetFetchRequest asks for every group's offsets on the pinned
// partitions, or on all it committed past maxFetchPairs.
func offsetFetchRequest(groups []listedGroup, pinned []tp, meta metaMap) *kmsg.OffsetFetchRequest {
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
		rg := kmsg.NewOffsetFetchRequestGroup()
		rg.Group = g.id
		rg.Topics = topics // nil: every partition the group committed
		req.Groups = append(req.Groups, rg)
	}
	return req
}

// commitsOf is what group g (in state) committed on the wanted partitions;
// what it could not be read for goes to failed.
func commitsOf(g kmsg.OffsetFetchResponseGroup, lg listedGroup, want map[tp]bool, failed groupFailures) []model.GroupCommit {
	switch e := kerr.ErrorForCode(g.ErrorCode); {
	case e == kerr.GroupIDNotFound:
		return nil // deleted since it was listed
	case e != nil:
		failed.add(e, 1)
		return nil
	}
	var (
		out         []model.GroupCommit
		topicDenied error
	)
	for _, t := range g.Topics {
		for _, p := range t.Partitions {
			x := tp{Topic: t.Topic, Partition: p.Partition}
			if e := kerr.ErrorForCode(p.ErrorCode); e != nil && authErr(e) && want[x] {
				topicDenied = e
			}
			if !want[x] || p.Offset < 0 || p.ErrorCode != 0 {
				continue
			}
			out = append(out, model.GroupCommit{Group: g.Group, State: lg.state, Type: lg.typ, TopicPartition: x, Offset: p.Offset})
		}
	}
	if topicDenied != nil {
		failed.add(topicDenied, 1)
	}
	return out
}

// groupFailures counts groups whose offsets could not be read, by why.
type groupFailures map[string]int

func (f groupFailures) add(err error, groups int) {
	why := errText(err)
	if authErr(err) {
		why = "\x00" + why // sorts first, and text() knows it for a refusal
	}
	f[why] += groups
}

// text sums up the groups whose offsets could not be read, refusals first
// so that it starts with model.NoPermission when there are any.
func (f groupFailures) text() string {
	var denied, other []string
	for why, n := range f {
		count := fmt.Sprintf("%d groups", n)
		if n == 1 {
			count = "1 group"
		}
		if d, ok := strings.CutPrefix(why, "\x00"); ok {
			denied = append(denied, count+": "+d)
			continue
		}
		other = append(other, count+": "+why)
	}
	sort.Strings(denied)
	sort.Strings(other)
	var out []string
	if len(denied) > 0 {
		out = append(out, model.NoPermission+" to read the offsets of "+strings.Join(denied, "; ")+" (OffsetFetch needs DESCRIBE on the group and the topic)")
	}
	if len(other) > 0 {
		out = append(out, "consumer group offsets not read for "+strings.Join(other, "; "))
	}
	return strings.Join(out, "; ")
}
