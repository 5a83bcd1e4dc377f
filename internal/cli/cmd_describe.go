package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/txnscope/txnscope/internal/jsonout"
	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// describe is kafka-transactions.sh describe: one transaction by its id.
const cmdDescribe command = "describe"

// describeJSON is the -o json schema of describe (docs/cli.md).
type describeJSON struct {
	TransactionalID       string                 `json:"transactional_id"`
	TransactionalIDBase64 string                 `json:"transactional_id_base64,omitempty"`
	Coordinator           int32                  `json:"coordinator"`
	ProducerID            int64                  `json:"producer_id"`
	ProducerEpoch         int16                  `json:"producer_epoch"`
	State                 model.State            `json:"state"`
	TimeoutMs             int32                  `json:"timeout_ms"`
	StartTimestamp        *int64                 `json:"start_timestamp"`
	DurationMs            *int64                 `json:"duration_ms"`
	Partitions            []model.TopicPartition `json:"partitions"`
}

// checkTransactionalID: describe and force-terminate name their transaction.
func checkTransactionalID(c *config, _ func(string) bool) error {
	if strings.TrimSpace(c.one.transactionalID) == "" {
		return usagef("%s needs --transactional-id", c.cmd)
	}
	return nil
}

func runDescribe(ctx context.Context, cl *kafkaadmin.Client, c config, o out, _ Stdio) error {
	one := c.one
	d, err := cl.DescribeTransaction(ctx, one.transactionalID)
	if err != nil {
		return err
	}
	now := time.Now().UnixMilli()
	doc := describeJSON{TransactionalID: d.ID, TransactionalIDBase64: jsonout.Base64(d.ID), Coordinator: d.Coordinator, ProducerID: d.ProducerID, ProducerEpoch: d.ProducerEpoch,
		State: d.State, TimeoutMs: d.TimeoutMs, Partitions: d.Partitions}
	if doc.Partitions == nil {
		doc.Partitions = []model.TopicPartition{}
	}
	start, dur := "None", "None"
	if d.StartMs >= 0 {
		s, ms := d.StartMs, now-d.StartMs
		doc.StartTimestamp, doc.DurationMs = &s, &ms
		start, dur = itoa(s), itoa(ms)
	}
	tps := make([]string, len(d.Partitions))
	for i, p := range d.Partitions {
		tps[i] = fmt.Sprintf("%s-%d", p.Topic, p.Partition)
	}
	row := []string{itoa(d.Coordinator), d.ID, itoa(d.ProducerID), itoa(d.ProducerEpoch), d.State.String(), itoa(d.TimeoutMs),
		start, dur, strings.Join(tps, ",")}
	return o.emit(doc, []string{"CoordinatorId", "TransactionalId", "ProducerId", "ProducerEpoch", "TransactionState",
		"TransactionTimeoutMs", "CurrentTransactionStartTimeMs", "TransactionDurationMs", "TopicPartitions"}, [][]string{row})
}
