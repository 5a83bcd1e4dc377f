package views

import (
	"math"
	"testing"

	"github.com/txnscope/txnscope/model"
)

func TestProducerTextLen(t *testing.T) {
	for _, tx := range []model.Txn{
		{ProducerID: 0, Described: true},
		{ProducerID: 9, ProducerEpoch: 10, Described: true},
		{ProducerID: 4003, ProducerEpoch: 5, Described: true},
		{ProducerID: -1, ProducerEpoch: -1, Described: true},
		{ProducerID: math.MaxInt64, ProducerEpoch: math.MaxInt16, Described: true},
		{ProducerID: math.MinInt64, ProducerEpoch: math.MinInt16, Described: true},
		{ProducerID: 9001},
		{ProducerID: 9001, ProducerEpoch: 3},
		{ProducerID: 1234567890123456789, Pending: true},
	} {
		if got, want := producerTextLen(&tx), len(producerText(Row{Txn: &tx})); got != want {
			t.Errorf("%+v: %d, want %d (%q)", tx, got, want, producerText(Row{Txn: &tx}))
		}
	}
}
