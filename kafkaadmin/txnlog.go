package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/model"
)

// ReadTxnLog reads the coordinators' log from the start of every partition
// up to its end as of the call, and calls fn with each record, partition by
// partition in offset order; a record it cannot read comes with Unread set,
// in its place. It needs READ on the internal topic, which managed clusters
// usually refuse; kfake has no such topic. Either is an error, and the
// caller falls back to polling.
func (c *Client) ReadTxnLog(ctx context.Context, fn func(model.TxnLogRecord)) error {
	return c.readTxnLog(ctx, nil, nil, fn)
}

// readTxnLog is ReadTxnLog up to ends (nil: the end as of the call),
// telling bounds every partition's end offset and when it was read before
// the first record.
func (c *Client) readTxnLog(ctx context.Context, ends map[int32]int64, bounds func(map[int32]int64, time.Time), fn func(model.TxnLogRecord)) error {
	ctx, cancel := c.scope(ctx)
	defer cancel()
	starts, ends, err := c.txnLogFrom(ctx, ends)
	if err != nil {
		return errors.New(logWhy(err))
	}
	if bounds != nil {
		bounds(ends, time.Now())
	}
	want := map[int32]kgo.Offset{}
	left := map[int32]int64{} // the end offset of each partition still to read
	for p, e := range ends {
		if starts[p] < e {
			want[p] = kgo.NewOffset().At(starts[p])
			left[p] = e
		}
	}
	if len(want) == 0 {
		return nil
	}
	cl, err := kgo.NewClient(append(slices.Clip(c.opts),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{txnStateTopic: want}),
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()),
		// As the follower: at 2,000,000 ids the log is a gigabyte, and
		// fetches buffered ahead of the replay were most of the heap.
		kgo.FetchMaxBytes(4<<20), kgo.MaxBufferedBytes(8<<20))...)
	if err != nil {
		return err
	}
	defer cl.Close()
	// Records are decoded a batch ahead of fn, on another core: at
	// 2,000,000 ids decoding was a third of the replay's time. The batches
	// go back to be filled again: new ones were 6 GB of garbage at 2M.
	const ahead = 2
	batches, free, failed := make(chan []model.TxnLogRecord, ahead), make(chan []model.TxnLogRecord, ahead+1), make(chan error, 1)
	for range ahead + 1 {
		free <- nil
	}
	go func() {
		defer close(batches)
		failed <- pollTxnLog(ctx, cl, left, free, batches)
	}()
	for b := range batches {
		for i := range b {
			fn(b[i])
		}
		clear(b) // what fn kept of them is its own
		free <- b[:0]
	}
	return <-failed
}

// pollTxnLog sends the records up to left's end offsets, decoded, a
// fetch at a time into a batch from free, until every partition is read.
func pollTxnLog(ctx context.Context, cl *kgo.Client, left map[int32]int64, free <-chan []model.TxnLogRecord, out chan<- []model.TxnLogRecord) error {
	for len(left) > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("reading %s: %w", txnStateTopic, err)
		}
		var fetchErr error
		fs.EachError(func(_ string, _ int32, err error) { fetchErr = err })
		if fetchErr != nil {
			return fmt.Errorf("cannot read %s: %s", txnStateTopic, errText(fetchErr))
		}
		b := <-free
		fs.EachRecord(func(r *kgo.Record) {
			end, reading := left[r.Partition]
			if !reading || r.Offset >= end {
				return
			}
			b = append(b, recordOf(r))
			if r.Offset+1 >= end {
				delete(left, r.Partition)
			}
		})
		select {
		case out <- b:
		case <-ctx.Done():
			return fmt.Errorf("reading %s: %w", txnStateTopic, ctx.Err())
		}
	}
	return nil
}

// txnLogValueVersion is the newest value version decodeTxnLog reads. Kafka
// says a newer one need not be compatible (KIP-915: only tagged fields may be
// added without a bump), and its own coordinator refuses one, so a newer value
// is an error rather than a guess.
const txnLogValueVersion = 1

// txnLogKeyVersion is the only key version Kafka writes for a
// transactional id's state. Kafka's own coordinator skips a newer one as
// "a left over from an aborted upgrade"; txnscope cannot tell that from a
// record a newer Kafka still means, so it counts it as unread.
const txnLogKeyVersion = 0

// recordOf is one record of the log as read: decoded, with its place, and
// a tombstone dated by the record's own timestamp (its value has none); or,
// when it cannot be decoded, marked unread and dated the same way.
func recordOf(r *kgo.Record) model.TxnLogRecord {
	rec, err := decodeTxnLog(r.Key, r.Value)
	if err != nil {
		rec.Unread, rec.Why = model.UnreadCorrupt, err.Error()
		var newer newerError
		if errors.As(err, &newer) {
			rec.Unread = model.UnreadNewer
		}
	}
	rec.Partition, rec.Offset = r.Partition, r.Offset
	if rec.Tombstone || rec.Unread != "" {
		rec.LastUpdateMs = r.Timestamp.UnixMilli()
	}
	return rec
}

// newerError is a record of a version newer than txnscope reads: a newer
// Kafka's, not a broken one.
type newerError struct{ what string }

func (e newerError) Error() string { return e.what }

// decodeTxnLog reads one record of the coordinators' log. Broken bytes, an
// unknown state or a key or value version newer than it reads are errors
// (newerError for the versions); on an error rec holds the id when the key
// could be read. The errors quote the id as it is: each output escapes it
// once (quoted here with %q, it showed escaped twice). kmsg checks every
// length against the bytes left before it allocates, so hostile lengths
// cost at most a few times the record's size.
func decodeTxnLog(key, value []byte) (rec model.TxnLogRecord, err error) {
	var k kmsg.TxnMetadataKey
	// kmsg's only error says "response did not contain enough data": a
	// record is no response, so the error says what failed in our words.
	if k.ReadFrom(key) != nil {
		return rec, fmt.Errorf("the key does not decode (%d bytes)", len(key))
	}
	switch {
	case k.Version > txnLogKeyVersion:
		return rec, newerError{fmt.Sprintf("key version %d, newer than txnscope reads (%d)", k.Version, txnLogKeyVersion)}
	case k.Version < 0:
		return rec, fmt.Errorf("key version %d", k.Version)
	}
	rec.ID = k.TransactionalID
	if value == nil {
		rec.Tombstone = true
		return rec, nil
	}
	var v kmsg.TxnMetadataValue
	if v.ReadFrom(value) != nil {
		return rec, fmt.Errorf(`the value of "%s" does not decode (%d bytes)`, k.TransactionalID, len(value))
	}
	switch {
	case v.Version > txnLogValueVersion:
		return rec, newerError{fmt.Sprintf(`the value of "%s": version %d, newer than txnscope reads (%d)`,
			k.TransactionalID, v.Version, txnLogValueVersion)}
	case v.Version < 0:
		return rec, fmt.Errorf(`the value of "%s": version %d`, k.TransactionalID, v.Version)
	case v.State.String() == "Unknown":
		return rec, fmt.Errorf(`the value of "%s": unknown state %d`, k.TransactionalID, v.State)
	}
	rec.ProducerID, rec.ProducerEpoch, rec.TimeoutMs = v.ProducerID, v.ProducerEpoch, v.TimeoutMillis
	rec.State = model.StateOf(v.State.String())
	rec.StartMs, rec.LastUpdateMs = v.StartTimestamp, v.LastUpdateTimestamp
	rec.PrevProducerID, rec.NextProducerID = v.PreviousProducerID, v.NextProducerID
	rec.NextProducerEpoch = v.NextProducerEpoch
	rec.ClientTxnVersion = v.ClientTransactionVersion
	for _, t := range v.Topics {
		for _, p := range t.Partitions {
			rec.Partitions = append(rec.Partitions, model.TopicPartition{Topic: t.Topic, Partition: p})
		}
	}
	model.SortPartitions(rec.Partitions)
	return rec, nil
}

// Replay reads the coordinators' log from its start to its end and returns
// the newest limit (0: all) of the events it still holds at or after since
// (model.Replay), from when they are all there, and the records it could
// not read.
func (c *Client) Replay(ctx context.Context, since time.Time, limit int) (model.Replayed, error) {
	r := model.NewReplay(since, limit)
	if err := c.readTxnLog(ctx, nil, r.Bounds, r.Add); err != nil {
		return model.Replayed{}, err
	}
	return r.Result(), nil
}

// txnLogFrom is where a read of the log starts and ends: every partition's
// first offset, and ends (the log's end as of now when nil).
func (c *Client) txnLogFrom(ctx context.Context, ends map[int32]int64) (starts, to map[int32]int64, err error) {
	if ends == nil {
		return c.txnLogBounds(ctx)
	}
	starts, err = c.txnLogStarts(ctx, ends)
	return starts, ends, err
}
