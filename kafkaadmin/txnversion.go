package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
	"unicode/utf16"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/model"
)

// versionReadBytes and versionReadTime bound the read of one id's records in
// the coordinators' log: the transaction's own records sit just after its
// start, and a busy log is not read to its end for them.
const (
	versionReadBytes = 8 << 20
	versionReadTime  = 5 * time.Second
)

// clientTxnVersion reads, from the coordinators' log, the transaction
// version of the client that began fresh's transaction: the records the
// coordinator wrote for it since it began. It needs READ on the internal
// topic; without it, or without a record of this very transaction, it is an
// error.
func (c *Client) clientTxnVersion(ctx context.Context, fresh model.Txn) (int16, error) {
	ctx, cancel := context.WithTimeout(ctx, versionReadTime)
	defer cancel()
	meta, msg := c.topicMetadata(ctx, []string{txnStateTopic})
	if msg != "" {
		return 0, errors.New(msg)
	}
	t, ok := meta[txnStateTopic]
	switch {
	case !ok || t.err != "":
		return 0, fmt.Errorf("cannot read %s", txnStateTopic)
	case len(t.leader) == 0:
		return 0, fmt.Errorf("%s has no partitions", txnStateTopic)
	}
	part := txnLogPartition(fresh.ID, len(t.leader))
	// From a little before its start: the coordinator's clock wrote both.
	from := fresh.StartTime().Add(-10 * time.Second)
	cl, err := kgo.NewClient(append(slices.Clip(c.opts),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{txnStateTopic: {part: kgo.NewOffset().AfterMilli(from.UnixMilli())}}),
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()),
		kgo.FetchMaxBytes(versionReadBytes))...)
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	read := 0
	for read < versionReadBytes {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return 0, fmt.Errorf("no record of this transaction in %s partition %d within %s", txnStateTopic, part, versionReadTime)
		}
		var fetchErr error
		fs.EachError(func(_ string, _ int32, err error) { fetchErr = err })
		if fetchErr != nil {
			return 0, errors.New(logWhy(fetchErr))
		}
		found, v, end := false, int16(0), false
		fs.EachPartition(func(p kgo.FetchTopicPartition) {
			if n := len(p.Records); n > 0 && p.Records[n-1].Offset+1 >= p.HighWatermark {
				end = true
			}
		})
		fs.EachRecord(func(r *kgo.Record) {
			read += len(r.Key) + len(r.Value)
			if found || string(txnLogKeyID(r.Key)) != fresh.ID {
				return
			}
			rec, err := decodeTxnLog(r.Key, r.Value)
			if err == nil && !rec.Tombstone && rec.ProducerID == fresh.ProducerID && rec.StartMs == fresh.StartUnixMs {
				found, v = true, rec.ClientTxnVersion
			}
		})
		switch {
		case found:
			return v, nil
		case end:
			return 0, fmt.Errorf("no record of this transaction in %s partition %d", txnStateTopic, part)
		}
	}
	return 0, fmt.Errorf("no record of this transaction in the first %d MB of %s partition %d from its start", versionReadBytes>>20, txnStateTopic, part)
}

// txnLogKeyID is the transactional id of a key of the coordinators' log
// (nil when it is not one).
func txnLogKeyID(key []byte) []byte {
	var k kmsg.TxnMetadataKey
	if k.ReadFrom(key) != nil {
		return nil
	}
	return []byte(k.TransactionalID)
}

// txnLogPartition is the coordinators' log partition of id: Kafka's
// Utils.abs(id.hashCode()) % partitions, Java's String hash over UTF-16.
func txnLogPartition(id string, partitions int) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(id)) {
		h = 31*h + int32(u)
	}
	if h == -1<<31 {
		h = 0
	} else if h < 0 {
		h = -h
	}
	return h % int32(partitions)
}
