package cli

import (
	"bytes"
	"testing"

	"github.com/txnscope/txnscope/internal/jsonout"
	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// list -o json is streamed a transaction at a time, and prints what the
// whole document printed, byte for byte: none, one, several, and ids with
// escapes, bidi overrides, HTML characters and bytes that are not UTF-8.
func TestListJSONStreamsTheSameBytes(t *testing.T) {
	for _, tc := range []struct {
		name string
		ls   []kafkaadmin.Listing
	}{
		{"none", nil},
		{"one", []kafkaadmin.Listing{{TransactionalID: "orders-0-7", Coordinator: 1, ProducerID: 4001, State: model.Ongoing}}},
		{"hostile", []kafkaadmin.Listing{
			{TransactionalID: "a\x1b[2Jb", Coordinator: 0, ProducerID: 1, State: model.CompleteCommit},
			{TransactionalID: "bidi\u202eevil", Coordinator: 2, ProducerID: -1, State: model.Empty},
			{TransactionalID: "<b>&amp;\u009b31m", Coordinator: 3, ProducerID: 9, State: model.StateOf("SomethingNew")},
			{TransactionalID: "not utf-8 \xff\xfe", Coordinator: 1, ProducerID: 2, State: model.PrepareAbort},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := listJSON{Transactions: make([]listingJSON, 0, len(tc.ls))}
			for _, l := range tc.ls {
				doc.Transactions = append(doc.Transactions, listingJSON{TransactionalID: l.TransactionalID, TransactionalIDBase64: jsonout.Base64(l.TransactionalID),
					Coordinator: l.Coordinator, ProducerID: l.ProducerID, State: l.State})
			}
			var want, got bytes.Buffer
			if err := writeJSON(&want, doc); err != nil {
				t.Fatal(err)
			}
			if err := streamListJSON(&got, tc.ls); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("streamed:\n%s\nwhole:\n%s", got.String(), want.String())
			}
		})
	}
}
