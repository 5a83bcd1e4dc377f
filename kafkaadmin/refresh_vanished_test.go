package kafkaadmin_test

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/model"
)

// TestEmptyListingAfterRestart: a coordinator that has just restarted answers
// ListTransactions with nothing and no error while it loads its log. The ids
// it listed before must not vanish (and come back later as "began").
func TestEmptyListingAfterRestart(t *testing.T) {
	t.Parallel()
	c, boot := kafkatest.NewCluster(t)
	kafkatest.OpenTxn(t, boot, "job-0-7", "orders", time.Minute)
	kafkatest.InitIDs(t, boot, time.Minute, "idle-0-3")
	a := newAdmin(t, boot)
	s1 := refresh(t, a, nil)

	var loading atomic.Bool
	loading.Store(true)
	c.ControlKey(int16(kmsg.ListTransactions), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if !loading.Load() {
			return nil, nil, false
		}
		resp := req.(*kmsg.ListTransactionsRequest).ResponseKind().(*kmsg.ListTransactionsResponse)
		return resp, nil, true
	})

	// The describe still answers: the rows are as the coordinator describes them.
	s2 := refresh(t, a, s1)
	for _, id := range []string{"job-0-7", "idle-0-3"} {
		if tx := txnOf(t, s2, id); tx.Err != "" || !tx.Described {
			t.Fatalf("%s after an empty listing: %+v", id, tx)
		}
	}
	if tx := txnOf(t, s2, "job-0-7"); tx.State != model.Ongoing {
		t.Fatalf("the open transaction is %s after an empty listing", tx.State)
	}
	if ev := model.Diff(s1, s2); len(ev) != 0 {
		t.Fatalf("an empty listing made events: %+v", ev)
	}

	// The describe is refused too (still loading): the last known rows stay, marked.
	h := c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.DescribeTransactions}, Err: kerr.CoordinatorLoadInProgress, Count: -1})
	s3 := refresh(t, a, s2)
	h.Remove()
	tx := txnOf(t, s3, "job-0-7")
	if tx.State != model.Ongoing || !strings.Contains(tx.Err, "did not list it") || !strings.Contains(tx.Err, "COORDINATOR_LOAD_IN_PROGRESS") {
		t.Fatalf("kept row: %+v", tx)
	}
	if ev := model.Diff(s2, s3); len(ev) != 0 {
		t.Fatalf("a loading coordinator made events: %+v", ev)
	}

	// Listing again: the rows are back without marks and without events.
	loading.Store(false)
	s4 := refresh(t, a, s3)
	if tx := txnOf(t, s4, "job-0-7"); tx.Err != "" || tx.State != model.Ongoing {
		t.Fatalf("after the coordinator loaded: %+v", tx)
	}
	if ev := model.Diff(s3, s4); len(ev) != 0 {
		t.Fatalf("events after recovery: %+v", ev)
	}
}

// TestExpiredIDDropped: an id the coordinator no longer knows goes away.
func TestExpiredIDDropped(t *testing.T) {
	t.Parallel()
	c, boot := kafkatest.NewCluster(t)
	kafkatest.InitIDs(t, boot, time.Minute, "old-0-1", "kept-0-1")
	a := newAdmin(t, boot)
	s1 := refresh(t, a, nil)
	drop := func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		resp := req.ResponseKind()
		switch r := resp.(type) {
		case *kmsg.ListTransactionsResponse:
			l := kmsg.NewListTransactionsResponseTransactionState()
			l.TransactionalID, l.TransactionState, l.ProducerID = "kept-0-1", "Empty", txnOf(t, s1, "kept-0-1").ProducerID
			r.TransactionStates = append(r.TransactionStates, l)
		case *kmsg.DescribeTransactionsResponse:
			for _, id := range req.(*kmsg.DescribeTransactionsRequest).TransactionalIDs {
				if id != "old-0-1" {
					return nil, nil, false
				}
			}
			st := kmsg.NewDescribeTransactionsResponseTransactionState()
			st.TransactionalID, st.ErrorCode = "old-0-1", kerr.TransactionalIDNotFound.Code
			r.TransactionStates = append(r.TransactionStates, st)
		}
		return resp, nil, true
	}
	c.ControlKey(int16(kmsg.ListTransactions), drop)
	c.ControlKey(int16(kmsg.DescribeTransactions), drop)
	s2 := refresh(t, a, s1)
	if _, ok := s2.Txn("old-0-1"); ok {
		t.Fatalf("an id its coordinator no longer knows is still shown")
	}
	if _, ok := s2.Txn("kept-0-1"); !ok {
		t.Fatalf("the listed id is gone")
	}
}
