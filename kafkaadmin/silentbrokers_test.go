package kafkaadmin

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TestSilentBrokers: a request that ran out its own deadline marks its broker
// for the rest of the refresh, whose later requests to it fail at once with
// a deadline error; a refresh that was itself cancelled, or one request's
// other error, marks nothing; another refresh starts clean.
func TestSilentBrokers(t *testing.T) {
	refresh := withSilentNodes(context.Background())
	expired, cancel := context.WithTimeout(refresh, time.Nanosecond)
	defer cancel()
	<-expired.Done()
	failed, cancelFailed := context.WithCancel(refresh)
	cancelFailed()

	noteSilent(refresh, failed, 1, context.Canceled) // cancelled, not timed out
	if silentErr(refresh, 1) != nil || anySilent(refresh) {
		t.Fatal("a cancelled request marked its broker")
	}
	noteSilent(refresh, expired, -1, context.DeadlineExceeded) // a shard kgo sent to no broker
	if anySilent(refresh) {
		t.Fatal("broker -1 marked")
	}
	noteSilent(refresh, expired, 2, context.DeadlineExceeded)
	err := silentErr(refresh, 2)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || errText(err) != "no answer within the timeout (earlier in this refresh)" {
		t.Fatalf("broker 2 after its timeout: %v", err)
	}
	if silentErr(refresh, 3) != nil {
		t.Error("broker 3 marked")
	}
	alive, cancelAlive := context.WithCancel(refresh)
	defer cancelAlive()
	noteSilent(refresh, alive, 5, kerr.NotLeaderForPartition) // Kafka answered
	if silentErr(refresh, 5) != nil {
		t.Error("a broker that answered with an error code marked")
	}
	noteSilent(refresh, alive, 6, errors.New("the broker connection has died"))
	if err := silentErr(refresh, 6); err == nil || !errors.Is(err, context.DeadlineExceeded) || errText(err) != "no answer (its connection failed earlier in this refresh)" {
		t.Errorf("broker 6 after its connection died: %v", err)
	}
	noteSilent(refresh, expired, 2, errors.New("the broker connection has died"))
	if errText(silentErr(refresh, 2)) != "no answer within the timeout (earlier in this refresh)" {
		t.Errorf("broker 2's first reason replaced: %v", silentErr(refresh, 2))
	}
	if got := silentBrokers(refresh, map[int32]error{3: errors.New("boom")}); len(got) != 3 || got[0].ID != 2 || got[1].ID != 3 || got[2].ID != 6 ||
		got[0].Err != "no answer within the timeout" || got[1].Err != "boom" || got[2].Err != "its connection failed" {
		t.Errorf("silent brokers: %+v", got)
	}
	if silentErr(withSilentNodes(context.Background()), 2) != nil || silentErr(context.Background(), 2) != nil {
		t.Error("another refresh sees broker 2 silent")
	}

	done, cancelDone := context.WithCancel(refresh)
	cancelDone()
	late, cancelLate := context.WithTimeout(done, time.Nanosecond)
	defer cancelLate()
	<-late.Done()
	noteSilent(done, late, 4, context.DeadlineExceeded) // the refresh itself is over
	if silentErr(refresh, 4) != nil {
		t.Error("a request of a finished refresh marked its broker")
	}
}

// TestBrokersGone: a broker that was in the metadata and is no longer is
// named until it is back, or for goneFor at most.
func TestBrokersGone(t *testing.T) {
	c := &Client{}
	t0 := time.Unix(1000, 0)
	if got := c.brokersGone([]int32{1, 2, 3}, t0); len(got) != 0 {
		t.Fatalf("first refresh: %v", got)
	}
	if got := c.brokersGone([]int32{1, 3}, t0.Add(time.Second)); len(got) != 1 || got[2] != errGone {
		t.Errorf("broker 2 left: %v", got)
	}
	if got := c.brokersGone([]int32{1, 2, 3}, t0.Add(2*time.Second)); len(got) != 0 {
		t.Errorf("broker 2 back: %v", got)
	}
	if got := c.brokersGone([]int32{1, 3}, t0.Add(3*time.Second)); len(got) != 1 {
		t.Errorf("broker 2 left again: %v", got)
	}
	if got := c.brokersGone([]int32{1, 3}, t0.Add(3*time.Second+goneFor)); len(got) != 0 {
		t.Errorf("broker 2 gone for %s: still named: %v", goneFor, got)
	}
}

// A refresh that fails as a whole because its only broker's connection
// failed says how it failed, not that a later step skipped the broker.
func TestWholeSaysWhyTheConnectionFailed(t *testing.T) {
	refresh := withSilentNodes(context.Background())
	alive, cancel := context.WithCancel(refresh)
	defer cancel()
	refused := errors.New("dial tcp 127.0.0.1:9092: connect: connection refused")
	noteSilent(refresh, alive, 1, refused)
	err := whole(refresh, "cannot list transactions", silentErr(refresh, 1))
	if want := "cannot list transactions: dial tcp 127.0.0.1:9092: connect: connection refused"; err == nil || err.Error() != want {
		t.Errorf("whole: %v, want %q", err, want)
	}
}
