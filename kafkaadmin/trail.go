package kafkaadmin

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/model"
)

// A request that ends a transaction lands on whatever the producer has open
// when it arrives, which may be a newer transaction than the one confirmed
// (Kafka offers no conditional abort). What it hit is read afterwards from
// the log of each partition of the one confirmed: from where that one
// stood before the re-check, the producer's first marker ended it, and any
// batch of the producer after that marker belongs to a newer transaction.

// A mark is where the transaction confirmed is followed on one partition:
// its first offset there (DescribeProducers), or, where it had written
// nothing yet, the high watermark read before the re-check. Either way it
// was still open then, so its marker and anything newer come later.
type mark struct {
	ending
	first bool // start is the transaction's own first offset there
}

// A trail is what one partition's log says from a mark on.
type trail struct {
	at         tp
	ended      model.State // how the one confirmed ended there: its marker; "" unread
	endedAt    int64
	endedEpoch int16
	newerAt    int64 // the producer's first batch after that marker: a newer transaction; -1 none
	dataAt     int64 // the first records of the producer after that marker; -1 none
	abortAt    int64 // an ABORT marker of the producer after that marker; -1 none
	commitAt   int64 // a COMMIT marker of the producer after newer records; -1 none
	open       bool  // records of the producer after its last marker: no end read
	whole      bool  // read to the high watermark
}

func newTrail(at tp) trail {
	return trail{at: at, endedAt: -1, newerAt: -1, dataAt: -1, abortAt: -1, commitAt: -1}
}

// scan adds the batches of one fetch (from offset from) to the trail; it
// reports where the next fetch starts, the batches walked, and whether the
// log cannot be walked on.
func (tr *trail) scan(raw []byte, e ending, from int64, maxBatches int) (next int64, n int, bad bool) {
	unreadable := false
	next, n, bad = eachBatch(raw, from, maxBatches, func(b *kmsg.RecordBatch) bool {
		if b.ProducerID != e.pid {
			return true
		}
		if b.Attributes&attrControl == 0 {
			if tr.ended != model.NoState {
				tr.open = true
				if tr.dataAt < 0 {
					tr.dataAt = b.FirstOffset
				}
				if tr.newerAt < 0 {
					tr.newerAt = b.FirstOffset
				}
			}
			return true
		}
		typ := markerType(*b)
		if typ == model.NoState || b.ProducerEpoch < e.epoch {
			unreadable = true // a marker that cannot be read, or from before the mark
			return false
		}
		tr.open = false
		if tr.ended == model.NoState {
			tr.ended, tr.endedAt, tr.endedEpoch = typ, b.FirstOffset, b.ProducerEpoch
			return true
		}
		if tr.newerAt < 0 {
			tr.newerAt = b.FirstOffset
		}
		if typ == model.CompleteAbort && tr.abortAt < 0 {
			tr.abortAt = b.FirstOffset
		}
		// A commit ends a transaction only if it wrote here: a COMMIT
		// marker with no records before it is a retry's, not a newer one's.
		if typ == model.CompleteCommit && tr.dataAt >= 0 && tr.commitAt < 0 {
			tr.commitAt = b.FirstOffset
		}
		return true
	})
	return next, n, bad || unreadable
}

// walkTrail reads m's partition from its mark towards the high watermark,
// within the bounds of a marker walk (outcome.go).
func (c *Client) walkTrail(ctx context.Context, m mark, leader int32, topicID [16]byte, budget *atomic.Int64) trail {
	tr := newTrail(m.at)
	from, size, walked := m.start, int32(markerFirstBytes), 0
	for range markerFetches {
		if walked >= markerMaxBatches || budget.Add(-int64(size)) < 0 {
			break
		}
		p, ok := c.fetchLog(ctx, m.at, leader, topicID, from, 0, size)
		if !ok {
			return tr
		}
		next, n, bad := tr.scan(p.RecordBatches, m.ending, from, markerMaxBatches-walked)
		switch {
		case bad:
			return tr
		case next >= p.HighWatermark:
			tr.whole = true
			return tr
		case next <= from:
			return tr
		}
		walked, from, size = walked+n, next, markerMoreBytes
	}
	// Out of reach: its ABORT may still be indexed by the leader.
	if tr.ended == model.NoState && m.first && budget.Add(-markerFirstBytes) >= 0 && c.abortIndexed(ctx, m.ending, leader, topicID) == model.CompleteAbort {
		tr.ended = model.CompleteAbort
	}
	return tr
}

// readTrails walks every mark's partition; a partition whose leader or log
// cannot be read yields a trail that is not whole and ended "".
func (c *Client) readTrails(ctx context.Context, marks []mark) []trail {
	out := make([]trail, len(marks))
	var topics []string
	for i, m := range marks {
		out[i] = newTrail(m.at)
		topics = append(topics, m.at.Topic)
	}
	if len(marks) == 0 {
		return out
	}
	meta, msg := c.topicMetadata(ctx, topics)
	if msg != "" {
		return out
	}
	var (
		wg     sync.WaitGroup
		sem    = make(chan struct{}, endingParallel)
		budget atomic.Int64
	)
	budget.Store(markerRefreshBytes)
	for i, m := range marks {
		leader, msg := meta.leaderOf(m.at)
		if msg != "" || leader < 0 {
			continue
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i] = c.walkTrail(ctx, m, leader, meta[m.at.Topic].id, &budget)
		})
	}
	wg.Wait()
	return out
}

// noteMarks notes, before the re-check, where a's transaction stands on each
// of its partitions; partitions where neither its first offset nor the high
// watermark can be read get no mark (their trail is never whole).
func (c *Client) noteMarks(ctx context.Context, a model.Action) []mark {
	if len(a.Partitions) == 0 {
		return nil
	}
	base := ending{id: a.TransactionalID, pid: a.ProducerID, epoch: a.ProducerEpoch}
	var errs partErrs
	rows := c.producers(ctx, a.Partitions, &errs)
	var marks []mark
	var rest []tp
	for _, p := range a.Partitions {
		m := mark{ending: base}
		m.at, m.start = p, -1
		for _, pr := range rows[p] {
			if pr.ProducerID == a.ProducerID && pr.CurrentTxnStartOffset >= 0 {
				m.start, m.first = pr.CurrentTxnStartOffset, true
			}
		}
		if m.start < 0 {
			rest = append(rest, p)
			continue
		}
		marks = append(marks, m)
	}
	if len(rest) == 0 {
		return marks
	}
	hwm := c.offsets(ctx, -1, rest, 0, "high watermark", &errs)
	for _, p := range rest {
		if h, ok := hwm[p]; ok {
			m := mark{ending: base}
			m.at, m.start = p, h
			marks = append(marks, m)
		}
	}
	return marks
}
