package integration

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// The TestCluster3 tests run on the three-node cluster of `scripts/kafka-up --brokers 3`
// ($TXNSCOPE_KAFKA3_STATE): every topic, __transaction_state included, has three replicas and
// min.insync.replicas 2, so one node at a time may stop, restart or hang while transactions go
// on. They stop and start its nodes, so they never run in parallel with one another (no
// t.Parallel: the single brokers' parallel tests wait until they are done).

// c3 is one test's view of the three-node cluster.
type c3 struct {
	t         *testing.T
	env       Cluster3Env
	bootstrap []string
	adm       *kadm.Client
	start     time.Time

	mu    sync.Mutex
	marks []c3Mark // what the test did to the cluster, when
	keep  bool     // keep the test's topics for a post-mortem
}

type c3Mark struct {
	at   time.Time
	what string
}

// newC3 takes the three-node cluster for the test: whole (every node up, every replica in sync)
// at the start, and made whole again at the end whatever happened.
func newC3(ctx context.Context, t *testing.T) *c3 {
	t.Helper()
	env := ReadCluster3(t)
	t.Cleanup(func() { Cluster3Heal(t) })
	cl, err := kgo.NewClient(kgo.SeedBrokers(env.Bootstrap...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	c := &c3{t: t, env: env, bootstrap: env.Bootstrap, adm: kadm.NewClient(cl), start: time.Now()}
	c.whole(ctx, "at the start")
	return c
}

func (c *c3) mark(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.marks = append(c.marks, c3Mark{time.Now(), fmt.Sprintf(format, args...)})
}

// since is a time as seconds into the test, for the logs.
func (c *c3) since(at time.Time) string {
	return fmt.Sprintf("%6.2fs", at.Sub(c.start).Seconds())
}

func (c *c3) logMarks() {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for _, m := range c.marks {
		fmt.Fprintf(&b, "  %s  %s\n", c.since(m.at), m.what)
	}
	c.t.Logf("what the test did to the cluster:\n%s", b.String())
}

// broker runs scripts/kafka-broker ID ACTION and marks it.
func (c *c3) broker(ctx context.Context, id int32, action string) {
	c.t.Helper()
	c.mark("kafka-broker %d %s", id, action)
	took := Cluster3Broker(ctx, c.t, id, action)
	c.mark("kafka-broker %d %s done (%s)", id, action, took.Round(100*time.Millisecond))
}

// whole waits until the metadata lists the three brokers and every partition of
// __transaction_state and of topics has a leader and all three replicas in sync.
func (c *c3) whole(ctx context.Context, when string, topics ...string) time.Duration {
	c.t.Helper()
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	var why string
	for {
		why = c.notWhole(ctx, topics)
		if why == "" {
			return time.Since(start)
		}
		select {
		case <-ctx.Done():
			c.t.Fatalf("the cluster is not whole %s after %s: %s", when, time.Since(start).Round(time.Second), why)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func (c *c3) notWhole(ctx context.Context, topics []string) string {
	mctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	md, err := c.adm.Metadata(mctx, append([]string{"__transaction_state"}, topics...)...)
	if err != nil {
		return err.Error()
	}
	if ids := md.Brokers.NodeIDs(); len(ids) != 3 {
		return fmt.Sprintf("brokers %v", ids)
	}
	for _, td := range md.Topics {
		if td.Err != nil {
			if td.Topic == "__transaction_state" && errors.Is(td.Err, kerr.UnknownTopicOrPartition) {
				continue // no transaction yet on this cluster
			}
			return fmt.Sprintf("%s: %v", td.Topic, td.Err)
		}
		for _, p := range td.Partitions.Sorted() {
			if p.Err != nil || p.Leader < 0 || len(p.ISR) != 3 {
				return fmt.Sprintf("%s-%d: leader %d, isr %v, err %v", p.Topic, p.Partition, p.Leader, p.ISR, p.Err)
			}
		}
	}
	return ""
}

// topic creates a topic of n partitions, three replicas each, deleted when the test ends.
func (c *c3) topic(ctx context.Context, n int32) string {
	c.t.Helper()
	topic := name(c.t, "topic")
	resp, err := c.adm.CreateTopic(ctx, n, 3, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		c.t.Fatalf("CreateTopic(%s): %v", topic, err)
	}
	c.t.Cleanup(func() {
		if c.keep {
			c.t.Logf("topic %s kept for a post-mortem", topic)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		_, _ = c.adm.DeleteTopic(ctx, topic)
	})
	c.whole(ctx, "after creating "+topic, topic)
	return topic
}

// leaders are the partitions' leaders of topic.
func (c *c3) leaders(ctx context.Context, topic string) map[int32]int32 {
	c.t.Helper()
	md, err := c.adm.Metadata(ctx, topic)
	if err != nil {
		c.t.Fatal(err)
	}
	out := map[int32]int32{}
	for _, p := range md.Topics[topic].Partitions {
		out[p.Partition] = p.Leader
	}
	return out
}

// coordinator is the broker that coordinates id now (FindCoordinator).
func (c *c3) coordinator(ctx context.Context, id string) (int32, error) {
	rs := c.adm.FindTxnCoordinators(ctx, id)
	r, ok := rs[id]
	switch {
	case !ok:
		return -1, fmt.Errorf("no answer for %s", id)
	case r.Err != nil:
		return -1, r.Err
	}
	return r.NodeID, nil
}

// scopeClient is a kafkaadmin client on all three nodes, as txnscope -b a,b,c makes it.
func (c *c3) scopeClient(follow bool, timeout time.Duration) *kafkaadmin.Client {
	c.t.Helper()
	cl, _ := c.tracedClient(follow, timeout)
	return cl
}

// tracedClient is scopeClient, and the record of every request it writes: a poll that took too
// long names what it sent the hung node, and when.
func (c *c3) tracedClient(follow bool, timeout time.Duration) (*kafkaadmin.Client, *sentLog) {
	c.t.Helper()
	sent := &sentLog{}
	cl, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: c.bootstrap, Timeout: timeout, FollowLog: follow, Hooks: []kgo.Hook{sent}})
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(cl.Close)
	return cl, sent
}

// sentLog records each request a client writes: when, to which node, which API.
type sentLog struct {
	mu   sync.Mutex
	sent []sentReq
}

type sentReq struct {
	at   time.Time
	node int32
	key  int16
}

func (l *sentLog) OnBrokerWrite(meta kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, _ error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sent = append(l.sent, sentReq{time.Now(), meta.NodeID, key})
}

// to lists what was written to node within [from, to], each as its offset from from.
func (l *sentLog) to(node int32, from, to time.Time) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, r := range l.sent {
		if r.node == node && !r.at.Before(from) && !r.at.After(to) {
			out = append(out, fmt.Sprintf("+%.2fs %s", r.at.Sub(from).Seconds(), kmsg.NameForKey(r.key)))
		}
	}
	return strings.Join(out, ", ")
}

// ---- transactional producers that keep going through the outages ------------------------------

// c3Producer commits a transaction of one record every interval on its partition, through
// whatever the cluster does, and counts how each of its transactions ended as far as it knows:
// the truth txnscope's history is checked against.
type c3Producer struct {
	id   string
	tp   model.TopicPartition
	opts []kgo.Opt
	boot []string

	mu        sync.Mutex
	commits   int // EndTransaction(commit) answered OK
	aborts    int // EndTransaction(abort) answered OK (after a produce failed)
	uncertain int // EndTransaction failed: the outcome is unknown to the producer
	reinits   int // the client was made anew (InitProducerId: aborts whatever was open)
	errs      []string
}

func (p *c3Producer) note(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.errs) < 12 {
		p.errs = append(p.errs, time.Now().Format("15:04:05.000 ")+fmt.Sprintf(format, args...))
	}
}

func (p *c3Producer) client() (*kgo.Client, error) {
	return kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(p.boot...),
		kgo.TransactionalID(p.id),
		kgo.TransactionTimeout(time.Minute),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
	}, p.opts...)...)
}

// run commits until stop is closed, then returns after the transaction under way has ended.
func (p *c3Producer) run(ctx context.Context, stop <-chan struct{}, every time.Duration) {
	cl, err := p.client()
	if err != nil {
		p.note("client: %v", err)
		return
	}
	defer func() { cl.Close() }()
	reinit := func(why string, err error) {
		p.note("%s: %v (client made anew)", why, err)
		cl.Close()
		p.mu.Lock()
		p.reinits++
		p.mu.Unlock()
		for {
			if cl, err = p.client(); err == nil {
				return
			}
			time.Sleep(time.Second)
		}
	}
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		default:
		}
		if err := cl.BeginTransaction(); err != nil {
			reinit("begin", err)
			continue
		}
		pctx, cancel := context.WithTimeout(ctx, 45*time.Second)
		err := cl.ProduceSync(pctx, &kgo.Record{Topic: p.tp.Topic, Partition: p.tp.Partition, Value: fmt.Appendf(nil, "%s-%d", p.id, i)}).FirstErr()
		cancel()
		commit := err == nil
		if err != nil {
			p.note("produce: %v", err)
		}
		ectx, cancel := context.WithTimeout(ctx, 45*time.Second)
		err = cl.EndTransaction(ectx, kgo.TransactionEndTry(commit))
		cancel()
		p.mu.Lock()
		switch {
		case err == nil && commit:
			p.commits++
		case err == nil:
			p.aborts++
		default:
			p.uncertain++
		}
		p.mu.Unlock()
		if err != nil {
			reinit(fmt.Sprintf("end (commit=%v)", commit), err)
			continue
		}
		select {
		case <-time.After(every):
		case <-stop:
			return
		}
	}
}

func (p *c3Producer) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return fmt.Sprintf("%s: %d commits, %d aborts, %d unknown, %d new clients; errors: %s", p.id, p.commits, p.aborts,
		p.uncertain, p.reinits, strings.Join(p.errs, " | "))
}

// ---- txnscope polling as the TUI does ---------------------------------------------------------

// c3Poller polls with kafkaadmin as the TUI does (Poll, the previous snapshot, EventsBetween into a
// History, a PinTracker) and keeps a record of every poll.
type c3Poller struct {
	name  string
	c     *kafkaadmin.Client
	hist  *model.History
	track *model.PinTracker
	// ids are the test's transactional ids: their events are kept.
	ids map[string]bool

	mu     sync.Mutex
	prev   *model.Snapshot
	polls  []c3Poll
	events []model.Event // of ids
}

type c3Poll struct {
	at, end time.Time
	err     error
	snap    *model.Snapshot
	// hanging: partitions judged hanging, by the snapshot's own max transaction timeout
	// (what the TUI shows) or by a 5 s one (find-hanging --max-transaction-timeout 5s).
	hanging []string
}

func newC3Poller(name string, c *kafkaadmin.Client, ids ...string) *c3Poller {
	p := &c3Poller{name: name, c: c, hist: model.NewHistory(100000), track: model.NewPinTracker(), ids: map[string]bool{}}
	for _, id := range ids {
		p.ids[id] = true
	}
	return p
}

// hangingStrict is the max transaction timeout the tests judge hanging transactions by,
// besides the brokers' own (15 minutes, which no test outlasts): like find-hanging
// --max-transaction-timeout 5s, it calls a producer hanging once it is quiet for 5 s while no
// coordinator owns its open transaction. On a cluster whose coordinators keep every
// transaction, each such call is false.
const hangingStrict = 5 * time.Second

// poll is one Poll, recorded.
func (p *c3Poller) poll(ctx context.Context, timeout time.Duration) c3Poll {
	p.mu.Lock()
	prev := p.prev
	p.mu.Unlock()
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r := c3Poll{at: time.Now()}
	snap, err := p.c.Poll(rctx, prev)
	r.end = time.Now()
	if err != nil {
		r.err = err
	} else {
		r.snap = snap
		evs := model.EventsBetween(prev, snap)
		p.mu.Lock()
		if prev == nil {
			p.hist.Baseline(snap)
		}
		p.hist.Add(evs)
		for _, e := range evs {
			if p.ids[e.ID] {
				p.events = append(p.events, e)
			}
		}
		p.prev = snap
		p.mu.Unlock()
		p.track.Observe(snap)
		strict := *snap
		strict.BrokerMaxTimeoutMs = hangingStrict.Milliseconds()
		for _, judged := range []*model.Snapshot{snap, &strict} {
			for _, pin := range model.Pins(judged, p.track, snap.TakenAt) {
				if pin.Hanging {
					r.hanging = append(r.hanging, fmt.Sprintf("%s-%d (max timeout %s): %s", pin.Topic, pin.TopicPartition.Partition,
						judged.MaxTimeout(), strings.Join(pin.Why, "; ")))
				}
			}
		}
	}
	p.mu.Lock()
	p.polls = append(p.polls, r)
	p.mu.Unlock()
	return r
}

// loop polls every interval (from the start of one poll to the next) until stop is closed.
func (p *c3Poller) loop(ctx context.Context, stop <-chan struct{}, every, timeout time.Duration) {
	for {
		start := time.Now()
		p.poll(ctx, timeout)
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-time.After(time.Until(start.Add(every))):
		}
	}
}

func (p *c3Poller) all() []c3Poll {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.polls)
}

func (p *c3Poller) eventsOf(id string) []model.Event {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []model.Event
	for _, e := range p.events {
		if e.ID == id {
			out = append(out, e)
		}
	}
	return out
}

// what says in one line what a poll showed: its error, or where its data came from and what it
// said was missing or wrong.
func (r c3Poll) what() string {
	if r.err != nil {
		return "error: " + firstLine(r.err.Error())
	}
	s := r.snap
	var parts []string
	if s.Source.Log {
		parts = append(parts, "log")
	} else {
		parts = append(parts, "polls")
		if s.Source.Why != "" {
			parts = append(parts, "("+firstLine(s.Source.Why)+")")
		}
	}
	parts = append(parts, fmt.Sprintf("%d brokers", s.Brokers))
	if s.Hidden != "" {
		parts = append(parts, "note: "+s.Hidden)
	}
	stale := 0
	for _, tx := range s.Txns {
		if tx.Err != "" {
			stale++
		}
	}
	if stale > 0 {
		parts = append(parts, fmt.Sprintf("%d rows with an error", stale))
	}
	unread := 0
	for _, pt := range s.Partitions {
		if pt.Err != "" {
			unread++
		}
	}
	if unread > 0 || s.Unread > 0 {
		parts = append(parts, fmt.Sprintf("%d partitions with an error, %d unread", unread, s.Unread))
	}
	if len(r.hanging) > 0 {
		parts = append(parts, fmt.Sprintf("HANGING %v", r.hanging))
	}
	return firstLine(strings.Join(parts, " "))
}

// manyDigits are the numbers a run of polls may vary in (ports, counts of rows); the count of
// brokers stays.
var manyDigits = regexp.MustCompile(`[0-9]{2,}`)

// logPolls logs the polls in runs of the same answer (numbers of two digits or more aside).
func (c *c3) logPolls(what string, polls []c3Poll) {
	var b strings.Builder
	for i := 0; i < len(polls); {
		j := i
		for j+1 < len(polls) && manyDigits.ReplaceAllString(polls[j+1].what(), "#") == manyDigits.ReplaceAllString(polls[i].what(), "#") {
			j++
		}
		fmt.Fprintf(&b, "  %s..%s ×%-3d %s\n", c.since(polls[i].at), c.since(polls[j].end), j-i+1, polls[i].what())
		i = j + 1
	}
	c.t.Logf("%s:\n%s", what, b.String())
}

// ---- raw probes: what the brokers answer, without txnscope -----------------------------------------

// c3Probe asks every 200 ms, with no retries: each node's ListTransactions (how many of the
// test's ids it lists), and the coordinator of one id (FindCoordinator) for its
// DescribeTransactions.
type c3Probe struct {
	mu      sync.Mutex
	samples map[string][]sample // by what was asked
}

func (c *c3) probe(ctx context.Context, stop <-chan struct{}, prefix, id string) *c3Probe {
	c.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.bootstrap...), kgo.RequestRetries(0), kgo.RetryTimeout(time.Second),
		kgo.RequestTimeoutOverhead(2*time.Second), kgo.DialTimeout(2*time.Second))
	if err != nil {
		c.t.Fatal(err)
	}
	pr := &c3Probe{samples: map[string][]sample{}}
	var nodes []int32
	for _, n := range c.env.Nodes {
		nodes = append(nodes, n.ID)
	}
	done := make(chan struct{})
	c.t.Cleanup(func() { <-done; cl.Close() })
	go func() {
		defer close(done)
		for {
			var wg sync.WaitGroup
			for _, n := range c.env.Nodes {
				wg.Go(func() { pr.add(fmt.Sprintf("ListTransactions on broker %d", n.ID), listOn(ctx, cl, n.ID, prefix)) })
			}
			wg.Go(func() { pr.add("DescribeTransactions of "+id+" at its coordinator", describeAt(ctx, cl, nodes, id)) })
			wg.Wait()
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	return pr
}

func (pr *c3Probe) add(what string, s sample) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.samples[what] = append(pr.samples[what], s)
}

func listOn(ctx context.Context, cl *kgo.Client, broker int32, prefix string) sample {
	s := sample{at: time.Now()}
	rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	resp, err := cl.Broker(int(broker)).Request(rctx, kmsg.NewPtrListTransactionsRequest())
	s.end = time.Now()
	if err != nil {
		s.what = "error: " + firstLine(err.Error())
		return s
	}
	r := resp.(*kmsg.ListTransactionsResponse)
	if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
		s.what = err.Error()
		return s
	}
	n := 0
	for _, st := range r.TransactionStates {
		if strings.HasPrefix(st.TransactionalID, prefix) {
			n++
		}
	}
	s.ok, s.what = true, fmt.Sprintf("%d of the test's ids", n)
	return s
}

func describeAt(ctx context.Context, cl *kgo.Client, nodes []int32, id string) sample {
	s := sample{at: time.Now()}
	rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	// FindCoordinator from the first node that answers it (one is down at times).
	coord := int32(-1)
	for _, n := range nodes {
		fc := kmsg.NewPtrFindCoordinatorRequest()
		fc.CoordinatorType = 1
		fc.CoordinatorKeys = []string{id}
		resp, err := cl.Broker(int(n)).Request(rctx, fc)
		s.end = time.Now()
		if err != nil {
			s.what = "FindCoordinator: " + firstLine(err.Error())
			continue
		}
		fresp := resp.(*kmsg.FindCoordinatorResponse)
		switch {
		case len(fresp.Coordinators) != 1:
			s.what = "FindCoordinator: no answer"
		case fresp.Coordinators[0].ErrorCode != 0:
			s.what = "FindCoordinator: " + kerr.ErrorForCode(fresp.Coordinators[0].ErrorCode).Error()
		default:
			coord = fresp.Coordinators[0].NodeID
		}
		break
	}
	if coord < 0 {
		return s
	}
	d := kmsg.NewPtrDescribeTransactionsRequest()
	d.TransactionalIDs = []string{id}
	resp, err := cl.Broker(int(coord)).Request(rctx, d)
	s.end = time.Now()
	if err != nil {
		s.what = fmt.Sprintf("broker %d: %s", coord, firstLine(err.Error()))
		return s
	}
	r := resp.(*kmsg.DescribeTransactionsResponse)
	if len(r.TransactionStates) != 1 {
		s.what = fmt.Sprintf("broker %d: %d states", coord, len(r.TransactionStates))
		return s
	}
	st := r.TransactionStates[0]
	if err := kerr.ErrorForCode(st.ErrorCode); err != nil {
		s.what = fmt.Sprintf("broker %d: %s", coord, err.Error())
		return s
	}
	s.ok, s.what = true, fmt.Sprintf("broker %d: %s", coord, st.State)
	return s
}

// log logs each probe's answers in runs of the same answer (numbers kept: they are the point).
func (pr *c3Probe) log(c *c3) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	keys := make([]string, 0, len(pr.samples))
	for k := range pr.samples {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ss := pr.samples[k]
		byTime(ss)
		var b strings.Builder
		for i := 0; i < len(ss); {
			j := i
			for j+1 < len(ss) && ss[j+1].what == ss[i].what {
				j++
			}
			fmt.Fprintf(&b, "  %s..%s ×%-3d %s\n", c.since(ss[i].at), c.since(ss[j].end), j-i+1, ss[i].what)
			i = j + 1
		}
		c.t.Logf("%s (raw, no retries):\n%s", k, b.String())
	}
}
