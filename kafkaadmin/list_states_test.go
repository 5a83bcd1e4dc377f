package kafkaadmin_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/kafkaadmin"
)

// The brokers filter the listing by state (issue 37: at 2,000,000 ids the
// open ones are a hundredth of it): of an open and a committed transaction,
// "Ongoing" lists the open one (kfake labels every other id "Empty" for its
// filter, so the committed ones are filtered on real Kafka: TestListByState
// in integration); a state the broker does not know is an error for that
// broker, never an empty listing.
func TestListTransactionsByState(t *testing.T) {
	c, boot := kafkatest.NewCluster(t, kfake.NumBrokers(1))
	kafkatest.OpenTxn(t, boot, "open-0-1", "orders", time.Minute)
	done := kafkatest.Producer(t, boot, "done-0-1", time.Minute)
	kafkatest.Begin(t, done)
	kafkatest.Produce(t, done, "orders", 0, 1)
	kafkatest.End(t, done, true)
	a, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: boot, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for _, tc := range []struct {
		states []string
		want   string
	}{
		{nil, "done-0-1 Empty, open-0-1 Ongoing"},
		{[]string{"Ongoing"}, "open-0-1 Ongoing"},
		{[]string{"PrepareAbort"}, ""},
		{[]string{"Ongoing", "PrepareCommit", "PrepareAbort"}, "open-0-1 Ongoing"},
	} {
		ls, err := a.ListTransactions(context.Background(), kafkaadmin.ListOptions{DurationFilterMs: -1, States: tc.states})
		if err != nil {
			t.Fatalf("%v: %v", tc.states, err)
		}
		var got []string
		for _, l := range ls {
			got = append(got, l.TransactionalID+" "+l.State.String())
		}
		if strings.Join(got, ", ") != tc.want {
			t.Errorf("states %v: listed %q, want %q", tc.states, strings.Join(got, ", "), tc.want)
		}
	}

	// kfake knows every state; a broker that does not says so.
	c.ControlKey(int16(kmsg.ListTransactions), func(req kmsg.Request) (kmsg.Response, error, bool) {
		resp := req.ResponseKind().(*kmsg.ListTransactionsResponse)
		resp.UnknownStateFilters = req.(*kmsg.ListTransactionsRequest).StateFilters
		return resp, nil, true
	})
	_, err = a.ListTransactions(context.Background(), kafkaadmin.ListOptions{DurationFilterMs: -1, States: []string{"PrepareEpochFence"}})
	if err == nil || !strings.Contains(err.Error(), "does not know the state PrepareEpochFence") {
		t.Fatalf("a state the broker does not know: %v", err)
	}
}
