package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/model"
)

// abortPartition writes an ABORT marker for one producer on one partition, at
// its leader (what kafka-transactions.sh abort does): for a transaction the
// coordinator no longer accounts for. It is sent again only after an answer
// that the partition's leader moved, and only when everything re-read says
// the transaction is still open at the new leader; an answer lost or unclear
// is never resent. Such an answer does not say the marker was not written:
// the old leader may have appended it, and its followers copied it, before
// it stopped leading (seen on three nodes, TestCluster3AbortWhileLeaderMoves).
// So when the re-read finds the transaction gone, the outcome is unknown.
func (c *Client) abortPartition(ctx context.Context, a model.Action, rec model.Recorder) model.Result {
	p := a.TopicPartition
	var r model.Result
	for try := 1; ; try++ {
		fresh, owner, err := c.rereadPartition(ctx, a)
		if err != nil {
			err = fmt.Errorf("refused: %w", err)
		} else {
			err = model.CheckAbortPartition(a, fresh, true, owner, time.Now())
		}
		switch {
		case err != nil && try == 1:
			return model.Result{Refused: true, Err: err.Error()}
		case err != nil:
			r.Unknown = true
			r.Err += "; the marker may have been written before the leader moved: re-read, " + trimRefused(err) + "; so it was not sent again"
			return r
		}
		var resp kmsg.Response
		r.ErrorCode, r.Err = "", ""
		resp, r = c.send(ctx, rec, try, fresh.Leader, markersRequest(a), a.WireTo(fresh.Leader, 0), r)
		if resp == nil {
			return r
		}
		found, ke := markerAnswer(resp.(*kmsg.WriteTxnMarkersResponse), a)
		switch {
		case !found:
			r.Unknown = true
			r.Err = fmt.Sprintf("broker %d answered without a result for %s-%d", fresh.Leader, p.Topic, p.Partition)
			return r
		case ke == nil:
			return c.afterMarker(ctx, a, r)
		case answered(&r, ke):
			return r
		case try >= markerTries || !leaderMoved(ke):
			return r
		}
		// The partition's leader moved (a rolling restart, a reassignment):
		// the new leader is read with the rest, and the markers go again
		// only if the transaction is still open there.
		if !sleep(ctx, time.Duration(try)*200*time.Millisecond) {
			r.Err += "; interrupted before it was re-read"
			return r
		}
	}
}

// markerTries bounds the sends of one partition abort while its leader
// moves.
const markerTries = 3

// leaderMoved reports an answer of a broker that no longer (or not yet)
// leads the partition, which wrote nothing.
func leaderMoved(err error) bool {
	return errors.Is(err, kerr.NotLeaderForPartition) || errors.Is(err, kerr.LeaderNotAvailable) ||
		errors.Is(err, kerr.FencedLeaderEpoch) || errors.Is(err, kerr.UnknownLeaderEpoch)
}

// markerAnswer is the answer for a's partition in resp.
func markerAnswer(resp *kmsg.WriteTxnMarkersResponse, a model.Action) (found bool, err error) {
	for _, rm := range resp.Markers {
		for _, rt := range rm.Topics {
			for _, rp := range rt.Partitions {
				if rm.ProducerID == a.ProducerID && rt.Topic == a.Topic && rp.Partition == a.Partition {
					return true, kerr.ErrorForCode(rp.ErrorCode)
				}
			}
		}
	}
	return false, nil
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

// afterMarker judges a marker the leader accepted from the partition's log
// after the transaction's first offset: the producer's first marker there
// ended it. If that is a COMMIT, the transaction shown had committed while
// the request was on its way (its coordinator came back, say), and the ABORT
// landed on whatever the producer wrote there since, a newer transaction of
// the same epoch under transaction version 1. Then where the last stable
// offset stands: what read_committed consumers now see.
func (c *Client) afterMarker(ctx context.Context, a model.Action, r model.Result) model.Result {
	if ctx.Err() != nil {
		return r
	}
	m := mark{ending: ending{pid: a.ProducerID, epoch: a.ProducerEpoch, at: a.TopicPartition, start: a.StartOffset}, first: true}
	tr := c.readTrails(ctx, []mark{m})[0]
	lso := c.stableAfter(ctx, a.TopicPartition)
	if tr.ended != model.CompleteCommit {
		r.After = lso
		return r
	}
	committed := fmt.Sprintf("the one shown had committed before the marker arrived (its COMMIT marker is at offset %d of %s)", tr.endedAt, partText(tr.at))
	switch {
	case tr.dataAt < 0 && tr.whole:
		r.Err = fmt.Sprintf("%s, and no records of producer %d follow it there: the marker closed nothing, nothing was aborted; %s", committed, a.ProducerID, lso)
	case tr.dataAt >= 0 && tr.abortAt > tr.dataAt:
		r.Unknown = true
		r.Err = fmt.Sprintf("%s; a newer transaction of producer %d began there at offset %d and an ABORT marker follows at offset %d: "+
			"this marker most likely aborted its records on %s, which its producer may still commit elsewhere; %s",
			committed, a.ProducerID, tr.dataAt, tr.abortAt, partText(tr.at), lso)
	default:
		r.Unknown = true
		r.Err = fmt.Sprintf("%s; whether this marker aborted records of producer %d written there since cannot be read from the log; %s", committed, a.ProducerID, lso)
	}
	return r
}

// stableAfter says where the partition's last stable offset stands.
func (c *Client) stableAfter(ctx context.Context, p tp) string {
	var errs partErrs
	hwm, lso := c.stableOffsets(ctx, []tp{p}, nil, &errs)
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
