package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/model"
)

// producersBatch is how many partitions one DescribeProducers request of
// find-hanging carries (kafka-transactions.sh's batch size); producersParallel
// batches are in flight at once (kafka-transactions.sh sends them one by one).
const (
	producersBatch    = 500
	producersParallel = 4
)

// HangingScope is what find-hanging searches: the partitions of Topic (only
// Partition when >= 0), or of every topic (internal ones too) when Topic is
// empty; with Broker >= 0 only the partitions that broker holds a replica of,
// and DescribeProducers is asked of that broker instead of the leaders.
type HangingScope struct {
	Topic      string
	Partition  int32
	Broker     int32
	MaxTimeout time.Duration
}

// HangingReport is what find-hanging found.
type HangingReport struct {
	Hanging []model.Hanging
	// Possibly are the candidates no visible transactional id owns while ACLs
	// hide some ids (Reason model.OwnerMaybeHidden): not reported as hanging,
	// their owner may be live. Hidden then says so in one line (starting
	// with model.HiddenIDs), for stderr.
	Possibly []model.Hanging
	Hidden   string
	// OwnersUnknown says why no candidate was judged when the coordinators
	// could not all vouch for who owns them (one did not answer, or was not
	// known to have loaded its transactions): nothing is reported then.
	OwnersUnknown string
	Partitions    int // partitions searched
	Candidates    int // open transactions older than the max timeout
	Now           time.Time
}

// FindHanging runs kafka-transactions.sh find-hanging's search: DescribeProducers
// on the scope's partitions in batches, candidates past s.MaxTimeout,
// ListTransactions filtered by their producer ids, DescribeTransactions on the
// ids found, then model.FindHanging. Partitions that could not be read are
// skipped and named in the error, next to what the others showed; when the
// owners of the candidates cannot all be asked, nothing is reported as hanging
// (a guess could get a live transaction aborted).
func (c *Client) FindHanging(ctx context.Context, s HangingScope) (HangingReport, error) {
	ctx, cancel := c.scope(ctx)
	defer cancel()
	var rep HangingReport
	tps, err := c.hangingPartitions(ctx, s)
	if err != nil {
		return rep, err
	}
	rep.Partitions = len(tps)

	rows, partErr := c.producersInBatches(ctx, tps, s.Broker)
	rep.Now = time.Now()
	pids := model.CandidatePIDs(rows, rep.Now, s.MaxTimeout)
	rep.Candidates = len(model.HangingCandidates(rows, rep.Now, s.MaxTimeout))
	if len(pids) == 0 {
		return rep, partErr
	}

	var (
		owners            map[int64]model.Owner
		ownErr, hiddenErr error
		hidden, refused   bool
		wg                sync.WaitGroup
	)
	wg.Go(func() { owners, refused, ownErr = c.ownersOf(ctx, pids) })
	wg.Go(func() { hidden, hiddenErr = c.ownerMayBeHidden(ctx) })
	wg.Wait()
	if ownErr != nil {
		rep.OwnersUnknown = ownErr.Error()
		return rep, errors.Join(partErr, fmt.Errorf("owners unknown, no producer is judged: %w", ownErr))
	}
	// Probes refused by ACLs are hidden ids too, whatever the other probe said.
	hidden = hidden || refused
	if hiddenErr != nil {
		// Unknown is treated as hidden: a guess could get a live
		// transaction aborted.
		hidden = true
		hiddenErr = fmt.Errorf("could not tell whether ACLs hide transactional ids, so producers no visible id owns are not judged: %s", errText(hiddenErr))
	}
	for _, h := range model.FindHangingHidden(rows, rep.Now, s.MaxTimeout, owners, hidden) {
		if h.Reason == model.OwnerMaybeHidden {
			rep.Possibly = append(rep.Possibly, h)
			continue
		}
		rep.Hanging = append(rep.Hanging, h)
	}
	if len(rep.Possibly) > 0 && hiddenErr == nil {
		rep.Hidden = fmt.Sprintf("%s: you may DESCRIBE only some, so %d open transactions no visible id owns are not reported (%s)",
			model.HiddenIDs, len(rep.Possibly), model.OwnerMaybeHidden)
	}
	var undescribed []string
	for _, o := range owners {
		if o.Err != "" {
			undescribed = append(undescribed, o.ID+": "+o.Err)
		}
	}
	sort.Strings(undescribed)
	var descErr error
	if len(undescribed) > 0 {
		descErr = fmt.Errorf("could not describe %d owning transactional ids, their producers are not judged: %v", len(undescribed), undescribed)
	}
	return rep, errors.Join(partErr, descErr, hiddenErr)
}

// hangingPartitions lists the partitions to search, as kafka-transactions.sh
// does: a given partition as is; otherwise the topic's (or every topic's)
// partitions, those with a replica on the broker when one is given.
func (c *Client) hangingPartitions(ctx context.Context, s HangingScope) ([]tp, error) {
	if s.Topic != "" && s.Partition >= 0 {
		return []tp{{Topic: s.Topic, Partition: s.Partition}}, nil
	}
	dctx, cancel := c.deadline(ctx)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	if s.Topic != "" {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(s.Topic)
		req.Topics = append(req.Topics, rt)
	} // nil Topics: every topic, internal ones included
	resp, err := c.kgo.Request(dctx, req)
	if err != nil {
		return nil, fmt.Errorf("metadata: %s", errText(err))
	}
	var out []tp
	for _, t := range resp.(*kmsg.MetadataResponse).Topics {
		if t.Topic == nil {
			continue
		}
		if e := kerr.ErrorForCode(t.ErrorCode); e != nil {
			if authErr(e) {
				return nil, fmt.Errorf("topic %s: %s: %s (Metadata needs DESCRIBE on the topic)", *t.Topic, model.NoPermission, errText(e))
			}
			return nil, fmt.Errorf("topic %s: %s", *t.Topic, errText(e))
		}
		for _, p := range t.Partitions {
			if s.Broker < 0 || hasReplica(p.Replicas, s.Broker) {
				out = append(out, tp{Topic: *t.Topic, Partition: p.Partition})
			}
		}
	}
	model.SortPartitions(out)
	return out, nil
}

func hasReplica(replicas []int32, b int32) bool {
	for _, r := range replicas {
		if r == b {
			return true
		}
	}
	return false
}

// producersInBatches runs DescribeProducers over tps, producersBatch at a time.
func (c *Client) producersInBatches(ctx context.Context, tps []tp, broker int32) ([]model.ProducerOn, error) {
	var (
		mu     sync.Mutex
		wg     sync.WaitGroup
		sem    = make(chan struct{}, producersParallel)
		byPart = make(map[tp][]model.Producer, len(tps))
		failed = map[tp]string{}
	)
	for start := 0; start < len(tps); start += producersBatch {
		batch := tps[start:min(start+producersBatch, len(tps))]
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			rows, errs := c.describeProducersOn(ctx, batch, broker)
			mu.Lock()
			defer mu.Unlock()
			for _, p := range batch {
				if msg := errs.get(p); msg != "" {
					failed[p] = msg
				} else if r, ok := rows[p]; ok {
					byPart[p] = r
				} else {
					failed[p] = "no answer for this partition"
				}
			}
		})
	}
	wg.Wait()
	var out []model.ProducerOn
	for _, p := range tps {
		for _, pr := range byPart[p] {
			out = append(out, model.ProducerOn{TopicPartition: p, Producer: pr})
		}
	}
	if len(failed) == 0 {
		return out, nil
	}
	names := make([]tp, 0, len(failed))
	for p := range failed {
		names = append(names, p)
	}
	model.SortPartitions(names)
	first := names[0]
	return out, fmt.Errorf("DescribeProducers failed on %d of %d partitions, not searched (first: %s-%d: %s)",
		len(failed), len(tps), first.Topic, first.Partition, failed[first])
}

// ownersOf asks every broker which transactional ids own the producer ids,
// then describes those ids. A producer id absent from the result is owned by
// no id. Any broker not answering the listing, or not known to have loaded
// its transactions, is an error: the owner could be one it has not listed.
// hidden: ACLs refused listOwners' probes.
func (c *Client) ownersOf(ctx context.Context, pids []int64) (owners map[int64]model.Owner, hidden bool, err error) {
	list, hidden, err := c.listOwnersSeen(ctx, pids)
	if err != nil {
		return nil, false, err
	}
	want := make(map[int64]bool, len(pids))
	for _, p := range pids {
		want[p] = true
	}
	refs := make([]txnRef, 0, len(list))
	for id, l := range list {
		if want[l.pid] {
			refs = append(refs, txnRef{id: id, coord: l.coord})
		}
	}
	// Deterministic when (unexpectedly) two ids list one producer id.
	slices.SortFunc(refs, func(a, b txnRef) int { return strings.Compare(a.id, b.id) })
	owners = make(map[int64]model.Owner, len(refs))
	descs := c.describeTxns(ctx, refs)
	for _, r := range refs {
		id := r.id
		o := model.Owner{ID: id}
		switch d := descs[id]; {
		case d.gone:
		case d.err != "":
			o.Err = d.err
		default:
			t := d.txn
			o.Txn = &t
		}
		owners[list[id].pid] = o
	}
	return owners, hidden, nil
}
