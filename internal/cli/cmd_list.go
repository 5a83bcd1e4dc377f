package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

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
	ls, err := cl.ListTransactions(ctx, kafkaadmin.ListOptions{DurationFilterMs: one.durationFilterMs, Pattern: one.idPattern, States: one.states})
	if err != nil && len(ls) == 0 {
		return err
	}
	// The broker drops ids we may not DESCRIBE without a word: say so, or a
	// short list reads as the whole truth.
	if note, _ := cl.HiddenIDs(ctx); note != "" {
		fmt.Fprintf(std.Err, "txnscope: note: %s\n", escape.Line(note))
	}
	// Only what the output prints is made: at 2,000,000 ids each form is
	// hundreds of megabytes.
	if o.json {
		if werr := streamListJSON(o.w, ls); werr != nil {
			return fmt.Errorf("writing the output: %w", werr)
		}
		return afterPartial(nil, err)
	}
	werr := printRows(o.w, []string{"TransactionalId", "Coordinator", "ProducerId", "TransactionState"}, len(ls),
		func(i int, cells []string) {
			l := &ls[i]
			cells[0], cells[1], cells[2], cells[3] = l.TransactionalID, itoa(l.Coordinator), itoa(l.ProducerID), l.State.String()
		})
	if werr != nil {
		return fmt.Errorf("writing the output: %w", werr)
	}
	return afterPartial(nil, err)
}

// streamListJSON writes what writeJSON writes of the listing as a listJSON,
// byte for byte, one transaction at a time: at 2,000,000 ids the document
// and its encoding held 1.4 GB.
func streamListJSON(w io.Writer, ls []kafkaadmin.Listing) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("    ", "  ")
	enc.SetEscapeHTML(false)
	bw.WriteString("{\n  \"transactions\": [")
	for i, l := range ls {
		buf.Reset()
		if err := enc.Encode(listingJSON{TransactionalID: l.TransactionalID, TransactionalIDBase64: jsonout.Base64(l.TransactionalID),
			Coordinator: l.Coordinator, ProducerID: l.ProducerID, State: l.State}); err != nil {
			return err
		}
		if i == 0 {
			bw.WriteString("\n    ")
		} else {
			bw.WriteString(",\n    ")
		}
		bw.Write(escape.JSON(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))))
	}
	if len(ls) > 0 {
		bw.WriteString("\n  ")
	}
	bw.WriteString("]\n}\n")
	return bw.Flush()
}
