package integration

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/txnscope/txnscope/kafkaadmin"
)

// TestListByState: the broker filters ListTransactions by state (list
// --state): of an open and a committed transaction, "Ongoing" lists the
// open one and not the committed one, "CompleteCommit" the other way round.
func TestListByState(t *testing.T) {
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	adm := newAdmin(t, bootstrap)
	topic := createTestTopic(ctx, t, adm)
	open, done := uniqueName(t, "open"), uniqueName(t, "done")
	for _, id := range []string{open, done} {
		p, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.TransactionalID(id), kgo.TransactionTimeout(time.Minute), kgo.DefaultProduceTopic(topic))
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		if err := p.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := p.ProduceSync(ctx, kgo.StringRecord("x")).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if id == done {
			if err := p.EndTransaction(ctx, kgo.TryCommit); err != nil {
				t.Fatal(err)
			}
		}
	}
	waitTxnState(ctx, t, adm, open, "Ongoing")
	waitTxnState(ctx, t, adm, done, "CompleteCommit")

	a, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: []string{bootstrap}, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for _, tc := range []struct {
		state    string
		has, not string
	}{{"Ongoing", open, done}, {"CompleteCommit", done, open}} {
		ls, err := a.ListTransactions(ctx, kafkaadmin.ListOptions{DurationFilterMs: -1, States: []string{tc.state}})
		if err != nil {
			t.Fatalf("%s: %v", tc.state, err)
		}
		listed := func(id string) bool {
			return slices.ContainsFunc(ls, func(l kafkaadmin.Listing) bool { return l.TransactionalID == id })
		}
		if !listed(tc.has) || listed(tc.not) {
			t.Errorf("--state %s: lists %s %v, %s %v", tc.state, tc.has, listed(tc.has), tc.not, listed(tc.not))
		}
		for _, l := range ls {
			if l.State.String() != tc.state {
				t.Errorf("--state %s listed %s in %s", tc.state, l.TransactionalID, l.State)
			}
		}
	}
}
