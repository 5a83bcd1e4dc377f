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
// partition in offset order. It needs READ on the internal topic, which
// managed clusters usually refuse; kfake has no such topic. Either is an
// error, and the caller falls back to polling.
func (c *Client) ReadTxnLog(ctx context.Context, fn func(model.TxnLogRecord)) error {
	ctx, cancel := c.scope(ctx)
	defer cancel()
	starts, ends, err := c.txnLogBounds(ctx)
	if err != nil {
		return errors.New(logWhy(err))
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
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()))...)
	if err != nil {
		return err
	}
	defer cl.Close()
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
		fs.EachRecord(func(r *kgo.Record) {
			end, reading := left[r.Partition]
			if !reading || r.Offset >= end {
				return
			}
			if rec, ok, err := recordOf(r); err == nil && ok {
				fn(rec)
			}
			if r.Offset+1 >= end {
				delete(left, r.Partition)
			}
		})
	}
	return nil
}

// txnLogValueVersion is the newest value version decodeTxnLog reads. Kafka
// says a newer one need not be compatible (KIP-915: only tagged fields may be
// added without a bump), and its own coordinator refuses one, so a newer value
// is an error rather than a guess.
const txnLogValueVersion = 1

// recordOf is one record of the log as read: decoded, with its place, and
// a tombstone dated by the record's own timestamp (its value has none).
func recordOf(r *kgo.Record) (model.TxnLogRecord, bool, error) {
	rec, ok, err := decodeTxnLog(r.Key, r.Value)
	if err != nil || !ok {
		return rec, ok, err
	}
	rec.Partition, rec.Offset = r.Partition, r.Offset
	if rec.Tombstone {
		rec.LastUpdateMs = r.Timestamp.UnixMilli()
	}
	return rec, true, nil
}

// decodeTxnLog reads one record of the coordinators' log; ok is false for a
// record that is not a transactional id's state (another key version). Broken
// bytes, an unknown state or a value version newer than txnLogValueVersion
// are errors. kmsg checks every length against the bytes left before it
// allocates, so hostile lengths cost at most a few times the record's size.
func decodeTxnLog(key, value []byte) (rec model.TxnLogRecord, ok bool, err error) {
	var k kmsg.TxnMetadataKey
	// kmsg's only error says "response did not contain enough data": a
	// record is no response, so the error says what failed in our words.
	if k.ReadFrom(key) != nil {
		return rec, false, fmt.Errorf("a %s key does not decode (%d bytes)", txnStateTopic, len(key))
	}
	if k.Version != 0 {
		return rec, false, nil
	}
	rec.ID = k.TransactionalID
	if value == nil {
		rec.Tombstone = true
		return rec, true, nil
	}
	var v kmsg.TxnMetadataValue
	if v.ReadFrom(value) != nil {
		return rec, false, fmt.Errorf("the %s value of %q does not decode (%d bytes)", txnStateTopic, k.TransactionalID, len(value))
	}
	if v.Version < 0 || v.Version > txnLogValueVersion {
		return rec, false, fmt.Errorf("the %s value of %q: version %d, newer than txnscope reads (%d)",
			txnStateTopic, k.TransactionalID, v.Version, txnLogValueVersion)
	}
	if v.State.String() == "Unknown" {
		return rec, false, fmt.Errorf("the %s value of %q: unknown state %d", txnStateTopic, k.TransactionalID, v.State)
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
	return rec, true, nil
}

// Replay reads the coordinators' log from its start to its end and returns
// the newest limit (0: all) of the events it still holds at or after since
// (model.Replay): complete is the time from which they are all there, oldest
// the time of the oldest record.
func (c *Client) Replay(ctx context.Context, since time.Time, limit int) (evs []model.Event, complete, oldest time.Time, err error) {
	r := model.NewReplay(since, limit)
	if err := c.ReadTxnLog(ctx, r.Add); err != nil {
		return nil, time.Time{}, time.Time{}, err
	}
	evs, complete, oldest = r.Events()
	return evs, complete, oldest, nil
}
