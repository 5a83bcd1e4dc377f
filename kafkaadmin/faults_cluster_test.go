package kafkaadmin_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// faultTimeout is the client's per-request timeout in the fault tests: short,
// so that a request slept past it costs little, long enough for kfake under
// -race on two cores.
const faultTimeout = 300 * time.Millisecond

// The ids of the static cluster.
const (
	openA      = "open-a-0-1"    // Ongoing on orders-0
	openB      = "open-b-0-1"    // Ongoing on payments-0 and payments-1
	doneID     = "done-0-1"      // committed on orders-1
	abortID    = "gone-0-1"      // aborted on orders-2
	stuckGroup = "stuck-readers" // at orders-0's LSO
)

var idleIDs = []string{"idle-0-1", "idle-1-1", "idle-2-1", "idle-3-1", "idle-4-1"}

// errFaultDrop makes kfake close the connection without answering.
var errFaultDrop = errors.New("fault: connection dropped")

// fault is one thing that goes wrong with some requests.
type fault struct {
	name  string
	keys  []kmsg.Key
	nodes []int32     // nil: every broker
	code  *kerr.Error // the broker answers this error for every entity
	drop  bool        // the connection is closed instead of an answer
	sleep time.Duration
	empty bool // an answer that names none of the entities asked about
}

// injector fails requests the way the current faults say, counts every
// request kfake receives, and answers ListTransactions as real Kafka does:
// each broker lists only the ids it coordinates (kfake lists every id on
// every broker, which would hide a broker that fails to answer).
type injector struct {
	c    *kfake.Cluster
	done chan struct{} // closed when the test ends: wakes slept requests

	mu      sync.Mutex
	active  []fault
	handles []*kfake.FaultHandle
	seen    map[kmsg.Key]int
	listing map[int32][]kmsg.ListTransactionsResponseTransactionState
}

func newInjector(t testing.TB, c *kfake.Cluster) *injector {
	inj := &injector{c: c, done: make(chan struct{}), seen: map[kmsg.Key]int{}}
	// Registered after the cluster's Close, so it runs first: no request
	// may sleep past the test, nor its timer goroutine outlive it.
	t.Cleanup(func() { close(inj.done) })
	c.ControlKey(-1, inj.control)
	return inj
}

// realListing makes each broker list only the ids it coordinates, from
// the given truth.
func (inj *injector) realListing(truth *model.Snapshot) {
	m := map[int32][]kmsg.ListTransactionsResponseTransactionState{}
	for _, tx := range truth.Txns {
		st := kmsg.NewListTransactionsResponseTransactionState()
		st.TransactionalID, st.ProducerID, st.TransactionState = tx.ID, tx.ProducerID, tx.State.String()
		coord := inj.c.CoordinatorFor(tx.ID)
		m[coord] = append(m[coord], st)
	}
	inj.mu.Lock()
	inj.listing = m
	inj.mu.Unlock()
}

func (inj *injector) control(req kmsg.Request) (kmsg.Response, error, bool) {
	inj.c.KeepControl()
	key, node := kmsg.Key(req.Key()), inj.c.CurrentNode()
	inj.mu.Lock()
	inj.seen[key]++
	var f *fault
	for i := range inj.active {
		a := &inj.active[i]
		if slices.Contains(a.keys, key) && (a.nodes == nil || slices.Contains(a.nodes, node)) {
			f = a
			break
		}
	}
	var listing []kmsg.ListTransactionsResponseTransactionState
	if inj.listing != nil {
		listing = inj.listing[node]
	}
	realList := inj.listing != nil
	inj.mu.Unlock()

	if f != nil {
		switch {
		case f.drop:
			return nil, errFaultDrop, true
		case f.empty:
			resp := req.ResponseKind()
			resp.SetVersion(req.GetVersion())
			return resp, nil, true
		case f.sleep > 0:
			d := f.sleep
			inj.c.SleepControl(func() {
				t := time.NewTimer(d)
				defer t.Stop()
				select {
				case <-t.C:
				case <-inj.done:
				}
			})
		case f.code != nil && key == kmsg.ListTransactions && realList:
			resp := req.ResponseKind().(*kmsg.ListTransactionsResponse)
			resp.SetVersion(req.GetVersion())
			resp.ErrorCode = f.code.Code
			return resp, nil, true
		}
	}
	if key == kmsg.ListTransactions && realList {
		r := req.(*kmsg.ListTransactionsRequest)
		resp := req.ResponseKind().(*kmsg.ListTransactionsResponse)
		resp.SetVersion(req.GetVersion())
		for _, st := range listing {
			if len(r.ProducerIDFilters) > 0 && !slices.Contains(r.ProducerIDFilters, st.ProducerID) {
				continue
			}
			if len(r.StateFilters) > 0 && !slices.Contains(r.StateFilters, st.TransactionState) {
				continue
			}
			resp.TransactionStates = append(resp.TransactionStates, st)
		}
		return resp, nil, true
	}
	return nil, nil, false // the error codes are kfake's own Fault, checked next
}

// set replaces the active faults.
func (inj *injector) set(fs ...fault) {
	inj.clear()
	inj.mu.Lock()
	defer inj.mu.Unlock()
	inj.active = fs
	for _, f := range fs {
		if f.code == nil || f.drop || f.empty || f.sleep > 0 {
			continue
		}
		// kfake puts the code where the broker would: on each topic,
		// partition, id or group of the request, or on the request as a
		// whole when it names none.
		inj.handles = append(inj.handles, inj.c.Fault(kfake.Fault{Keys: f.keys, Nodes: f.nodes, Err: f.code, Count: -1}))
	}
}

func (inj *injector) clear() {
	inj.mu.Lock()
	defer inj.mu.Unlock()
	for _, h := range inj.handles {
		h.Remove()
	}
	inj.handles, inj.active = nil, nil
}

// count returns how many requests of key kfake has received so far.
func (inj *injector) count(key kmsg.Key) int {
	inj.mu.Lock()
	defer inj.mu.Unlock()
	return inj.seen[key]
}

// static is a cluster that holds still: two transactions held open (their
// producers stopped), one committed, one aborted, idle ids, and a consumer
// group stuck at a pinned LSO; truth is what a fault-free refresh reads.
// prev is a previous snapshot in which the committed and aborted ids were
// still open, so that a refresh given it reads their outcomes from the log
// (Fetch) and polls their partitions; warm is what a fault-free refresh
// given prev reads.
type static struct {
	c           *kfake.Cluster
	boot        []string
	inj         *injector
	truth, warm *model.Snapshot
	prev        *model.Snapshot
}

func newStatic(t *testing.T) *static {
	t.Helper()
	c, boot := kafkatest.NewCluster(t)
	kafkatest.OpenTxn(t, boot, openA, "orders", 10*time.Minute)
	b := kafkatest.Producer(t, boot, openB, 10*time.Minute)
	kafkatest.Begin(t, b)
	kafkatest.Produce(t, b, "payments", 0, 2)
	kafkatest.Produce(t, b, "payments", 1, 4)
	for i, id := range []string{doneID, abortID} {
		p := kafkatest.Producer(t, boot, id, 10*time.Minute)
		kafkatest.Begin(t, p)
		kafkatest.Produce(t, p, "orders", int32(i+1), 2)
		kafkatest.End(t, p, id == doneID)
	}
	kafkatest.InitIDs(t, boot, time.Minute, idleIDs...)
	adm := admClient(t, boot)
	commitGroup(t, adm, stuckGroup, "orders", 0, 0)
	// A second stuck group on the same coordinator, so that OffsetFetch
	// batches the two: a one-group answer without offsets is that group
	// having none (kgo maps it from the single-group form).
	for i := 0; ; i++ {
		g := fmt.Sprintf("other-readers-%d", i)
		if c.CoordinatorFor(g) == c.CoordinatorFor(stuckGroup) {
			commitGroup(t, adm, g, "payments", 1, 0)
			break
		}
	}

	s := &static{c: c, boot: boot}
	a := newAdmin(t, boot) // a generous timeout: the truth must be read whole
	s.truth = refresh(t, a, nil)
	s.inj = newInjector(t, c)
	s.inj.realListing(s.truth)
	if again := refresh(t, a, nil); !sameAsTruth(again, s.truth) {
		t.Fatalf("the realistic listing changed what a refresh reads:\n%+v\nvs\n%+v", again.Txns, s.truth.Txns)
	}
	s.prev = s.pretendOpen(t)
	s.warm = refresh(t, a, s.prev)

	// The fixture itself: what every invariant below leans on.
	for _, snap := range []*model.Snapshot{s.truth, s.warm} {
		if !whole(snap) {
			t.Fatalf("the truth was not read whole (a loaded machine?): %s", describeMiss(snap, nil, snap))
		}
	}
	for _, id := range []string{openA, openB} {
		if tx := txnOf(t, s.truth, id); tx.State != model.Ongoing || !tx.Described {
			t.Fatalf("%s: %+v", id, tx)
		}
	}
	if !partOf(t, s.truth, "orders", 0).Pinned() || !partOf(t, s.truth, "payments", 1).Pinned() {
		t.Fatalf("the open transactions pin nothing: %+v", s.truth.Partitions)
	}
	if len(s.truth.GroupCommits) != 2 || s.truth.GroupsErr != "" || s.truth.BrokerMaxTimeoutMs == 0 {
		t.Fatalf("groups %+v (%q), max timeout %d", s.truth.GroupCommits, s.truth.GroupsErr, s.truth.BrokerMaxTimeoutMs)
	}
	if o := txnOf(t, s.warm, doneID).Outcome(); o != model.CompleteCommit {
		t.Fatalf("%s outcome %q from the log, want CompleteCommit", doneID, o)
	}
	if o := txnOf(t, s.warm, abortID).Outcome(); o != model.CompleteAbort {
		t.Fatalf("%s outcome %q from the log, want CompleteAbort", abortID, o)
	}
	for _, coord := range []int32{0, 1, 2} {
		if s.coordinates(coord) == 0 {
			t.Logf("broker %d coordinates none of the ids", coord)
		}
	}
	return s
}

// pretendOpen is the truth as if the committed and aborted ids were still
// open at their first offsets, their partitions pinned.
func (s *static) pretendOpen(t *testing.T) *model.Snapshot {
	prev := *s.truth
	prev.TakenAt = s.truth.TakenAt.Add(-2 * time.Second)
	prev.Txns = slices.Clone(s.truth.Txns)
	prev.Partitions = slices.Clone(s.truth.Partitions)
	for i, id := range []string{doneID, abortID} {
		at := model.TopicPartition{Topic: "orders", Partition: int32(i + 1)}
		for j := range prev.Txns {
			tx := &prev.Txns[j]
			if tx.ID != id {
				continue
			}
			tx.State, tx.StartUnixMs, tx.Partitions = model.Ongoing, prev.TakenAt.Add(-time.Second).UnixMilli(), []model.TopicPartition{at}
			prev.Partitions = append(prev.Partitions, model.Partition{TopicPartition: at, Leader: s.c.LeaderFor(at.Topic, at.Partition),
				HighWatermark: 2, LastStableOffset: 0, Producers: []model.Producer{{ProducerID: tx.ProducerID,
					ProducerEpoch: tx.ProducerEpoch, LastSequence: 1, CoordinatorEpoch: 0, CurrentTxnStartOffset: 0}}})
		}
	}
	prev.Sort()
	return &prev
}

// coordinates counts the ids broker b coordinates.
func (s *static) coordinates(b int32) int {
	n := 0
	for _, tx := range s.truth.Txns {
		if s.c.CoordinatorFor(tx.ID) == b {
			n++
		}
	}
	return n
}

func faultAdmin(t testing.TB, boot []string) *kafkaadmin.Client {
	t.Helper()
	return faultAdminWith(t, boot, faultTimeout)
}

func faultAdminWith(t testing.TB, boot []string, timeout time.Duration) *kafkaadmin.Client {
	t.Helper()
	a, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: boot, Timeout: timeout})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(a.Close)
	return a
}

// whole reports whether a snapshot has no error and no unknown anywhere.
func whole(s *model.Snapshot) bool {
	if s.GroupsErr != "" || s.Unread > 0 || s.Hidden != "" || s.BrokerMaxTimeoutMs == 0 {
		return false
	}
	for _, tx := range s.Txns {
		if tx.Err != "" || !tx.Described {
			return false
		}
	}
	for _, p := range s.Partitions {
		if p.Err != "" || p.HighWatermark < 0 || p.LastStableOffset < 0 || p.Leader < 0 {
			return false
		}
	}
	return true
}

// sameAsTruth compares what a fault-free refresh must reproduce exactly.
func sameAsTruth(got, truth *model.Snapshot) bool {
	return len(violations(got, truth, nil)) == 0 && len(got.Txns) == len(truth.Txns) &&
		len(got.Partitions) == len(truth.Partitions) && got.GroupsErr == "" && got.Unread == 0 &&
		slices.EqualFunc(got.Txns, truth.Txns, func(a, b model.Txn) bool { return a.Err == "" && a.Described == b.Described })
}

// refreshCtx runs one Refresh with an overall bound far above the client's
// per-request timeout.
func refreshCtx(a *kafkaadmin.Client, prev *model.Snapshot) (*model.Snapshot, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return a.Refresh(ctx, prev)
}
