package kafkaadmin

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/model"
)

// scan is one refresh's look at every partition of the cluster.
type scan struct {
	parts     []model.Partition
	scanned   int
	unread    int
	commits   []model.GroupCommit
	groupsErr string
}

// logEnds are the high watermarks the scan read of __transaction_state's
// partitions: the log's end for its reader (fromLog), with no request of
// its own. err says which partition it could not read.
type logEnds struct {
	ends map[int32]int64
	err  error
}

func logEndsOf(meta metaMap, hwm map[tp]int64, errs *partErrs) logEnds {
	m, ok := meta[txnStateTopic]
	if !ok || m.err != "" {
		return logEnds{err: errNoTxnLog}
	}
	out := logEnds{ends: make(map[int32]int64, len(m.leader))}
	for p := range m.leader {
		at := tp{Topic: txnStateTopic, Partition: p}
		e, ok := hwm[at]
		if !ok {
			return logEnds{err: fmt.Errorf("partition %d: %s", p, cmp.Or(errs.get(at), "not read"))}
		}
		out.ends[p] = e
	}
	return out
}

// clusterMetadata reads the brokers, and the leaders and topic ids of every
// topic: one request a refresh (it was three: the brokers, the topics, and
// __transaction_state's partitions for the log's end).
func (c *Client) clusterMetadata(ctx context.Context) ([]int32, metaMap, error) {
	resp, err := c.hedgedMetadata(ctx, kmsg.NewPtrMetadataRequest())
	if err != nil {
		return nil, nil, err
	}
	brokers, err := brokersOf(resp)
	if err != nil {
		return nil, nil, err
	}
	return brokers, metaOf(resp, metaMap{}), nil
}

// every lists the partitions metadata reports, plus the watched ones it
// does not (a deleted topic, a failed read), sorted.
func every(meta metaMap, watch []tp) []tp {
	seen := make(map[tp]bool, len(watch))
	var out []tp
	for topic, m := range meta {
		if m.err != "" {
			continue
		}
		for p := range m.leader {
			x := tp{Topic: topic, Partition: p}
			seen[x] = true
			out = append(out, x)
		}
	}
	for _, p := range watch {
		if !seen[p] {
			out = append(out, p)
		}
	}
	model.SortPartitions(out)
	return out
}

// scanPartitions reads the high watermark and LSO of every partition: one
// ListOffsets per leader and isolation level, whatever the partition count.
// DescribeProducers goes only to the watched partitions (at once) and to the
// ones found pinned (after), except where the last read stands
// (producerCache). The snapshot keeps those two sets, and consumer
// groups are read only when something is pinned: a group can only be stuck
// behind a pin.
func (c *Client) scanPartitions(ctx context.Context, watch []tp, meta metaMap, brokers []int32, ends chan<- logEnds) scan {
	all := every(meta, watch)
	var (
		errs         partErrs
		hwm, lso     map[tp]int64
		producers    map[tp][]model.Producer
		groups       []listedGroup
		groupsErr    string
		wg           sync.WaitGroup
		extraWG      sync.WaitGroup
		extraProds   map[tp][]model.Producer
		groupsListed = make(chan struct{})
	)
	ask, askWatch := answering(ctx, all, meta, &errs), answering(ctx, watch, meta, &errs)
	wg.Go(func() {
		hwm, lso = c.stableOffsets(ctx, ask, meta, &errs)
		if ends != nil {
			ends <- logEndsOf(meta, hwm, &errs)
		}
	})
	askNow, quiet := c.prods.split(askWatch)
	wg.Go(func() { producers = c.producersOf(ctx, askNow, meta, &errs) })
	go func() {
		defer close(groupsListed)
		groups, groupsErr = c.listGroups(ctx, brokers)
	}()
	wg.Wait()

	pinned, extra := pinnedOf(all, watch, hwm, lso)
	kept, again := c.prods.reuse(append(quiet, extra...), meta, hwm, lso)
	if len(again) > 0 {
		extraWG.Go(func() { extraProds = c.producersOf(ctx, again, meta, &errs) })
	}
	<-groupsListed
	var commits []model.GroupCommit
	if len(pinned) > 0 && len(groups) > 0 {
		var readErr string
		commits, readErr = c.groupCommits(ctx, groups, pinned, meta, hwm)
		groupsErr = strings.Join(slices.DeleteFunc([]string{groupsErr, readErr}, func(s string) bool { return s == "" }), "; ")
	}
	extraWG.Wait()

	out := scan{scanned: len(all), unread: unread(all, hwm, lso), commits: commits, groupsErr: groupsErr}
	keep := make([]tp, 0, len(watch)+len(extra))
	keep = append(append(keep, watch...), extra...)
	model.SortPartitions(keep)
	read := make(map[tp][]model.Producer, len(producers)+len(extraProds))
	maps.Copy(read, producers)
	maps.Copy(read, extraProds)
	c.prods.remember(append(askNow, again...), read, keep, meta, hwm, lso)
	for _, p := range keep {
		prods, ok := read[p]
		if !ok {
			prods = kept[p]
		}
		out.parts = append(out.parts, partitionRow(p, meta, hwm, lso, prods, &errs))
	}
	sort.Slice(out.parts, func(i, j int) bool { return out.parts[i].TopicPartition.Less(out.parts[j].TopicPartition) })
	return out
}

// answering are the partitions of tps whose leader this refresh has not
// waited out already; the others get the error they would get again.
func answering(ctx context.Context, tps []tp, meta metaMap, errs *partErrs) []tp {
	if !anySilent(ctx) {
		return tps
	}
	out := make([]tp, 0, len(tps))
	for _, p := range tps {
		l, _ := meta.leaderOf(p)
		if err := silentErr(ctx, l); err != nil {
			errs.record(p, true, fmt.Sprintf("leader %d", l), err)
			continue
		}
		out = append(out, p)
	}
	return out
}

// pinnedOf lists the partitions whose LSO is behind their high watermark
// (an open transaction holds them), and the ones of those not watched.
func pinnedOf(all, watch []tp, hwm, lso map[tp]int64) (pinned, extra []tp) {
	inWatch := make(map[tp]bool, len(watch))
	for _, p := range watch {
		inWatch[p] = true
	}
	for _, p := range all {
		h, okH := hwm[p]
		l, okL := lso[p]
		if !okH || !okL || l >= h {
			continue
		}
		pinned = append(pinned, p)
		if !inWatch[p] {
			extra = append(extra, p)
		}
	}
	return pinned, extra
}

// partitionRow is what the snapshot shows of p: -1 for what could not be
// read, and why in its Err.
func partitionRow(p tp, meta metaMap, hwm, lso map[tp]int64, prods []model.Producer, errs *partErrs) model.Partition {
	part := model.Partition{TopicPartition: p, Leader: -1, HighWatermark: -1, LastStableOffset: -1}
	switch l, msg := meta.leaderOf(p); {
	case meta[p.Topic].denied != nil:
		errs.deny(p, true, meta[p.Topic].denied)
	default:
		part.Leader = l
		errs.add(p, msg)
	}
	if v, ok := hwm[p]; ok {
		part.HighWatermark = v
	}
	if v, ok := lso[p]; ok {
		part.LastStableOffset = v
	}
	part.Producers = prods
	errs.fill(&part)
	return part
}

// unread counts the partitions whose high watermark or LSO is missing.
func unread(all []tp, hwm, lso map[tp]int64) int {
	n := 0
	for _, p := range all {
		if _, ok := hwm[p]; !ok {
			n++
			continue
		}
		if _, ok := lso[p]; !ok {
			n++
		}
	}
	return n
}
