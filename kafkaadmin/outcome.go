package kafkaadmin

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/model"
)

// Reading outcomes from the log costs one fetch per ended transaction; a burst
// of endings (a whole job stopping) is capped so a refresh stays cheap.
const (
	maxEndingsPerRefresh = 256
	endingParallel       = 8
	endingFetchBytes     = 16 << 10
)

// ending is a transaction that was open in the previous snapshot and is gone
// without the coordinator saying how: the id shows Empty (kfake never reports
// CompleteCommit/CompleteAbort), or another open transaction already (real
// Kafka between two polls: a busy producer, or a restart that fenced it). Its
// outcome is read from one of its partitions, starting at the offset where
// DescribeProducers said it began there.
type ending struct {
	id    string
	pid   int64
	epoch int16 // before it ended
	at    tp
	start int64
}

// findEndings picks the transactions whose outcome can be read from the log.
// Real Kafka reports Complete* itself; there an open transaction ends in Empty
// only when a new InitProducerId fenced it (force-terminate, a second
// producer), and the log then rightly says aborted. An open transaction
// replaced by another is read too: commits tell a busy producer from a restart.
func findEndings(prev *model.Snapshot, txns []model.Txn) []ending {
	if prev == nil {
		return nil
	}
	var out []ending
	for _, t := range txns {
		if len(out) == maxEndingsPerRefresh {
			break
		}
		if !t.Described {
			continue
		}
		p, ok := prev.Txn(t.ID)
		if !ok || !p.State.Open() || p.ProducerID != t.ProducerID || !unreported(p, t, prev.EpochBumpsOnEnd) {
			continue
		}
		for _, at := range p.Partitions {
			part, ok := prev.Partition(at)
			if !ok {
				continue
			}
			if pr, ok := part.Producer(p.ProducerID); ok && pr.CurrentTxnStartOffset >= 0 {
				out = append(out, ending{id: t.ID, pid: p.ProducerID, epoch: p.ProducerEpoch, at: at, start: pr.CurrentTxnStartOffset})
				break
			}
		}
	}
	return out
}

// unreported reports whether p's open transaction ended without the
// coordinator saying how: the id is Empty now, or p was Ongoing and the id has
// moved on to another transaction, open (model.MovedOn) or already complete
// (under transaction version 2, two or more epochs up: more than one end).
func unreported(p, t model.Txn, bumpsOnEnd bool) bool {
	switch {
	case t.State == model.Empty:
		return true
	case p.State != model.Ongoing: // Prepare*: decided already
		return false
	case t.State.Open():
		return model.MovedOn(p, t)
	case t.State == model.CompleteCommit || t.State == model.CompleteAbort:
		return bumpsOnEnd && int(t.ProducerEpoch)-int(p.ProducerEpoch) >= 2
	}
	return false
}

// readOutcomes returns CompleteCommit or CompleteAbort per id it could decide.
func (c *Client) readOutcomes(ctx context.Context, ends []ending, meta metaMap) map[string]model.State {
	out := make(map[string]model.State, len(ends))
	var (
		mu  sync.Mutex
		wg  sync.WaitGroup
		sem = make(chan struct{}, endingParallel)
	)
	for _, e := range ends {
		leader, msg := meta.leaderOf(e.at)
		if msg != "" || leader < 0 {
			continue
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if o := c.readOutcome(ctx, e, leader, meta[e.at.Topic].id); o != "" {
				mu.Lock()
				out[e.id] = o
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return out
}

// readOutcome fetches read_committed from the transaction's first offset on
// one partition. The leader lists the aborted transactions in the range it
// returns: ours there means aborted; the LSO past our start without ours
// listed means committed; anything else stays unknown.
func (c *Client) readOutcome(ctx context.Context, e ending, leader int32, topicID [16]byte) model.State {
	ctx, cancel := c.deadline(ctx)
	defer cancel()
	req := kmsg.NewPtrFetchRequest()
	req.MaxWaitMillis = 0
	req.MinBytes = 0
	req.MaxBytes = endingFetchBytes
	req.IsolationLevel = 1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = e.at.Topic
	rt.TopicID = topicID
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition = e.at.Partition
	rp.FetchOffset = e.start
	rp.PartitionMaxBytes = endingFetchBytes
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)

	resp, err := c.kgo.Broker(int(leader)).Request(ctx, req)
	if err != nil {
		return ""
	}
	fr := resp.(*kmsg.FetchResponse)
	if kerr.ErrorForCode(fr.ErrorCode) != nil {
		return ""
	}
	for _, t := range fr.Topics {
		for _, p := range t.Partitions {
			if p.Partition != e.at.Partition || kerr.ErrorForCode(p.ErrorCode) != nil {
				continue
			}
			for _, a := range p.AbortedTransactions {
				if a.ProducerID == e.pid && a.FirstOffset == e.start {
					return model.CompleteAbort
				}
			}
			if p.LastStableOffset > e.start && len(p.RecordBatches) > 0 {
				return model.CompleteCommit
			}
		}
	}
	return ""
}
