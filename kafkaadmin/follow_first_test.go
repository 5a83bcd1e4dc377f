package kafkaadmin

import (
	"context"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/model"
)

// A first poll's rows are the listing's. A log small enough to be read
// before the poll says where its rows come from must not make the poll say
// they are the log's: kfake's listing has none of the log's ids, and a
// caller trusting Source.Log would look for them there (it failed so in CI,
// on a loaded machine).
func TestFirstPollNeverSaysTheLogGaveItsRows(t *testing.T) {
	_, boot := kafkatest.NewCluster(t)
	lw := kafkatest.NewTxnLog(t, boot)
	lw.State(0, "first-job-0-1", 4)
	c, err := New(Config{Bootstrap: boot, Timeout: 5 * time.Second, FollowLog: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	defer func(was func()) { followStarted = was }(followStarted)
	followStarted = func() { // the reader goes live before the poll looks
		select {
		case <-c.LogLive():
		case <-time.After(20 * time.Second):
			t.Error("the log never went live")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := c.Poll(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Txn("first-job-0-1"); s.Source.Log || ok || !s.Source.Reading {
		t.Fatalf("the first poll: source %+v, the log's id listed %v; want the listing's rows, the log being read", s.Source, ok)
	}
	followStarted = func() {}
	s, err = c.Poll(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if tx, ok := s.Txn("first-job-0-1"); !s.Source.Log || !ok || tx.State != model.CompleteCommit {
		t.Fatalf("the next poll: source %+v, row %+v (%v)", s.Source, tx, ok)
	}
}
