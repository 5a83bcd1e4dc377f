package kafkaadmin_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/kafkaadmin"
)

// TestListingPastAMillionIDs: kafka-transactions.sh list fails on a
// coordinator with 2,000,000 ids ("Tried to read a collection of size
// 2000000, which exceeds the maximum allowed size of 1000000", the Java
// client's guard on a response array). txnscope's reader of the response
// (readListing; franz-go's kmsg alike) is bounded by the response's bytes
// only: one coordinator that lists 1,050,000 ids is read whole.
//
// Not parallel: 17 s and 1.4 GB under the race detector, which would slow
// the timing of the tests beside it.
func TestListingPastAMillionIDs(t *testing.T) {
	c, boot := kafkatest.NewCluster(t, kfake.NumBrokers(1))
	const n = 1_050_000
	states := make([]kmsg.ListTransactionsResponseTransactionState, n)
	for i := range states {
		s := &states[i]
		s.Default()
		s.TransactionalID, s.ProducerID, s.TransactionState = "big-"+strconv.Itoa(i), int64(i), "CompleteCommit"
	}
	c.ControlKey(int16(kmsg.ListTransactions), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		resp := req.ResponseKind().(*kmsg.ListTransactionsResponse)
		resp.TransactionStates = states
		return resp, nil, true
	})
	a, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: boot, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ls, err := a.ListTransactions(context.Background(), kafkaadmin.ListOptions{DurationFilterMs: -1})
	if err != nil {
		t.Fatalf("ListTransactions of %d ids: %v", n, err)
	}
	if len(ls) != n {
		t.Fatalf("%d ids listed, want %d", len(ls), n)
	}
	seen := make(map[string]bool, n)
	for _, l := range ls {
		seen[l.TransactionalID] = true
	}
	for _, i := range []int{0, 999_999, 1_000_000, n - 1} {
		if id := "big-" + strconv.Itoa(i); !seen[id] {
			t.Errorf("%s not listed", id)
		}
	}
}
