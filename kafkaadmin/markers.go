package kafkaadmin

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/model"
)

// abortPartition writes an ABORT marker for one producer on one partition, at
// its leader (what kafka-transactions.sh abort does): for a transaction the
// coordinator no longer accounts for. It is sent once and never retried:
// running it again re-reads everything first.
func (c *Client) abortPartition(ctx context.Context, a model.Action, rec model.Recorder) model.Result {
	p := a.TopicPartition
	fresh, owner, err := c.rereadPartition(ctx, a)
	if err != nil {
		return refused("refused: %s", err)
	}
	if err := model.CheckAbortPartition(a, fresh, true, owner, time.Now()); err != nil {
		return model.Result{Refused: true, Err: err.Error()}
	}
	resp, r := c.send(ctx, rec, 1, fresh.Leader, markersRequest(a), a.WireTo(fresh.Leader, 0), model.Result{})
	if resp == nil {
		return r
	}
	for _, rm := range resp.(*kmsg.WriteTxnMarkersResponse).Markers {
		for _, rt := range rm.Topics {
			for _, rp := range rt.Partitions {
				if rm.ProducerID != a.ProducerID || rt.Topic != p.Topic || rp.Partition != p.Partition {
					continue
				}
				if ke := kerr.ErrorForCode(rp.ErrorCode); ke != nil {
					answered(&r, ke)
					return r
				}
				r.After = c.afterMarker(ctx, a)
				return r
			}
		}
	}
	r.Unknown = true
	r.Err = fmt.Sprintf("broker %d answered without a result for %s-%d", fresh.Leader, p.Topic, p.Partition)
	return r
}

func markersRequest(a model.Action) *kmsg.WriteTxnMarkersRequest {
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID = a.ProducerID
	m.ProducerEpoch = a.ProducerEpoch
	m.Committed = false
	m.CoordinatorEpoch = max(a.CoordinatorEpoch, 0) // as kafka-transactions.sh sends it
	mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	mt.Topic = a.Topic
	mt.Partitions = []int32{a.Partition}
	m.Topics = append(m.Topics, mt)
	req.Markers = append(req.Markers, m)
	return req
}

// rereadPartition reads the partition's leader and producers afresh, and the
// transaction the coordinators now list for the producer (nil: none, and the
// partition says whether ACLs may hide one).
func (c *Client) rereadPartition(ctx context.Context, a model.Action) (model.Partition, *model.Txn, error) {
	p := a.TopicPartition
	meta, metaErr := c.topicMetadata(ctx, []string{p.Topic})
	if metaErr != "" {
		return model.Partition{}, nil, fmt.Errorf("could not re-read %s-%d: %s", p.Topic, p.Partition, metaErr)
	}
	if d := meta[p.Topic].denied; d != nil {
		return model.Partition{}, nil, fmt.Errorf("%s to re-read %s-%d: %s (Metadata needs DESCRIBE on the topic)", model.NoPermission, p.Topic, p.Partition, errText(d))
	}
	leader, msg := meta.leaderOf(p)
	if msg != "" || leader < 0 {
		return model.Partition{}, nil, fmt.Errorf("%s-%d has no reachable leader: %s", p.Topic, p.Partition, msg)
	}
	var errs partErrs
	rows, ok := c.producers(ctx, []tp{p}, &errs)[p]
	switch {
	case errs.denied[p].producers:
		return model.Partition{}, nil, fmt.Errorf("%s to re-read the producers of %s-%d: %s (%s)", model.NoPermission, p.Topic, p.Partition, errs.denied[p].why, needProducers)
	case !ok:
		return model.Partition{}, nil, fmt.Errorf("could not re-read %s-%d: %s", p.Topic, p.Partition, errs.get(p))
	}
	fresh := model.Partition{TopicPartition: p, Leader: leader, HighWatermark: -1, LastStableOffset: -1, Producers: rows}
	owner, probesHidden, err := c.ownerOf(ctx, a.ProducerID)
	switch {
	case err != nil && model.Denied(err.Error()):
		return model.Partition{}, nil, err
	case err != nil:
		return model.Partition{}, nil, fmt.Errorf("could not ask the coordinators about producer %d: %s", a.ProducerID, err)
	case owner == nil:
		// No visible id owns it: that settles nothing if ACLs hide ids.
		hidden, err := c.ownerMayBeHidden(ctx)
		if err != nil {
			return model.Partition{}, nil, fmt.Errorf("could not tell whether ACLs hide producer %d's transactional id from you: %s", a.ProducerID, errText(err))
		}
		fresh.OwnersHidden = hidden || probesHidden
	}
	return fresh, owner, nil
}

// afterMarker says where the partition's last stable offset stands once the
// leader accepted the marker: what read_committed consumers now see.
func (c *Client) afterMarker(ctx context.Context, a model.Action) string {
	if ctx.Err() != nil {
		return ""
	}
	var errs partErrs
	p := a.TopicPartition
	hwm, lso := c.stableOffsets(ctx, []tp{p}, &errs)
	h, okH := hwm[p]
	l, okL := lso[p]
	switch {
	case !okH || !okL:
		return "could not re-read its offsets afterwards: " + errs.get(p)
	case l >= h:
		return fmt.Sprintf("the last stable offset of %s-%d is now %d, the high watermark", p.Topic, p.Partition, l)
	}
	return fmt.Sprintf("the last stable offset of %s-%d is now %d, below the high watermark %d: another open transaction holds it", p.Topic, p.Partition, l, h)
}
