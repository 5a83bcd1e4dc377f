package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/txnscope/txnscope/internal/escape"
	"github.com/txnscope/txnscope/internal/jsonout"
	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// find-hanging is kafka-transactions.sh find-hanging: transactions left open
// on a partition that their coordinator no longer knows of.
const cmdFindHanging command = "find-hanging"

// The -o json schema of find-hanging (docs/cli.md).
type (
	findHangingJSON struct {
		MaxTransactionTimeoutMs int64         `json:"max_transaction_timeout_ms"`
		PartitionsSearched      int           `json:"partitions_searched"`
		Hanging                 []hangingJSON `json:"hanging"`
		// PossiblyHanging have no visible owner while ACLs hide some ids:
		// their owner may be live, so they are not in Hanging.
		PossiblyHanging []hangingJSON `json:"possibly_hanging"`
		// OwnersUnknown says why no producer was judged (exit 1), null otherwise.
		OwnersUnknown *string `json:"owners_unknown"`
	}
	hangingJSON struct {
		Topic                 string  `json:"topic"`
		Partition             int32   `json:"partition"`
		ProducerID            int64   `json:"producer_id"`
		ProducerEpoch         int16   `json:"producer_epoch"`
		CoordinatorEpoch      int32   `json:"coordinator_epoch"`
		StartOffset           int64   `json:"start_offset"`
		LastTimestamp         int64   `json:"last_timestamp"`
		DurationMs            int64   `json:"duration_ms"`
		TransactionalID       *string `json:"transactional_id"`
		TransactionalIDBase64 string  `json:"transactional_id_base64,omitempty"`
		Reason                string  `json:"reason"`
	}
)

func checkFindHanging(_ *config, given func(string) bool) error {
	if !given("topic") && !given("broker-id") {
		return usagef("find-hanging needs --topic or --broker-id to limit the search")
	}
	if given("partition") && !given("topic") {
		return usagef("--partition needs --topic")
	}
	return nil
}

func runFindHanging(ctx context.Context, cl *kafkaadmin.Client, c config, o out, std Stdio) error {
	one := c.one
	limit := time.Duration(one.maxTxnTimeoutMin) * time.Minute
	rep, err := cl.FindHanging(ctx, kafkaadmin.HangingScope{Topic: one.topic, Partition: one.partition, Broker: one.brokerID, MaxTimeout: limit})
	if err != nil && rep.Partitions == 0 {
		return err
	}
	if rep.Hidden != "" {
		fmt.Fprintf(std.Err, "txnscope: note: %s\n", escape.Line(rep.Hidden))
	}
	for _, h := range rep.Possibly {
		fmt.Fprintf(std.Err, "txnscope: %s-%d producer %d (start offset %d): %s\n",
			escape.Text(h.Topic), h.Partition, h.ProducerID, h.CurrentTxnStartOffset, escape.Text(string(h.Reason)))
	}
	doc := findHangingJSON{MaxTransactionTimeoutMs: limit.Milliseconds(), PartitionsSearched: rep.Partitions,
		Hanging: make([]hangingJSON, 0, len(rep.Hanging)), PossiblyHanging: make([]hangingJSON, 0, len(rep.Possibly))}
	if rep.OwnersUnknown != "" {
		doc.OwnersUnknown = &rep.OwnersUnknown
	}
	rows := make([][]string, 0, len(rep.Hanging))
	for _, h := range rep.Hanging {
		doc.Hanging = append(doc.Hanging, toHangingJSON(h))
		rows = append(rows, []string{h.Topic, itoa(h.Partition), itoa(h.ProducerID), itoa(h.ProducerEpoch), itoa(h.CoordinatorEpoch),
			itoa(h.CurrentTxnStartOffset), itoa(h.LastTimestampMs()), itoa(int64(h.Duration / time.Minute))})
	}
	for _, h := range rep.Possibly {
		doc.PossiblyHanging = append(doc.PossiblyHanging, toHangingJSON(h))
	}
	return afterPartial(o.emit(doc, []string{"Topic", "Partition", "ProducerId", "ProducerEpoch", "CoordinatorEpoch",
		"StartOffset", "LastTimestamp", "Duration(min)"}, rows), err)
}

func toHangingJSON(h model.Hanging) hangingJSON {
	j := hangingJSON{Topic: h.Topic, Partition: h.Partition, ProducerID: h.ProducerID, ProducerEpoch: h.ProducerEpoch,
		CoordinatorEpoch: h.CoordinatorEpoch, StartOffset: h.CurrentTxnStartOffset, LastTimestamp: h.LastTimestampMs(),
		DurationMs: h.Duration.Milliseconds(), Reason: string(h.Reason)}
	if h.TransactionalID != "" {
		id := h.TransactionalID
		j.TransactionalID, j.TransactionalIDBase64 = &id, jsonout.Base64(id)
	}
	return j
}
