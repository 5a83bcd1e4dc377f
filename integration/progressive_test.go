package integration

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/model"
)

// TestProgressiveLoadEqualsAFullRefresh: on a real broker, the TUI's first
// poll lists every id (2,000 idle ones and three open transactions of real
// producers) with none of them described, and describing the rows it left
// pending, batch by batch, gives exactly the rows a full Refresh gives.
func TestProgressiveLoadEqualsAFullRefresh(t *testing.T) {
	t.Parallel()
	bs := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	prefix := name(t, "load")
	ids := make([]string, 2000)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%d-%d", prefix, i%7, i)
	}
	initIDs(ctx, t, bs, ids)
	tp := topicOn(ctx, t, newAdmin(t, bs))
	for i := range 3 {
		id := fmt.Sprintf("%s-open-%d", prefix, i)
		openTxn(ctx, t, producer(t, bs, id, 10*time.Minute), tp, 2, id)
		ids = append(ids, id)
	}
	ours := func(s *model.Snapshot) []model.Txn {
		var out []model.Txn
		for _, tx := range s.Txns {
			if strings.HasPrefix(tx.ID, prefix) {
				out = append(out, tx)
			}
		}
		return out
	}

	c := newScope(t, bs).c
	first, err := c.Poll(ctx, nil)
	if err != nil {
		t.Fatalf("Poll: %v", err)
	}
	listed := ours(first)
	if len(listed) != len(ids) {
		t.Fatalf("the first poll listed %d of our %d ids", len(listed), len(ids))
	}
	for _, tx := range listed {
		if !tx.Pending || tx.Described {
			t.Fatalf("the first poll described %s: %+v", tx.ID, tx)
		}
	}

	// The batches, as the TUI takes them (only our ids: the broker is shared),
	// each id asked of the broker that listed it.
	refs := make([]model.TxnRef, len(listed))
	for i := range listed {
		refs[i] = listed[i].Ref()
	}
	s := first
	for len(refs) > 0 {
		n := min(len(refs), 300)
		d, err := c.Describe(ctx, refs[:n])
		if err != nil {
			t.Fatalf("Describe: %v", err)
		}
		s, _ = model.Fill(s, d)
		refs = refs[n:]
	}
	full, err := c.Refresh(ctx, nil)
	if err != nil {
		t.Fatalf("Refresh: %v", err)
	}
	got, want := ours(s), ours(full)
	if !reflect.DeepEqual(got, want) {
		for i := range min(len(got), len(want)) {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Fatalf("row %d after the progressive load\n%+v\nfrom a full Refresh\n%+v", i, got[i], want[i])
			}
		}
		t.Fatalf("%d rows after the progressive load, %d from a full Refresh", len(got), len(want))
	}
}

// initIDs registers ids with their coordinators, one InitProducerId each, as
// a producer starting up does, and leaves them Empty.
func initIDs(ctx context.Context, t *testing.T, bootstrap string, ids []string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	defer cl.Close()
	// A fresh broker creates __transaction_state on the first lookup.
	var coords kadm.FindCoordinatorResponses
	for try := 0; ; try++ {
		coords = kadm.NewClient(cl).FindTxnCoordinators(ctx, ids...)
		err := coords.Error()
		if err == nil {
			break
		}
		if try == 100 || !kerr.IsRetriable(err) {
			t.Fatalf("FindTxnCoordinators: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	work := make(chan string)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for range 16 {
		wg.Go(func() {
			for id := range work {
				req := kmsg.NewPtrInitProducerIDRequest()
				req.TransactionalID = kmsg.StringPtr(id)
				req.ProducerID, req.ProducerEpoch = -1, -1
				req.TransactionTimeoutMillis = 60000
				var err error
				for try := 0; try < 50; try++ { // a coordinator may still be loading
					var resp *kmsg.InitProducerIDResponse
					resp, err = req.RequestWith(ctx, cl.Broker(int(coords[id].NodeID)))
					if err == nil {
						err = kerr.ErrorForCode(resp.ErrorCode)
					}
					if !kerr.IsRetriable(err) {
						break
					}
					time.Sleep(100 * time.Millisecond)
				}
				if err != nil {
					mu.Lock()
					first = fmt.Errorf("InitProducerId(%s): %w", id, err)
					mu.Unlock()
				}
			}
		})
	}
	for _, id := range ids {
		work <- id
	}
	close(work)
	wg.Wait()
	if first != nil {
		t.Fatal(first)
	}
}
