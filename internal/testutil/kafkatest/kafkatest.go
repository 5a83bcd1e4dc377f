// Package kafkatest starts a kfake cluster on 127.0.0.1 and drives real
// transactional franz-go producers against it, for tests of txnscope's
// packages.
package kafkatest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/txnscope/txnscope/model"
)

// Partitions is how many partitions an auto-created topic gets.
const Partitions = 3

// Records is how many records OpenTxn writes.
const Records = 3

// NewCluster starts three kfake brokers on free 127.0.0.1 ports, closed when
// the test ends. Topics are created on first use with Partitions partitions.
// The protocol is capped at Kafka 3.9: under the KIP-890 produce path kfake
// can leave a phantom Ongoing transaction behind a fenced producer.
func NewCluster(t testing.TB, opts ...kfake.Opt) (*kfake.Cluster, []string) {
	t.Helper()
	all := append([]kfake.Opt{
		kfake.NumBrokers(3),
		kfake.MaxVersions(kversion.V3_9_0()),
		kfake.AllowAutoTopicCreation(),
		kfake.DefaultNumPartitions(Partitions),
	}, opts...)
	c, err := kfake.NewCluster(all...)
	if err != nil {
		t.Fatalf("kfake: %v", err)
	}
	t.Cleanup(c.Close)
	return c, c.ListenAddrs()
}

// Producer returns a transactional client for id, closed when the test ends.
// It partitions manually: a record goes to its Partition field.
func Producer(t testing.TB, bootstrap []string, id string, timeout time.Duration) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(bootstrap...),
		kgo.TransactionalID(id),
		kgo.TransactionTimeout(timeout),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.AllowAutoTopicCreation(),
		kgo.RequestRetries(3),
	)
	if err != nil {
		t.Fatalf("producer %s: %v", id, err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// Produce writes n records to one partition inside cl's current transaction.
func Produce(t testing.TB, cl *kgo.Client, topic string, partition int32, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: topic, Partition: partition, Value: []byte("txnscope test record")}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce to %s-%d: %v", topic, partition, err)
	}
}

// Begin starts a transaction on cl.
func Begin(t testing.TB, cl *kgo.Client) {
	t.Helper()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatalf("begin transaction: %v", err)
	}
}

// End commits (or aborts) cl's transaction.
func End(t testing.TB, cl *kgo.Client, commit bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		t.Fatalf("end transaction (commit=%v): %v", commit, err)
	}
}

// OpenTxn begins a transaction for id, writes Records records to partition 0
// of topic, and leaves it open. The coordinator aborts it after timeout.
func OpenTxn(t testing.TB, bootstrap []string, id, topic string, timeout time.Duration) *kgo.Client {
	t.Helper()
	cl := Producer(t, bootstrap, id, timeout)
	Begin(t, cl)
	Produce(t, cl, topic, 0, Records)
	return cl
}

// InitIDs registers transactional ids with their coordinators (one
// InitProducerId each) and leaves them Empty: the cheap way to make many idle
// ids.
func InitIDs(t testing.TB, bootstrap []string, timeout time.Duration, ids ...string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap...))
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	coords := kadm.NewClient(cl).FindTxnCoordinators(ctx, ids...)
	if err := coords.Error(); err != nil {
		t.Fatalf("find coordinators: %v", err)
	}
	const workers = 16
	work := make(chan string)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for id := range work {
				req := kmsg.NewPtrInitProducerIDRequest()
				req.TransactionalID = kmsg.StringPtr(id)
				req.ProducerID, req.ProducerEpoch = -1, -1
				req.TransactionTimeoutMillis = int32(timeout / time.Millisecond)
				resp, err := req.RequestWith(ctx, cl.Broker(int(coords[id].NodeID)))
				if err == nil {
					err = kerr.ErrorForCode(resp.ErrorCode)
				}
				if err != nil {
					errs <- fmt.Errorf("init %s: %w", id, err)
					cancel() // stops the feeder and the other workers
					return
				}
			}
		})
	}
	go func() {
		defer close(work)
		for _, id := range ids {
			select {
			case work <- id:
			case <-ctx.Done():
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
}

// Journal is an in-memory audit trail for kafkaadmin's Execute: it keeps the
// try number of every Sending and every result, and refuses Sending with
// FailSending when set (as a full disk would).
type Journal struct {
	mu          sync.Mutex
	FailSending error
	tries       []int
	requests    []string
	results     []model.Result
	evidence    []model.CommitEvidence
}

// ID names the attempt.
func (j *Journal) ID() string { return "test-attempt" }

// Rests records the evidence the next request rests on.
func (j *Journal) Rests(ev model.CommitEvidence) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.evidence = append(j.evidence, ev)
}

// Evidence is what Rests recorded, in order.
func (j *Journal) Evidence() []model.CommitEvidence {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]model.CommitEvidence(nil), j.evidence...)
}

// Sending records that request number try is about to go out.
func (j *Journal) Sending(try int, request string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.FailSending != nil {
		return j.FailSending
	}
	j.tries = append(j.tries, try)
	j.requests = append(j.requests, request)
	return nil
}

// Done records the result.
func (j *Journal) Done(r model.Result) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.results = append(j.results, r)
	return nil
}

// Tries are the try numbers recorded before requests went out.
func (j *Journal) Tries() []int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]int(nil), j.tries...)
}

// Requests are the requests recorded, as they went out.
func (j *Journal) Requests() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]string(nil), j.requests...)
}

// Results are the results recorded.
func (j *Journal) Results() []model.Result {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]model.Result(nil), j.results...)
}
