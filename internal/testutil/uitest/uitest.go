// Package uitest has deterministic snapshots and a recording fake Admin for
// tests of the ui and views packages (and anyone else who needs a cluster
// that holds still).
package uitest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/txnscope/txnscope/model"
)

// T0 is the instant the fixtures are taken at.
var T0 = time.Date(2026, 3, 14, 3, 0, 0, 0, time.UTC)

func tps(topic string, parts ...int32) []model.TopicPartition {
	out := make([]model.TopicPartition, len(parts))
	for i, p := range parts {
		out[i] = model.TopicPartition{Topic: topic, Partition: p}
	}
	return out
}

func ongoing(id string, pid int64, epoch int16, coord int32, timeout time.Duration, age time.Duration, at time.Time, parts []model.TopicPartition) model.Txn {
	return model.Txn{ID: id, State: model.Ongoing, ProducerID: pid, ProducerEpoch: epoch, Coordinator: coord,
		TimeoutMs: int32(timeout / time.Millisecond), StartUnixMs: at.Add(-age).UnixMilli(), Partitions: parts, Described: true}
}

func idle(id string, s model.State, pid int64, epoch int16, coord int32) model.Txn {
	return model.Txn{ID: id, State: s, ProducerID: pid, ProducerEpoch: epoch, Coordinator: coord, TimeoutMs: 60000, Described: true}
}

func producer(pid int64, epoch int16, seq int32, at time.Time, start int64) model.Producer {
	return model.Producer{ProducerID: pid, ProducerEpoch: epoch, LastSequence: seq, LastWriteMs: model.WriteMs(at),
		CoordinatorEpoch: 2, CurrentTxnStartOffset: start}
}

// Snapshot is a small cluster with one of everything: healthy, warn and danger
// transactions, one past its timeout, a long one pinning an LSO, one being
// fenced, one that could not be described, idle ids, a hanging transaction
// (orders-7) that the coordinator does not list for its producer, a hanging one
// no transactional id owns (billing-2), and consumer groups stuck behind some.
func Snapshot(at time.Time) *model.Snapshot {
	s := &model.Snapshot{
		TakenAt: at, Bootstrap: "127.0.0.1:9092", Brokers: 3, BrokerMaxTimeoutMs: 900000,
		Txns: []model.Txn{
			ongoing("orders-enricher-v1-0-41", 4001, 3, 1, time.Minute, 12*time.Second, at, tps("orders", 0, 1)),
			ongoing("orders-enricher-v1-1-41", 4002, 3, 2, time.Minute, 35*time.Second, at, tps("orders", 2, 3)),
			ongoing("orders-enricher-v1-2-41", 4003, 5, 0, time.Minute, 57*time.Second, at, tps("orders", 4, 5)),
			idle("orders-enricher-v1-3-40", model.CompleteCommit, 4004, 7, 1),
			idle("abort-every-third-0-12", model.CompleteAbort, 5001, 2, 2),
			ongoing("crashed-job-0-7", 6001, 0, 0, time.Minute, 70*time.Second, at, tps("payments", 0)),
			ongoing("long-runner", 7001, 0, 1, 15*time.Minute, 9*time.Minute, at, tps("audit", 0)),
			{ID: "fenced-job-0-3", State: model.PrepareEpochFence, ProducerID: 8001, ProducerEpoch: 2, Coordinator: 2,
				TimeoutMs: 60000, StartUnixMs: at.Add(-20 * time.Second).UnixMilli(), Partitions: tps("orders", 6), Described: true},
			{ID: "payments-tx-secret", State: model.Ongoing, ProducerID: 9001, Coordinator: 1,
				Err: "TRANSACTIONAL_ID_AUTHORIZATION_FAILED: not allowed to describe"},
			idle("idle-0", model.Empty, 9100, 0, 0),
		},
		Partitions: []model.Partition{
			{TopicPartition: model.TopicPartition{Topic: "audit", Partition: 0}, Leader: 1, HighWatermark: 5200, LastStableOffset: 4000,
				Producers: []model.Producer{producer(7001, 0, 1199, at.Add(-2*time.Second), 4000)}},
			{TopicPartition: model.TopicPartition{Topic: "orders", Partition: 0}, Leader: 1, HighWatermark: 1200, LastStableOffset: 1180,
				Producers: []model.Producer{producer(4001, 3, 19, at.Add(-time.Second), 1180)}},
			{TopicPartition: model.TopicPartition{Topic: "orders", Partition: 1}, Leader: 2, HighWatermark: 900, LastStableOffset: 900,
				Producers: []model.Producer{producer(4001, 3, 7, at.Add(-time.Second), -1)}},
			{TopicPartition: model.TopicPartition{Topic: "orders", Partition: 2}, Leader: 0, HighWatermark: 300, LastStableOffset: 280,
				Producers: []model.Producer{producer(4002, 3, 19, at.Add(-3*time.Second), 280)}},
			{TopicPartition: model.TopicPartition{Topic: "orders", Partition: 3}, Leader: 1, HighWatermark: 310, LastStableOffset: 290,
				Producers: []model.Producer{producer(4002, 3, 19, at.Add(-3*time.Second), 290)}},
			{TopicPartition: model.TopicPartition{Topic: "orders", Partition: 4}, Leader: 2, HighWatermark: 777, LastStableOffset: 700,
				Producers: []model.Producer{producer(4003, 5, 76, at.Add(-50*time.Second), 700)}},
			{TopicPartition: model.TopicPartition{Topic: "orders", Partition: 5}, Leader: 0, HighWatermark: 650, LastStableOffset: 640,
				Producers: []model.Producer{producer(4003, 5, 9, at.Add(-50*time.Second), 640), producer(4002, 3, 3, at.Add(-40*time.Second), 645)}},
			{TopicPartition: model.TopicPartition{Topic: "orders", Partition: 6}, Leader: 1, HighWatermark: 100, LastStableOffset: 90,
				Producers: []model.Producer{producer(8001, 2, 9, at.Add(-20*time.Second), 90)}},
			{TopicPartition: model.TopicPartition{Topic: "orders", Partition: 7}, Leader: 2, HighWatermark: 800, LastStableOffset: 500,
				Producers: []model.Producer{producer(4003, 4, 299, at.Add(-47*time.Minute), 500)}},
			{TopicPartition: model.TopicPartition{Topic: "payments", Partition: 0}, Leader: -1, HighWatermark: -1, LastStableOffset: -1,
				Err: "TOPIC_AUTHORIZATION_FAILED: not allowed to describe payments"},
			{TopicPartition: model.TopicPartition{Topic: "billing", Partition: 2}, Leader: 0, HighWatermark: 61, LastStableOffset: 42,
				Producers: []model.Producer{producer(9500, 0, 18, at.Add(-40*time.Minute), 42)}},
		},
		Scanned: 1204,
		GroupCommits: []model.GroupCommit{
			{Group: "billing-etl", State: "Stable", TopicPartition: model.TopicPartition{Topic: "audit", Partition: 0}, Offset: 3995},
			{Group: "billing-etl", State: "Stable", TopicPartition: model.TopicPartition{Topic: "billing", Partition: 2}, Offset: 42},
			{Group: "orders-analytics", State: "Stable", TopicPartition: model.TopicPartition{Topic: "orders", Partition: 4}, Offset: 700},
			{Group: "orders-analytics", State: "Stable", TopicPartition: model.TopicPartition{Topic: "orders", Partition: 7}, Offset: 498},
			{Group: "dashboard", State: "Empty", TopicPartition: model.TopicPartition{Topic: "orders", Partition: 0}, Offset: 1000},
		},
	}
	model.SortGroupCommits(s.GroupCommits)
	s.Sort()
	return s
}

// Big is a snapshot of n ids, a mix of open and idle, for benchmarks.
func Big(n int, at time.Time) *model.Snapshot {
	s := &model.Snapshot{TakenAt: at, Bootstrap: "127.0.0.1:9092", Brokers: 3, Txns: make([]model.Txn, 0, n)}
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("job-%03d-%d-%d", i%997, i%8, i)
		if i%5 == 0 {
			s.Txns = append(s.Txns, ongoing(id, int64(i), int16(i%7), int32(i%3), time.Minute,
				time.Duration(i%70)*time.Second, at, tps("t", int32(i%12))))
			continue
		}
		s.Txns = append(s.Txns, idle(id, model.CompleteCommit, int64(i), int16(i%7), int32(i%3)))
	}
	s.Sort()
	return s
}

// Admin is a fake cluster: Refresh returns the queued snapshots (or errors)
// in order and then keeps returning the last; Ping answers with what SetPing
// last said (nil at first); Execute records the action and answers with
// Result; Replay answers what SetReplay last said.
type Admin struct {
	mu       sync.Mutex
	replies  []reply
	last     reply
	refresh  []*model.Snapshot // the prev each Refresh was called with
	executed []model.Action
	pingErr  error
	pings    int
	// Result answers Execute; nil answers "sent, accepted".
	Result func(a model.Action) model.Result
	// Block, when set, makes Refresh and Ping wait for it (or for ctx).
	Block chan struct{}
	// Truth answers Describe: an id is described as Truth has it, and is
	// gone when Truth does not have it. Set it before the first Describe.
	Truth *model.Snapshot
	// DescribeErr, when set, fails every Describe.
	DescribeErr error
	// OnPoll, when set, runs at the start of every Poll (a test's clock
	// moving while the cluster is read).
	OnPoll func()
	asked  [][]string
	// ReplayBlock, when set, makes Replay wait for it (or for ctx): a
	// replay still running.
	ReplayBlock chan struct{}
	replay      ReplayReply
	replays     []ReplayCall
}

// Poll implements ui.Admin: the same queue as Refresh.
func (a *Admin) Poll(ctx context.Context, prev *model.Snapshot) (*model.Snapshot, error) {
	if a.OnPoll != nil {
		a.OnPoll()
	}
	return a.Refresh(ctx, prev)
}

// Describe implements ui.Admin from Truth.
func (a *Admin) Describe(ctx context.Context, refs []model.TxnRef) (model.Descriptions, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	ids := make([]string, len(refs))
	for i, r := range refs {
		ids[i] = r.ID
	}
	a.asked = append(a.asked, ids)
	if err := ctx.Err(); err != nil {
		return model.Descriptions{}, err
	}
	if a.DescribeErr != nil {
		return model.Descriptions{}, a.DescribeErr
	}
	if a.Truth == nil {
		return model.Descriptions{}, fmt.Errorf("fake admin: no Truth to describe from")
	}
	d := model.Descriptions{At: a.Truth.TakenAt}
	for _, id := range ids {
		if t, ok := a.Truth.Txn(id); ok {
			d.Txns = append(d.Txns, t)
		} else {
			d.Gone = append(d.Gone, id)
		}
	}
	return d, nil
}

// Asked are the ids of each Describe, in order.
func (a *Admin) Asked() [][]string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([][]string(nil), a.asked...)
}

// Listed is s as a first poll returns it: every row listed only (state,
// producer id and coordinator), pending its describe.
func Listed(s *model.Snapshot) *model.Snapshot {
	out := *s
	out.Txns = make([]model.Txn, len(s.Txns))
	for i, t := range s.Txns {
		out.Txns[i] = model.Txn{ID: t.ID, State: t.State, ProducerID: t.ProducerID, Coordinator: t.Coordinator, Pending: true}
	}
	return &out
}

type reply struct {
	snap *model.Snapshot
	err  error
}

// Push queues a snapshot.
func (a *Admin) Push(s *model.Snapshot) {
	a.mu.Lock()
	a.replies = append(a.replies, reply{snap: s})
	a.mu.Unlock()
}

// Fail queues an error.
func (a *Admin) Fail(err error) {
	a.mu.Lock()
	a.replies = append(a.replies, reply{err: err})
	a.mu.Unlock()
}

// Refresh implements ui.Admin.
func (a *Admin) Refresh(ctx context.Context, prev *model.Snapshot) (*model.Snapshot, error) {
	if a.Block != nil {
		select {
		case <-a.Block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.refresh = append(a.refresh, prev)
	if len(a.replies) > 0 {
		a.last, a.replies = a.replies[0], a.replies[1:]
	}
	if a.last.snap == nil && a.last.err == nil {
		return nil, fmt.Errorf("fake admin: nothing queued")
	}
	return a.last.snap, a.last.err
}

// SetPing makes every Ping from now on answer err (nil: the cluster answers).
// It does not touch what Refresh returns: a cluster that is away needs both
// SetPing(err) and Fail(err).
func (a *Admin) SetPing(err error) {
	a.mu.Lock()
	a.pingErr = err
	a.mu.Unlock()
}

// Ping implements ui.Admin.
func (a *Admin) Ping(ctx context.Context) error {
	if a.Block != nil {
		select {
		case <-a.Block:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pings++
	return a.pingErr
}

// Pings is how many times Ping was called.
func (a *Admin) Pings() int { a.mu.Lock(); defer a.mu.Unlock(); return a.pings }

// Execute implements ui.Admin.
func (a *Admin) Execute(ctx context.Context, act model.Action, rec model.Recorder) model.Result {
	a.mu.Lock()
	a.executed = append(a.executed, act)
	f := a.Result
	a.mu.Unlock()
	r := model.Result{Action: act, At: T0, Sent: true, Sends: 1}
	if f != nil {
		r = f(act)
	}
	return Record(rec, r)
}

// Record keeps the executor's contract with the audit trail for a fake
// Admin: a request is recorded before it "goes out" (a record that fails
// refuses it), and every result after.
func Record(rec model.Recorder, r model.Result) model.Result {
	if rec == nil {
		return model.Result{Action: r.Action, At: r.At, Refused: true, Err: "refused: there is no audit log to record it in; nothing sent"}
	}
	if r.Sent {
		if err := rec.Sending(1, r.Action.Wire()); err != nil {
			r = model.Result{Action: r.Action, At: r.At, Refused: true, Err: "refused: " + err.Error() + "; nothing sent"}
		}
	}
	r.Attempt = rec.ID()
	if err := rec.Done(r); err != nil {
		r.AuditErr = err.Error()
	}
	return r
}

// Refreshes is how many times Refresh was called.
func (a *Admin) Refreshes() int { a.mu.Lock(); defer a.mu.Unlock(); return len(a.refresh) }

// Prevs are the prev snapshots Refresh was called with.
func (a *Admin) Prevs() []*model.Snapshot {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]*model.Snapshot(nil), a.refresh...)
}

// Executed are the actions Execute was called with.
func (a *Admin) Executed() []model.Action {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]model.Action(nil), a.executed...)
}

// ReplayReply is what the fake's Replay answers: the events (oldest first,
// as kafkaadmin returns them), the times of the log's reach, the records it
// could not read, or an error.
type ReplayReply struct {
	Events           []model.Event
	Complete, Oldest time.Time
	Whole            bool
	Unread           []model.Unread
	Err              error
}

// ReplayCall is one call of Replay, as it was asked.
type ReplayCall struct {
	Since time.Time
	Limit int
}

// SetReplay makes every Replay from now on answer r.
func (a *Admin) SetReplay(r ReplayReply) {
	a.mu.Lock()
	a.replay = r
	a.mu.Unlock()
}

// Replay implements ui.Admin: it answers what SetReplay last said (nothing
// at first), after ReplayBlock, when set, is closed or sends (or ctx ends).
func (a *Admin) Replay(ctx context.Context, since time.Time, limit int) (model.Replayed, error) {
	a.mu.Lock()
	a.replays = append(a.replays, ReplayCall{Since: since, Limit: limit})
	block := a.ReplayBlock
	a.mu.Unlock()
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return model.Replayed{}, ctx.Err()
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	r := a.replay
	if r.Err != nil {
		return model.Replayed{}, r.Err
	}
	return model.Replayed{Events: append([]model.Event(nil), r.Events...), Complete: r.Complete, Oldest: r.Oldest,
		Whole: r.Whole, Unread: append([]model.Unread(nil), r.Unread...)}, nil
}

// Replays are the calls of Replay, in order.
func (a *Admin) Replays() []ReplayCall {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]ReplayCall(nil), a.replays...)
}
