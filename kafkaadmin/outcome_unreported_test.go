package kafkaadmin

import (
	"testing"
	"time"

	"github.com/txnscope/txnscope/model"
)

// TestUnreported: which ends a refresh reads from the markers. Under
// transaction version 1 a commit never moves the epoch: an id one or more up
// in CompleteCommit was initialized again since the Ongoing one shown (a
// restored job fenced it and committed its own), whose end only its marker
// tells (seen on Kafka 3.9.1 and 4.0.2 at transaction version 1).
func TestUnreported(t *testing.T) {
	start := time.UnixMilli(1_795_000_000_000)
	ongoing := model.Txn{ID: "a", State: model.Ongoing, ProducerID: 7, ProducerEpoch: 1}
	ongoing.SetStart(start)
	at := func(s model.State, epoch int16) model.Txn {
		return model.Txn{ID: "a", State: s, ProducerID: 7, ProducerEpoch: epoch}
	}
	for _, c := range []struct {
		name string
		now  model.Txn
		tv2  bool
		want bool
	}{
		{"v1: committed, same epoch: its own commit", at(model.CompleteCommit, 1), false, false},
		{"v1: committed three up: a later transaction's", at(model.CompleteCommit, 4), false, true},
		{"v1: aborted one up: its own (timeout or fence)", at(model.CompleteAbort, 2), false, false},
		{"v2: committed one up: its own", at(model.CompleteCommit, 2), true, false},
		{"v2: committed two up: more than one end", at(model.CompleteCommit, 3), true, true},
		{"Empty: always read", at(model.Empty, 3), false, true},
	} {
		if got := unreported(ongoing, c.now, c.tv2); got != c.want {
			t.Errorf("%s: unreported = %v, want %v", c.name, got, c.want)
		}
	}
}
