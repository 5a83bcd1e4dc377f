package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// One round asks every broker and waits for all of them: kfake lists every id
// on every broker (Kafka lists each id on its coordinator only), so 3 brokers
// give each of the 30 ids three times.
func TestRoundAsksEveryBroker(t *testing.T) {
	fake, err := kfake.NewCluster(kfake.NumBrokers(3))
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(fake.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range 30 {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID = kmsg.StringPtr(fmt.Sprintf("rt-%d", i))
		req.TransactionTimeoutMillis = 60000
		req.ProducerID, req.ProducerEpoch = -1, -1
		if _, err := req.RequestWith(ctx, cl); err != nil {
			t.Fatal(err)
		}
	}
	brokers, err := allBrokers(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := round(ctx, brokers)
	if err != nil {
		t.Fatal(err)
	}
	if len(brokers) != 3 || ids != 3*30 {
		t.Fatalf("want 30 ids from each of 3 brokers, got %d from %d", ids, len(brokers))
	}

	// -poll: the steady Poll runs on the snapshot the last one returned.
	steady, err := poller(ctx, fake.ListenAddrs()[0])
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := steady(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, tt := range []struct {
		in   []time.Duration
		want time.Duration
	}{{[]time.Duration{3, 1, 2}, 2}, {[]time.Duration{4, 1, 3, 2}, 2}, {[]time.Duration{7}, 7}} {
		if got := median(tt.in); got != tt.want {
			t.Errorf("median %v = %v, want %v", tt.in, got, tt.want)
		}
	}
}
