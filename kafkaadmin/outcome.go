package kafkaadmin

import (
	"context"
	"encoding/binary"
	"math"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/model"
)

// An outcome is stated only on evidence: the coordinator's state, the control
// record (COMMIT or ABORT marker) that ended the transaction, read from the
// log, or the leader's index of aborted transactions naming it. Reading costs
// fetches, so it is bounded per ending and per refresh; a marker not found
// within reach leaves the outcome unknown ("ended"), never guessed from what a
// fetch did not show.
const (
	maxEndingsPerRefresh = 256
	endingParallel       = 8
	// Per ending: a first fetch of 16 KiB (a marker usually sits a few
	// batches after the transaction's first offset), then up to three of
	// 64 KiB: 208 KiB of log, and at most markerMaxBatches batches walked.
	markerFirstBytes = 16 << 10
	markerMoreBytes  = 64 << 10
	markerFetches    = 4
	markerMaxBatches = 4096
	// markerRefreshBytes bounds a whole refresh: 256 endings at their first
	// fetch, and room for some to read on.
	markerRefreshBytes = 8 << 20
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
// only when a new InitProducerId came (force-terminate, a second producer),
// possibly right after the transaction committed: its marker tells. An open
// transaction replaced by another is read too: commits tell a busy producer
// from a restart.
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
		// A new producer id is read too: the marker carries the old one.
		if !ok || !p.State.Open() || !unreported(p, t, prev.EpochBumpsOnEnd) {
			continue
		}
		if e, ok := nearestStart(prev, p); ok {
			e.id = t.ID
			out = append(out, e)
		}
	}
	return out
}

// nearestStart picks, among p's partitions where DescribeProducers showed its
// first offset, the one with the fewest records after it: its marker is the
// cheapest to reach.
func nearestStart(prev *model.Snapshot, p model.Txn) (best ending, found bool) {
	var gap int64
	for _, at := range p.Partitions {
		part, ok := prev.Partition(at)
		if !ok {
			continue
		}
		pr, ok := part.Producer(p.ProducerID)
		if !ok || pr.CurrentTxnStartOffset < 0 {
			continue
		}
		if g := part.HighWatermark - pr.CurrentTxnStartOffset; !found || g < gap {
			gap, found = g, true
			best = ending{pid: p.ProducerID, epoch: p.ProducerEpoch, at: at, start: pr.CurrentTxnStartOffset}
		}
	}
	return best, found
}

// unreported reports whether p's open transaction ended without the
// coordinator saying how: the id is Empty now, or p was Ongoing and the id has
// moved on to another transaction, open (model.MovedOn) or already complete
// (model.LaterEnd: the Complete* state is a later transaction's).
func unreported(p, t model.Txn, bumpsOnEnd bool) bool {
	switch {
	case t.State == model.Empty:
		return true
	case p.State != model.Ongoing: // Prepare*: decided already
		return false
	case t.State.Open():
		return model.MovedOn(p, t)
	}
	return model.LaterEnd(p, t, bumpsOnEnd)
}

// readOutcomes returns CompleteCommit or CompleteAbort per id whose marker it
// read; the others stay unknown.
func (c *Client) readOutcomes(ctx context.Context, ends []ending, meta metaMap) map[string]model.State {
	out := make(map[string]model.State, len(ends))
	var (
		mu     sync.Mutex
		wg     sync.WaitGroup
		sem    = make(chan struct{}, endingParallel)
		budget atomic.Int64
	)
	budget.Store(markerRefreshBytes)
	for _, e := range ends {
		leader, msg := meta.leaderOf(e.at)
		if msg != "" || leader < 0 {
			continue
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if o := c.readOutcome(ctx, e, leader, meta[e.at.Topic].id, &budget); o != model.NoState {
				mu.Lock()
				out[e.id] = o
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return out
}

// readOutcome walks the log of one of the transaction's partitions from its
// first offset there until the control batch of its producer: that marker
// ended the transaction on this partition. A marker out of reach may still be
// an ABORT the broker has indexed (abortIndexed). "" when nothing says: the
// marker is too far, not written yet, or the log cannot be read.
func (c *Client) readOutcome(ctx context.Context, e ending, leader int32, topicID [16]byte, budget *atomic.Int64) model.State {
	o, far := c.walkToMarker(ctx, e, leader, topicID, budget)
	if o != model.NoState || !far || budget.Add(-markerFirstBytes) < 0 {
		return o
	}
	return c.abortIndexed(ctx, e, leader, topicID)
}

// walkToMarker is the bounded walk; far reports that it stopped at its bounds
// with more log to read.
func (c *Client) walkToMarker(ctx context.Context, e ending, leader int32, topicID [16]byte, budget *atomic.Int64) (o model.State, far bool) {
	from, size, walked := e.start, int32(markerFirstBytes), 0
	for range markerFetches {
		if walked >= markerMaxBatches || budget.Add(-int64(size)) < 0 {
			return model.NoState, true
		}
		p, ok := c.fetchLog(ctx, e.at, leader, topicID, from, 0, size)
		if !ok {
			return model.NoState, false
		}
		sc := scanMarker(p.RecordBatches, e, from, markerMaxBatches-walked)
		if sc.outcome != model.NoState || sc.stop || sc.next <= from || sc.next >= p.HighWatermark {
			return sc.outcome, false
		}
		walked, from, size = walked+sc.batches, sc.next, markerMoreBytes
	}
	return model.NoState, true
}

// abortIndexed asks the leader whether it holds the transaction's ABORT
// marker: a read_committed fetch lists, next to the records it returns, the
// aborted transactions its index knows in that range, each entered when its
// ABORT marker was written. Only being listed says something; not being
// listed says nothing (kfake leaves the list out of a fetch cut short by its
// size, and a commit is never listed). One batch is enough: the transaction's
// own first one.
func (c *Client) abortIndexed(ctx context.Context, e ending, leader int32, topicID [16]byte) model.State {
	p, ok := c.fetchLog(ctx, e.at, leader, topicID, e.start, 1, 1)
	if !ok {
		return model.NoState
	}
	for _, a := range p.AbortedTransactions {
		if a.ProducerID == e.pid && a.FirstOffset == e.start {
			return model.CompleteAbort
		}
	}
	return model.NoState
}

// fetchLog fetches one partition of the leader from offset from, size bytes
// at most, the first batch whole whatever its size. isolation 0 is
// read_uncommitted (up to the high watermark, open transactions included: a
// marker may sit behind another producer's open transaction), 1
// read_committed.
func (c *Client) fetchLog(ctx context.Context, at tp, leader int32, topicID [16]byte, from int64, isolation int8, size int32) (kmsg.FetchResponseTopicPartition, bool) {
	if silentErr(ctx, leader) != nil {
		return kmsg.FetchResponseTopicPartition{}, false
	}
	parent := ctx
	ctx, cancel := c.deadline(ctx)
	defer cancel()
	req := kmsg.NewPtrFetchRequest()
	req.MaxWaitMillis = 0
	req.MinBytes = 0
	// The partition's bound is what limits the answer (one partition is
	// asked): kfake lists no aborted transactions where the request's own
	// bound cut the answer short.
	req.MaxBytes = math.MaxInt32
	req.IsolationLevel = isolation
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = at.Topic
	rt.TopicID = topicID
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition = at.Partition
	rp.FetchOffset = from
	rp.PartitionMaxBytes = size
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)

	resp, err := c.kgo.Broker(int(leader)).Request(ctx, req)
	noteSilent(parent, ctx, leader, err)
	if err != nil {
		return kmsg.FetchResponseTopicPartition{}, false
	}
	fr := resp.(*kmsg.FetchResponse)
	if kerr.ErrorForCode(fr.ErrorCode) != nil {
		return kmsg.FetchResponseTopicPartition{}, false
	}
	for _, t := range fr.Topics {
		for _, p := range t.Partitions {
			if p.Partition == at.Partition && kerr.ErrorForCode(p.ErrorCode) == nil {
				return p, true
			}
		}
	}
	return kmsg.FetchResponseTopicPartition{}, false
}

// markerScan is what one fetch's record batches told.
type markerScan struct {
	outcome model.State // CompleteCommit or CompleteAbort: the marker was found
	next    int64       // where the next fetch starts
	batches int         // batches walked
	stop    bool        // reading on cannot tell more
}

// Record batch layout (magic 2): base offset int64, length int32, then
// length bytes, 61 bytes of header in all before the records.
const (
	batchPrefix    = 12
	batchHeader    = 61
	batchMagicAt   = 16
	attrControl    = 0x20
	attrCompressed = 0x07
)

// scanMarker walks raw, the record batches of one fetch starting at offset
// from, for the first control batch of e's producer. Kafka writes one marker
// per partition when a transaction ends, and a producer has at most one
// transaction open per partition, so the first marker of the producer at or
// after the transaction's first offset is its end: under transaction version
// 2 it carries the bumped epoch, so any epoch from e's on is accepted.
func scanMarker(raw []byte, e ending, from int64, maxBatches int) markerScan {
	var sc markerScan
	found := false
	sc.next, sc.batches, sc.stop = eachBatch(raw, from, maxBatches, func(b *kmsg.RecordBatch) bool {
		if b.ProducerID != e.pid || b.Attributes&attrControl == 0 {
			return true
		}
		found = true
		// A marker from before this transaction cannot follow its start.
		if b.ProducerEpoch >= e.epoch {
			sc.outcome = markerType(*b)
		}
		return false
	})
	sc.stop = sc.stop || found
	return sc
}

// eachBatch hands fn, in order, each whole record batch of raw (one fetch
// that started at offset from) that ends at or after from, until fn returns
// false. next is where the following fetch starts, n the batches walked, bad
// set when the log cannot be walked on (not a v2 batch: transactions need
// one, or one that does not decode). A truncated last batch is left for the
// next fetch.
func eachBatch(raw []byte, from int64, maxBatches int, fn func(*kmsg.RecordBatch) bool) (next int64, n int, bad bool) {
	next = from
	for len(raw) >= batchPrefix && n < maxBatches {
		length := int64(int32(binary.BigEndian.Uint32(raw[8:])))
		if length < batchHeader-batchPrefix {
			return next, n, true
		}
		if length > int64(len(raw)-batchPrefix) {
			return next, n, false // cut off by the fetch size
		}
		one := raw[:batchPrefix+length]
		raw = raw[batchPrefix+length:]
		n++
		if one[batchMagicAt] != 2 {
			return next, n, true
		}
		var b kmsg.RecordBatch
		if err := b.ReadFrom(one); err != nil {
			return next, n, true
		}
		last := b.FirstOffset + int64(b.LastOffsetDelta)
		if last < from {
			continue // the fetch began inside an earlier batch
		}
		next = last + 1
		if !fn(&b) {
			return next, n, false
		}
	}
	return next, n, false
}

// markerType reads a control batch's record key: version int16, type int16
// (0 ABORT, 1 COMMIT). Brokers never compress control batches.
func markerType(b kmsg.RecordBatch) model.State {
	if b.Attributes&attrCompressed != 0 || b.NumRecords < 1 {
		return model.NoState
	}
	var r kmsg.Record
	if err := r.ReadFrom(b.Records); err != nil {
		return model.NoState
	}
	var k kmsg.ControlRecordKey
	if err := k.ReadFrom(r.Key); err != nil {
		return model.NoState
	}
	switch k.Type {
	case kmsg.ControlRecordKeyTypeCommit:
		return model.CompleteCommit
	case kmsg.ControlRecordKeyTypeAbort:
		return model.CompleteAbort
	}
	return model.NoState
}
