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
// telling bounds every partition's first and end offsets and when they were
// read before the first record.
func (c *Client) readTxnLog(ctx context.Context, ends map[int32]int64, bounds func(starts, ends map[int32]int64, at time.Time), fn func(model.TxnLogRecord)) error {
	ctx, cancel := c.scope(ctx)
	defer cancel()
	starts, ends, err := c.txnLogFrom(ctx, ends)
	if err != nil {
		return errors.New(logWhy(err))
	}
	if bounds != nil {
		bounds(starts, ends, time.Now())
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
	n := 0
	for _, t := range v.Topics {
		n += len(t.Partitions)
	}
	if n > 0 {
		rec.Partitions = make([]model.TopicPartition, 0, n)
	}
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
	_, res, _, err := c.replayLog(ctx, nil, since, limit)
	return res, err
}

// replayLog replays the log up to ends (nil: its end as of the call). On a
// large log it first presumes where the newest limit events are
// (presumeFrom); should that not hold (model.Replay.Presumed), it reads the
// log again without it, up to the same ends, and says so (again).
func (c *Client) replayLog(ctx context.Context, ends map[int32]int64, since time.Time, limit int) (_ *model.Replay, _ model.Replayed, again bool, _ error) {
	r := model.NewReplay(since, limit)
	err := c.readTxnLog(ctx, ends, func(starts, to map[int32]int64, at time.Time) {
		ends = to
		r.Bounds(to, at)
		r.Presume(c.presumeFrom(ctx, starts, to, since, limit))
	}, r.Add)
	if err != nil {
		return nil, model.Replayed{}, false, err
	}
	if res := r.Result(); r.Presumed() {
		return r, res, false, nil
	}
	r = model.NewReplay(since, limit)
	if err := c.readTxnLog(ctx, ends, func(_, to map[int32]int64, at time.Time) { r.Bounds(to, at) }, r.Add); err != nil {
		return nil, model.Replayed{}, true, err
	}
	return r, r.Result(), true, nil
}

// presumePer is how many of the log's newest records presumeFrom counts
// on for each event a replay keeps: a Flink or Streams transaction writes
// three to five records (Ongoing, again for each partition it adds,
// PrepareCommit, CompleteCommit) and makes one event.
var presumePer int64 = 8

// presumeFrom is a time after which the log holds presumePer×limit of its
// records, found by the offsets at times (ListOffsets by timestamp), for
// the replay to presume its newest limit events all come after it
// (model.Replay.Presume). The zero time, presuming nothing, when the log
// holds fewer than twice that many records, or when the offsets cannot be
// read.
func (c *Client) presumeFrom(ctx context.Context, starts, ends map[int32]int64, since time.Time, limit int) time.Time {
	want := int64(limit) * presumePer
	var total int64
	for p, e := range ends {
		total += e - starts[p]
	}
	if limit <= 0 || total < 2*want {
		return time.Time{}
	}
	now := time.Now()
	// after is how many records were written at or after t, or -1.
	after := func(t time.Time) int64 {
		offs, err := c.txnLogOffsets(ctx, t.UnixMilli())
		if err != nil {
			return -1
		}
		var n int64
		for p, e := range ends {
			o, ok := offs[p]
			if !ok || o < 0 || o > e {
				o = e // nothing written at or after t
			}
			n += e - max(o, starts[p])
		}
		return n
	}
	// Back from now, doubling, to an age holding enough records; then
	// halving the last step a few times.
	young, old := time.Duration(0), time.Second
	for {
		last := !since.IsZero() && now.Add(-old).Before(since)
		if last {
			old = max(now.Sub(since), young) // the whole window, once
		}
		n := after(now.Add(-old))
		if n < 0 {
			return time.Time{}
		}
		if n >= want {
			break
		}
		if last || old > 10*365*24*time.Hour {
			return time.Time{} // the window holds too few: nothing to presume
		}
		young, old = old, 2*old
	}
	for range 6 {
		mid := young + (old-young)/2
		switch n := after(now.Add(-mid)); {
		case n < 0:
			return now.Add(-old)
		case n >= want:
			old = mid
		default:
			young = mid
		}
	}
	return now.Add(-old)
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
