package cli

import (
	"context"
	"fmt"

	"github.com/txnscope/txnscope/internal/escape"
	"github.com/txnscope/txnscope/internal/jsonout"
	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// list is kafka-transactions.sh list: every transaction the coordinators know.
const cmdList command = "list"

// The -o json schema of list (docs/cli.md).
type (
	listJSON struct {
		Transactions []listingJSON `json:"transactions"`
	}
	listingJSON struct {
		TransactionalID string `json:"transactional_id"`
		// TransactionalIDBase64 is the id's exact bytes when it is not
		// UTF-8 (jsonout.Base64), as in every -o json document.
		TransactionalIDBase64 string      `json:"transactional_id_base64,omitempty"`
		Coordinator           int32       `json:"coordinator"`
		ProducerID            int64       `json:"producer_id"`
		State                 model.State `json:"state"`
	}
)

func runList(ctx context.Context, cl *kafkaadmin.Client, c config, o out, std Stdio) error {
	one := c.one
	ls, err := cl.ListTransactions(ctx, kafkaadmin.ListOptions{DurationFilterMs: one.durationFilterMs, Pattern: one.idPattern})
	if err != nil && len(ls) == 0 {
		return err
	}
	// The broker drops ids we may not DESCRIBE without a word: say so, or a
	// short list reads as the whole truth.
	if note, _ := cl.HiddenIDs(ctx); note != "" {
		fmt.Fprintf(std.Err, "txnscope: note: %s\n", escape.Line(note))
	}
	doc := listJSON{Transactions: make([]listingJSON, 0, len(ls))}
	rows := make([][]string, 0, len(ls))
	for _, l := range ls {
		doc.Transactions = append(doc.Transactions, listingJSON{TransactionalID: l.TransactionalID, TransactionalIDBase64: jsonout.Base64(l.TransactionalID),
			Coordinator: l.Coordinator, ProducerID: l.ProducerID, State: l.State})
		rows = append(rows, []string{l.TransactionalID, itoa(l.Coordinator), itoa(l.ProducerID), string(l.State)})
	}
	return afterPartial(o.emit(doc, []string{"TransactionalId", "Coordinator", "ProducerId", "TransactionState"}, rows), err)
}
