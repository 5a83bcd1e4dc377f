package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/txnscope/txnscope/internal/escape"
	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// runOneShot runs one of kafka-transactions.sh's commands.
func runOneShot(ctx context.Context, c config, stdin io.Reader, stdout, stderr io.Writer) error {
	// Refuse before touching the cluster: nobody is there to confirm.
	if c.cmd.acts() && !c.one.yes && !readsTerminal(stdin) {
		return usagef("%s needs --yes when stdin is not a terminal (on a terminal it asks you to type abort)", c.cmd)
	}
	cl, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: c.bootstrap, Timeout: c.timeout, Security: c.security})
	if err != nil {
		return usageError{err.Error()}
	}
	defer cl.Close()
	o := out{w: stdout, json: c.output == "json"}
	switch c.cmd {
	case cmdList:
		return runList(ctx, cl, c.one, o, stderr)
	case cmdDescribe:
		return runDescribe(ctx, cl, c.one, o)
	case cmdDescribeProducers:
		return runDescribeProducers(ctx, cl, c.one, o)
	case cmdFindHanging:
		return runFindHanging(ctx, cl, c.one, o, stderr)
	case cmdAbort, cmdForceTerminate:
		return runAction(ctx, cl, c, stdin, stderr, o)
	}
	return fmt.Errorf("unknown command %q", c.cmd)
}

// out prints a command's result as kafka-transactions.sh's table or as JSON.
type out struct {
	w    io.Writer
	json bool
}

func (o out) emit(doc any, headers []string, rows [][]string) error {
	var err error
	if o.json {
		err = writeJSON(o.w, doc)
	} else {
		err = printTable(o.w, headers, rows)
	}
	if err != nil {
		return fmt.Errorf("writing the output: %w", err)
	}
	return nil
}

// writeJSON prints doc indented. encoding/json escapes C0 controls but not
// DEL, the C1 controls (some terminals act on U+009B as on ESC [) or bidi
// overrides, which ids may hold; escape.JSON writes those as \u escapes too,
// so the output is harmless on a terminal and decodes to the same values.
func writeJSON(w io.Writer, doc any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := w.Write(escape.JSON(b.Bytes()))
	return err
}

// The -o json schemas of the one-shot commands (README, "One-shot commands").
type (
	listJSON struct {
		Transactions []listingJSON `json:"transactions"`
	}
	listingJSON struct {
		TransactionalID string      `json:"transactional_id"`
		Coordinator     int32       `json:"coordinator"`
		ProducerID      int64       `json:"producer_id"`
		State           model.State `json:"state"`
	}
	describeJSON struct {
		TransactionalID string                 `json:"transactional_id"`
		Coordinator     int32                  `json:"coordinator"`
		ProducerID      int64                  `json:"producer_id"`
		ProducerEpoch   int16                  `json:"producer_epoch"`
		State           model.State            `json:"state"`
		TimeoutMs       int32                  `json:"timeout_ms"`
		StartTimestamp  *int64                 `json:"start_timestamp"`
		DurationMs      *int64                 `json:"duration_ms"`
		Partitions      []model.TopicPartition `json:"partitions"`
	}
	producersJSON struct {
		Topic     string               `json:"topic"`
		Partition int32                `json:"partition"`
		Producers []model.ProducerJSON `json:"producers"`
	}
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
		Topic            string  `json:"topic"`
		Partition        int32   `json:"partition"`
		ProducerID       int64   `json:"producer_id"`
		ProducerEpoch    int16   `json:"producer_epoch"`
		CoordinatorEpoch int32   `json:"coordinator_epoch"`
		StartOffset      int64   `json:"start_offset"`
		LastTimestamp    int64   `json:"last_timestamp"`
		DurationMs       int64   `json:"duration_ms"`
		TransactionalID  *string `json:"transactional_id"`
		Reason           string  `json:"reason"`
	}
)

func itoa[T ~int16 | ~int32 | ~int64 | ~int](v T) string { return strconv.FormatInt(int64(v), 10) }

// afterPartial prints what was read, then reports the error: some brokers or
// partitions failed, and the rows shown are what the rest said.
func afterPartial(printErr, readErr error) error {
	if printErr != nil {
		return printErr
	}
	return readErr
}

func runList(ctx context.Context, cl *kafkaadmin.Client, one oneShot, o out, stderr io.Writer) error {
	ls, err := cl.ListTransactions(ctx, kafkaadmin.ListOptions{DurationFilterMs: one.durationFilterMs, Pattern: one.idPattern})
	if err != nil && len(ls) == 0 {
		return err
	}
	// The broker drops ids we may not DESCRIBE without a word: say so, or a
	// short list reads as the whole truth.
	if note, _ := cl.HiddenIDs(ctx); note != "" {
		fmt.Fprintf(stderr, "txnscope: note: %s\n", escape.Line(note))
	}
	doc := listJSON{Transactions: make([]listingJSON, 0, len(ls))}
	rows := make([][]string, 0, len(ls))
	for _, l := range ls {
		doc.Transactions = append(doc.Transactions, listingJSON{l.TransactionalID, l.Coordinator, l.ProducerID, l.State})
		rows = append(rows, []string{l.TransactionalID, itoa(l.Coordinator), itoa(l.ProducerID), string(l.State)})
	}
	return afterPartial(o.emit(doc, []string{"TransactionalId", "Coordinator", "ProducerId", "TransactionState"}, rows), err)
}

func runDescribe(ctx context.Context, cl *kafkaadmin.Client, one oneShot, o out) error {
	d, err := cl.DescribeTransaction(ctx, one.transactionalID)
	if err != nil {
		return err
	}
	now := time.Now().UnixMilli()
	doc := describeJSON{TransactionalID: d.ID, Coordinator: d.Coordinator, ProducerID: d.ProducerID, ProducerEpoch: d.ProducerEpoch,
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
	row := []string{itoa(d.Coordinator), d.ID, itoa(d.ProducerID), itoa(d.ProducerEpoch), string(d.State), itoa(d.TimeoutMs),
		start, dur, strings.Join(tps, ",")}
	return o.emit(doc, []string{"CoordinatorId", "TransactionalId", "ProducerId", "ProducerEpoch", "TransactionState",
		"TransactionTimeoutMs", "CurrentTransactionStartTimeMs", "TransactionDurationMs", "TopicPartitions"}, [][]string{row})
}

func producerJSON(pr model.Producer) model.ProducerJSON {
	j := model.ProducerJSON{ProducerID: pr.ProducerID, ProducerEpoch: pr.ProducerEpoch, LastSequence: pr.LastSequence,
		LastTimestamp: pr.LastTimestampMs(), CoordinatorEpoch: pr.CoordinatorEpoch}
	if pr.CurrentTxnStartOffset >= 0 {
		v := pr.CurrentTxnStartOffset
		j.CurrentTxnStartOffset = &v
	}
	return j
}

func runDescribeProducers(ctx context.Context, cl *kafkaadmin.Client, one oneShot, o out) error {
	p := model.TopicPartition{Topic: one.topic, Partition: one.partition}
	prs, err := cl.DescribeProducers(ctx, p, one.brokerID)
	if err != nil {
		where := "its leader"
		if one.brokerID >= 0 {
			where = "broker " + itoa(one.brokerID)
		}
		return fmt.Errorf("describing the producers of %s-%d on %s: %w", p.Topic, p.Partition, where, err)
	}
	doc := producersJSON{Topic: p.Topic, Partition: p.Partition, Producers: make([]model.ProducerJSON, 0, len(prs))}
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

func runFindHanging(ctx context.Context, cl *kafkaadmin.Client, one oneShot, o out, stderr io.Writer) error {
	max := time.Duration(one.maxTxnTimeoutMin) * time.Minute
	rep, err := cl.FindHanging(ctx, kafkaadmin.HangingScope{Topic: one.topic, Partition: one.partition, Broker: one.brokerID, MaxTimeout: max})
	if err != nil && rep.Partitions == 0 {
		return err
	}
	if rep.Hidden != "" {
		fmt.Fprintf(stderr, "txnscope: note: %s\n", escape.Line(rep.Hidden))
	}
	for _, h := range rep.Possibly {
		fmt.Fprintf(stderr, "txnscope: %s-%d producer %d (start offset %d): %s\n",
			escape.Text(h.Topic), h.Partition, h.ProducerID, h.CurrentTxnStartOffset, escape.Text(string(h.Reason)))
	}
	doc := findHangingJSON{MaxTransactionTimeoutMs: max.Milliseconds(), PartitionsSearched: rep.Partitions,
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
		j.TransactionalID = &id
	}
	return j
}
