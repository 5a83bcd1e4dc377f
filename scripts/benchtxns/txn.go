package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// oneID registers id, writes one transactional record to p and, when commit is
// set, commits; otherwise the transaction stays open until its timeout.
func oneID(ctx context.Context, cl *kgo.Client, id, topic string, p, leader, timeoutMs int32, commit bool) error {
	pid, epoch, err := initProducer(ctx, cl, id, timeoutMs)
	if err != nil {
		return err
	}
	if err := produce(ctx, cl, id, topic, p, leader, pid, epoch); err != nil {
		return err
	}
	if !commit {
		return nil
	}
	return endTxn(ctx, cl, id, pid, epoch)
}

// busy says whether err is worth a retry: the coordinator is loading, moving,
// or still finishing this id's previous transaction.
func busy(err error) bool {
	return kerr.IsRetriable(err) || errors.Is(err, kerr.ConcurrentTransactions)
}

func initProducer(ctx context.Context, cl *kgo.Client, id string, timeoutMs int32) (int64, int16, error) {
	req := kmsg.NewPtrInitProducerIDRequest()
	req.TransactionalID = kmsg.StringPtr(id)
	req.TransactionTimeoutMillis = timeoutMs
	req.ProducerID, req.ProducerEpoch = -1, -1
	for {
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return 0, 0, fmt.Errorf("InitProducerId: %w", err)
		}
		err = kerr.ErrorForCode(resp.ErrorCode)
		if err != nil && busy(err) {
			if err := pause(ctx); err != nil {
				return 0, 0, err
			}
			continue
		}
		if err != nil {
			return 0, 0, fmt.Errorf("InitProducerId: %w", err)
		}
		return resp.ProducerID, resp.ProducerEpoch, nil
	}
}

func produce(ctx context.Context, cl *kgo.Client, id, topic string, p, leader int32, pid int64, epoch int16) error {
	req := kmsg.NewPtrProduceRequest()
	req.TransactionID = kmsg.StringPtr(id)
	req.Acks = -1
	req.TimeoutMillis = 15000
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = topic
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Partition = p
	pp.Records = batch(id, pid, epoch)
	pt.Partitions = append(pt.Partitions, pp)
	req.Topics = append(req.Topics, pt)
	for {
		resp, err := req.RequestWith(ctx, cl.Broker(int(leader)))
		if err != nil {
			return fmt.Errorf("produce: %w", err)
		}
		if v := req.GetVersion(); v < 12 {
			return fmt.Errorf("the produce request went out as v%d: the broker must be Kafka 4.0+ (transaction version 2)", v)
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			return fmt.Errorf("unexpected produce response %+v", resp)
		}
		err = kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode)
		if err != nil && busy(err) {
			if err := pause(ctx); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("produce: %w", err)
		}
		return nil
	}
}

// endTxn commits. With transaction version 2 the coordinator bumps the epoch
// itself, so the producer's epoch from InitProducerId is the one to send.
func endTxn(ctx context.Context, cl *kgo.Client, id string, pid int64, epoch int16) error {
	req := kmsg.NewPtrEndTxnRequest()
	req.TransactionalID = id
	req.ProducerID, req.ProducerEpoch = pid, epoch
	req.Commit = true
	for {
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return fmt.Errorf("EndTxn: %w", err)
		}
		if v := req.GetVersion(); v < 5 {
			return fmt.Errorf("EndTxn went out as v%d: the broker must be Kafka 4.0+ (transaction version 2)", v)
		}
		err = kerr.ErrorForCode(resp.ErrorCode)
		if err != nil && busy(err) {
			if err := pause(ctx); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("EndTxn: %w", err)
		}
		return nil
	}
}

func pause(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(50 * time.Millisecond):
		return nil
	}
}

// batch is a v2 record batch of one transactional record whose value is id.
func batch(id string, pid int64, epoch int16) []byte {
	rec := kmsg.Record{Value: []byte(id)}
	rec.Length = int32(len(rec.AppendTo(nil)) - 1) // the body after the 1-byte varint of Length 0
	now := time.Now().UnixMilli()
	b := kmsg.RecordBatch{
		PartitionLeaderEpoch: -1,
		Magic:                2,
		Attributes:           0x10, // transactional
		FirstTimestamp:       now,
		MaxTimestamp:         now,
		ProducerID:           pid,
		ProducerEpoch:        epoch,
		NumRecords:           1,
		Records:              rec.AppendTo(nil),
	}
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], castagnoli))
	return raw
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)
