package kafkaadmin

import (
	"testing"
	"time"

	"github.com/txnscope/txnscope/model"
)

// TestNewerCommitting: after a commit answered without an error, a later
// transaction of the same producer id and epoch being committed at the
// coordinator means the request may have committed that one (transaction
// version 1): TestRealKafkaCommitHeldTurnover saw its markers not yet
// written and the logs show only the one confirmed, committed by its producer.
func TestNewerCommitting(t *testing.T) {
	start := time.UnixMilli(1_780_000_000_000)
	a := model.Action{ProducerID: 7, ProducerEpoch: 3, Start: start}
	txn := func(pid int64, epoch int16, st model.State, at time.Time) model.Txn {
		tx := model.Txn{ProducerID: pid, ProducerEpoch: epoch, State: st}
		if !at.IsZero() {
			tx.StartUnixMs = at.UnixMilli()
		}
		return tx
	}
	later := start.Add(40 * time.Millisecond)
	for _, c := range []struct {
		name  string
		fresh model.Txn
		want  bool
	}{
		{"the one confirmed, committing", txn(7, 3, model.PrepareCommit, start), false},
		{"the one confirmed, committed", txn(7, 3, model.CompleteCommit, start), false},
		{"a newer one, committing", txn(7, 3, model.PrepareCommit, later), true},
		{"a newer one, committed", txn(7, 3, model.CompleteCommit, later), true},
		{"a newer one, still open: not this request's", txn(7, 3, model.Ongoing, later), false},
		{"a newer one at the next epoch (version 2): fenced, not this request's", txn(7, 4, model.CompleteCommit, later), false},
		{"another producer id", txn(8, 3, model.CompleteCommit, later), false},
		{"no start known", txn(7, 3, model.CompleteCommit, time.Time{}), false},
	} {
		if got := newerCommitting(a, c.fresh); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
