package kafkaadmin

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/model"
)

// describeChunk bounds one DescribeTransactions request; a first refresh of a
// big cluster is split into several, a few at a time.
const (
	describeChunk    = 5000
	describeParallel = 4
)

// listed is one id as ListTransactions reports it.
type listed struct {
	state model.State
	pid   int64
	coord int32
	// n is its place in the listing (0, 1, ...): a refresh marks the ids it
	// has matched in a slice, not by writing the map again.
	n int32
}

// hedgeAfter is how long a metadata request waits on the broker kgo picked
// before every other one is asked too: one silent node of three must not hold
// (nor fail) a whole refresh (TestCluster3PausedBroker).
const hedgeAfter = 500 * time.Millisecond

// brokerIDs asks for the cluster's brokers (and no topics).
func (c *Client) brokerIDs(ctx context.Context) ([]int32, error) {
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = []kmsg.MetadataRequestTopic{} // empty, not nil: nil means every topic
	resp, err := c.hedgedMetadata(ctx, req)
	if err != nil {
		return nil, err
	}
	return brokersOf(resp)
}

// hedgedMetadata sends req to one broker, and to every known one once that
// one is slow; the first answer counts.
func (c *Client) hedgedMetadata(ctx context.Context, req *kmsg.MetadataRequest) (*kmsg.MetadataResponse, error) {
	ctx, cancel := c.deadline(ctx)
	defer cancel()
	type answer struct {
		resp kmsg.Response
		err  error
	}
	answers := make(chan answer, 1+len(c.kgo.DiscoveredBrokers()))
	ask := func(r requester) {
		own := *req // kgo writes the version into the request it sends
		resp, err := r.Request(ctx, &own)
		answers <- answer{resp, err}
	}
	go ask(c.kgo)
	asked, hedged := 1, false
	hedgeNow := func() {
		hedged = true
		for _, b := range c.kgo.DiscoveredBrokers() {
			if asked == cap(answers) {
				break
			}
			go ask(b)
			asked++
		}
	}
	hedge := time.NewTimer(hedgeAfter)
	defer hedge.Stop()
	var firstErr error
	for {
		select {
		case a := <-answers:
			asked--
			if a.err == nil {
				return a.resp.(*kmsg.MetadataResponse), nil
			}
			firstErr = cmp.Or(firstErr, a.err)
			if !hedged {
				hedgeNow()
			}
			if asked == 0 {
				return nil, firstErr
			}
		case <-hedge.C:
			if !hedged {
				hedgeNow()
			}
		}
	}
}

func brokersOf(m *kmsg.MetadataResponse) ([]int32, error) {
	ids := make([]int32, 0, len(m.Brokers))
	for _, b := range m.Brokers {
		ids = append(ids, b.NodeID)
	}
	if len(ids) == 0 {
		return nil, errors.New("the cluster reported no brokers")
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, nil
}

// listTxnsOn asks every broker for the transactions it coordinates, optionally
// only those of some producer ids, by id (the first broker's answer for an id
// kfake lists on every broker). failed maps the brokers that did not answer
// to why; err is set only when none answered. known are the cluster's brokers
// (nil: read them first). An answer lists only what its coordinator has
// loaded: to conclude from an absence, use listOwners.
func (c *Client) listTxnsOn(ctx context.Context, pids []int64, known []int32) (out map[string]listed, failed map[int32]error, err error) {
	if known == nil {
		if known, err = c.brokerIDs(ctx); err != nil {
			return nil, nil, fmt.Errorf("ListTransactions: cannot tell which brokers to ask: %w", err)
		}
	}
	list, failed, err := c.listAll(ctx, pids, known)
	if err != nil {
		return nil, failed, err
	}
	out = make(map[string]listed, list.len())
	for k, id := range list.ids {
		if _, dup := out[id]; !dup {
			out[strings.Clone(id)] = list.ls[k] // a view would hold the whole answer
		}
	}
	return out, failed, nil
}

// notAsked files the brokers of known that no shard went to: kgo asks the
// brokers its own metadata knows, and one it does not know yet (or any
// more) listed nothing, as surely as if it had failed.
func notAsked(shards []kgo.ResponseShard, known []int32, failed map[int32]error) {
	asked := make(map[int32]bool, len(shards))
	for _, sh := range shards {
		asked[sh.Meta.NodeID] = true
	}
	for _, b := range known {
		if !asked[b] {
			failed[b] = fmt.Errorf("broker %d was not asked: the client's metadata did not list it", b)
		}
	}
}

// described is one id as DescribeTransactions reports it.
type described struct {
	txn  model.Txn // Described is set when the coordinator answered without error
	err  string
	gone bool // TRANSACTIONAL_ID_NOT_FOUND: expired since it was listed
	// denied is the broker's refusal when the principal may not DESCRIBE
	// the id (err then starts with model.NoPermission).
	denied string
	// start is the coordinator's start timestamp whatever the state (zero
	// when it reports none): txn.StartUnixMs keeps it only while a transaction is
	// open, but a re-check after an abort needs it to recognise the
	// transaction it aborted.
	start time.Time
}

// needDescribe is the ACL DescribeTransactions (and the coordinator lookup
// before it) checks.
const needDescribe = "DescribeTransactions needs DESCRIBE on the transactional id"

// describeFailed turns a failed describe into its row.
func describeFailed(err error) described {
	if authErr(err) {
		why := errText(err)
		return described{err: model.NoPermission + " to describe it: " + why + " (" + needDescribe + ")", denied: why}
	}
	return described{err: "describe: " + errText(err)}
}

// txnRef is an id to describe and the broker that listed it: its
// coordinator then (-1 when unknown).
type txnRef struct {
	id    string
	coord int32
}

// describeTxns is describeEach for a few ids: every one gets an entry.
func (c *Client) describeTxns(ctx context.Context, refs []txnRef) map[string]described {
	out := make(map[string]described, len(refs))
	var mu sync.Mutex
	c.describeEach(ctx, refs, func(i int, d described) {
		mu.Lock()
		defer mu.Unlock()
		out[refs[i].id] = d
	})
	return out
}

// describeEach describes every refs[i] and calls put(i, d) once for each,
// from several goroutines at once. Each id is asked of the broker that listed
// it; the others (kfake lists every id on every broker, so the listing does
// not tell) and the ids that broker no longer coordinates are asked of the
// coordinators one FindCoordinator names; only what is left after that goes
// through kgo. Going straight to the lister spares a FindCoordinator per id:
// at 500,000 ids kgo's lookups took seconds and its cache of them held 60 MB.
// That cache is never emptied either: one entry per id ever described, so a
// TUI watching Flink name a new id every checkpoint grew by it for as long as
// it ran (the demo's, by 0.1 MB a minute).
func (c *Client) describeEach(ctx context.Context, refs []txnRef, put func(int, described)) {
	byCoord := map[int32][]int{}
	var unplaced []int
	for i, r := range refs {
		if r.coord >= 0 {
			byCoord[r.coord] = append(byCoord[r.coord], i)
		} else {
			unplaced = append(unplaced, i)
		}
	}
	sem := make(chan struct{}, describeParallel)
	unplaced = append(unplaced, c.describeOn(ctx, refs, byCoord, put, sem)...)
	found, again := c.coordinatorsOf(ctx, refs, unplaced)
	again = append(again, c.describeOn(ctx, refs, found, put, sem)...)
	var wg sync.WaitGroup
	slices.Sort(again)
	for start := 0; start < len(again); start += describeChunk {
		chunk := again[start:min(start+describeChunk, len(again))]
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			ids := make([]string, len(chunk))
			for n, i := range chunk {
				ids[n] = refs[i].id
			}
			got := c.describeChunk(ctx, ids)
			for _, i := range chunk {
				put(i, got[refs[i].id])
			}
		})
	}
	wg.Wait()
}

// describeOn describes refs[i] for each i of byCoord[b] on broker b, a few
// chunks at a time, and returns the ones to ask elsewhere (describeAt).
func (c *Client) describeOn(ctx context.Context, refs []txnRef, byCoord map[int32][]int, put func(int, described), sem chan struct{}) (again []int) {
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for coord, idx := range byCoord {
		for start := 0; start < len(idx); start += describeChunk {
			chunk := idx[start:min(start+describeChunk, len(idx))]
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				moved := c.describeAt(ctx, coord, refs, chunk, put)
				mu.Lock()
				again = append(again, moved...)
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	return again
}

// coordinatorsOf groups refs[i], for each i of idx, by the broker that
// coordinates it, from one FindCoordinator of their ids (kgo splits it for a
// broker older than 2.8, and caches nothing of it); lost are the ones whose
// lookup failed.
func (c *Client) coordinatorsOf(ctx context.Context, refs []txnRef, idx []int) (byCoord map[int32][]int, lost []int) {
	if len(idx) == 0 {
		return nil, nil
	}
	ctx, cancel := c.deadline(ctx)
	defer cancel()
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorType = 1 // transaction
	req.CoordinatorKeys = make([]string, len(idx))
	for n, i := range idx {
		req.CoordinatorKeys[n] = refs[i].id
	}
	found := make(map[string]int32, len(idx))
	if resp, err := req.RequestWith(ctx, c.kgo); err == nil {
		for _, co := range resp.Coordinators {
			if co.ErrorCode == 0 && co.NodeID >= 0 {
				found[co.Key] = co.NodeID
			}
		}
	}
	byCoord = map[int32][]int{}
	for _, i := range idx {
		if b, ok := found[refs[i].id]; ok {
			byCoord[b] = append(byCoord[b], i)
		} else {
			lost = append(lost, i)
		}
	}
	return byCoord, lost
}

// describeAt describes refs[i] for each i of idx on broker coord, puts each
// answer, and returns the ones to ask elsewhere: the broker is not (or no
// longer, or not yet) their coordinator, or it did not answer.
func (c *Client) describeAt(ctx context.Context, coord int32, refs []txnRef, idx []int, put func(int, described)) (again []int) {
	if err := silentErr(ctx, coord); err != nil {
		for _, i := range idx {
			put(i, describeFailed(err))
		}
		return nil
	}
	parent := ctx
	ctx, cancel := c.deadline(ctx)
	defer cancel()
	req := kmsg.NewPtrDescribeTransactionsRequest()
	req.TransactionalIDs = make([]string, len(idx))
	where := make(map[string]int, len(idx))
	for n, i := range idx {
		req.TransactionalIDs[n] = refs[i].id
		where[refs[i].id] = i
	}
	resp, err := req.RequestWith(ctx, c.kgo.Broker(int(coord)))
	noteSilent(parent, ctx, coord, err)
	if err != nil {
		if ctx.Err() != nil {
			for _, i := range idx {
				put(i, describeFailed(err))
			}
			return nil
		}
		return idx
	}
	for _, st := range resp.TransactionStates {
		i, ok := where[st.TransactionalID]
		if !ok {
			continue // not asked, or answered twice
		}
		delete(where, st.TransactionalID)
		switch kerr.ErrorForCode(st.ErrorCode) {
		case kerr.NotCoordinator, kerr.CoordinatorLoadInProgress, kerr.CoordinatorNotAvailable:
			again = append(again, i)
		default:
			put(i, fromDescribe(st, coord))
		}
	}
	for _, i := range where {
		again = append(again, i)
	}
	return again
}

func (c *Client) describeChunk(ctx context.Context, ids []string) map[string]described {
	rctx, cancel := c.deadline(ctx)
	defer cancel()
	req := kmsg.NewPtrDescribeTransactionsRequest()
	req.TransactionalIDs = ids
	out := make(map[string]described, len(ids))
	shards := c.kgo.RequestSharded(rctx, req)
	noteSilentShards(ctx, rctx, shards)
	for _, sh := range shards {
		if sh.Err != nil {
			d := describeFailed(sh.Err)
			for _, id := range sh.Req.(*kmsg.DescribeTransactionsRequest).TransactionalIDs {
				out[id] = d
			}
			continue
		}
		for _, st := range sh.Resp.(*kmsg.DescribeTransactionsResponse).TransactionStates {
			out[st.TransactionalID] = fromDescribe(st, sh.Meta.NodeID)
		}
	}
	for _, id := range ids {
		if _, ok := out[id]; !ok {
			out[id] = described{err: "describe: no answer for this id"}
		}
	}
	return out
}

func fromDescribe(st kmsg.DescribeTransactionsResponseTransactionState, coord int32) described {
	if e := kerr.ErrorForCode(st.ErrorCode); e != nil {
		if errors.Is(e, kerr.TransactionalIDNotFound) {
			return described{gone: true}
		}
		return describeFailed(e)
	}
	t := model.Txn{
		ID:            st.TransactionalID,
		State:         model.StateOf(st.State),
		ProducerID:    st.ProducerID,
		ProducerEpoch: st.ProducerEpoch,
		Coordinator:   coord,
		TimeoutMs:     st.TimeoutMillis,
		Described:     true,
	}
	if st.StartTimestamp >= 0 && t.State.Open() {
		t.StartUnixMs = st.StartTimestamp
	}
	for _, tp := range st.Topics {
		for _, p := range tp.Partitions {
			t.Partitions = append(t.Partitions, model.TopicPartition{Topic: tp.Topic, Partition: p})
		}
	}
	model.SortPartitions(t.Partitions)
	d := described{txn: t}
	if st.StartTimestamp >= 0 {
		d.start = time.UnixMilli(st.StartTimestamp)
	}
	return d
}

// needsDescribe is the economy rule: an idle id whose state and producer id did
// not change keeps what was described before (100k idle ids must not cost a
// DescribeTransactions each per tick). An id still pending from a progressive
// load waits for its batch unless it changed, or all is set (Refresh).
func needsDescribe(l listed, prev *model.Txn, all bool) bool {
	if l.state.Open() || prev == nil {
		return true
	}
	unchanged := prev.State == l.state && prev.ProducerID == l.pid
	if prev.Pending && !all {
		return !unchanged
	}
	return !prev.Described || !unchanged
}

// merge builds the id's row from this refresh's listing, its description if
// one was made, and the previous row otherwise.
func merge(id string, l listed, d *described, prev *model.Txn) model.Txn {
	if d != nil && d.txn.Described {
		return d.txn
	}
	t := model.Txn{ID: id, State: l.state, ProducerID: l.pid, Coordinator: l.coord}
	if prev != nil && prev.ProducerID == l.pid {
		t.ProducerEpoch = prev.ProducerEpoch
		t.Coordinator = prev.Coordinator
		t.TimeoutMs = prev.TimeoutMs
		t.StartUnixMs = prev.StartUnixMs
		t.Partitions = prev.Partitions
		t.Described = prev.Described
		t.Pending = prev.Pending
		if prev.State == l.state {
			t.SetOutcome(prev.Outcome())
		}
	}
	if d != nil {
		// The describe failed: keep the old fields for display, but ask again
		// next time.
		t.Err = d.err
		t.Described = false
	}
	return t
}

func errText(err error) string {
	var silent errSilent
	if errors.As(err, &silent) {
		return silent.Error()
	}
	var cut errCut
	if errors.As(err, &cut) {
		return cut.Error()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "no answer within the timeout"
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		text := ke.Message + ": " + ke.Description
		// kgo appends the broker's own message (e.g. why a login failed) after
		// the code; that is the part an operator needs.
		full := err.Error()
		if i := strings.Index(full, ke.Error()+": "); i >= 0 {
			if why := strings.TrimSpace(full[i+len(ke.Error())+2:]); why != "" {
				text += " " + why
			}
		}
		return text
	}
	return err.Error()
}
