package cli

import (
	"context"
	"fmt"

	"github.com/txnscope/txnscope/internal/jsonout"
	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// describe-producers is kafka-transactions.sh describe-producers: the
// producers of one partition.
const cmdDescribeProducers command = "describe-producers"

// producersJSON is the -o json schema of describe-producers (docs/cli.md).
type producersJSON struct {
	Topic     string                 `json:"topic"`
	Partition int32                  `json:"partition"`
	Producers []jsonout.ProducerJSON `json:"producers"`
}

func checkDescribeProducers(_ *config, given func(string) bool) error {
	if !given("topic") || !given("partition") {
		return usagef("describe-producers needs --topic and --partition")
	}
	return nil
}

func producerJSON(pr model.Producer) jsonout.ProducerJSON {
	j := jsonout.ProducerJSON{ProducerID: pr.ProducerID, ProducerEpoch: pr.ProducerEpoch, LastSequence: pr.LastSequence,
		LastTimestamp: pr.LastTimestampMs(), CoordinatorEpoch: pr.CoordinatorEpoch}
	if pr.CurrentTxnStartOffset >= 0 {
		v := pr.CurrentTxnStartOffset
		j.CurrentTxnStartOffset = &v
	}
	return j
}

func runDescribeProducers(ctx context.Context, cl *kafkaadmin.Client, c config, o out, _ Stdio) error {
	one := c.one
	p := model.TopicPartition{Topic: one.topic, Partition: one.partition}
	prs, err := cl.DescribeProducers(ctx, p, one.brokerID)
	if err != nil {
		where := "its leader"
		if one.brokerID >= 0 {
			where = "broker " + itoa(one.brokerID)
		}
		return fmt.Errorf("describing the producers of %s-%d on %s: %w", p.Topic, p.Partition, where, err)
	}
	doc := producersJSON{Topic: p.Topic, Partition: p.Partition, Producers: make([]jsonout.ProducerJSON, 0, len(prs))}
	rows := make([][]string, 0, len(prs))
	for _, pr := range prs {
		doc.Producers = append(doc.Producers, producerJSON(pr))
		start := "None"
		if pr.CurrentTxnStartOffset >= 0 {
			start = itoa(pr.CurrentTxnStartOffset)
		}
		rows = append(rows, []string{itoa(pr.ProducerID), itoa(pr.ProducerEpoch), itoa(pr.CoordinatorEpoch),
			itoa(pr.LastSequence), itoa(pr.LastTimestampMs()), start})
	}
	return o.emit(doc, []string{"ProducerId", "ProducerEpoch", "LatestCoordinatorEpoch", "LastSequence", "LastTimestamp",
		"CurrentTransactionStartOffset"}, rows)
}
