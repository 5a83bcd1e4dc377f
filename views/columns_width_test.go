package views

import (
	"math"
	"testing"

	"github.com/txnscope/txnscope/model"
)

// TestProducerWidthIsTheTextsLength: the header's column width, counted
// without building the text, is the length of the text the column shows.
func TestProducerWidthIsTheTextsLength(t *testing.T) {
	for _, pid := range []int64{0, 7, 9, 10, 99, 100, 123456789, -1, -10, math.MaxInt64, math.MinInt64} {
		for _, epoch := range []int16{0, 5, 10, 32767, -1, math.MinInt16} {
			for _, described := range []bool{false, true} {
				tx := model.Txn{ProducerID: pid, ProducerEpoch: epoch, Described: described}
				if got, want := producerTextLen(&tx), len(producerText(Row{Txn: &tx})); got != want {
					t.Errorf("%d/%d described=%v: width %d, text %q", pid, epoch, described, got, producerText(Row{Txn: &tx}))
				}
			}
		}
	}
}
