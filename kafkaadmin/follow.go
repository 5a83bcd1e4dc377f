package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/model"
)

// follower keeps a model.TxnLog current by reading the coordinators' log
// (__transaction_state) from its start and then tailing it. Once it has read
// what the log held when it started (live), Poll takes the states and the
// events from it instead of listing and describing every id.
type follower struct {
	mu   sync.Mutex
	log  *model.TxnLog
	pos  map[int32]int64 // the next offset to read, per log partition
	live bool
	// reading: the log is being read from its start (from the follower's
	// start, and again on each retry), not live yet and not failed.
	reading bool
	why     string    // why the log is not the source ("" once live)
	since   time.Time // the oldest record read at start
	moved   chan struct{}
	// onLive is called each time the follower becomes live.
	onLive func()
	// unread counts the records read that could not be; while one of them
	// stands between an id and its row (model.TxnLog.Sure), the log is not
	// the source.
	unread model.Unreads

	done chan struct{} // closed when the goroutine is gone
}

// followRetry is how long the follower waits before it tries the log again
// after it could not read it: a refused READ stays refused, and a quiet
// header is worth more than a retry storm.
var followRetry = 30 * time.Second

// LogLive is closed the first time the coordinators' log has been read to
// its end, so that the next Poll takes its states and events from it: the
// TUI refreshes then rather than at its next tick. nil when the log is not
// followed (Config.FollowLog).
func (c *Client) LogLive() <-chan struct{} {
	if !c.cfg.FollowLog {
		return nil
	}
	return c.live
}

// follow starts following the log, once.
func (c *Client) follow() *follower {
	c.followOnce.Do(func() {
		f := &follower{why: "reading " + txnStateTopic, reading: true, moved: make(chan struct{}), done: make(chan struct{}),
			onLive: func() { c.liveOnce.Do(func() { close(c.live) }) }}
		c.followed.Store(f)
		go func() {
			defer close(f.done)
			if c.cfg.FollowOnLetGo {
				select {
				case <-c.letGo:
				case <-time.After(letGoWait):
				case <-c.life.Done():
					return
				}
			}
			for {
				err := f.run(c)
				if c.life.Err() != nil {
					return
				}
				f.fail(err)
				wait := followRetry
				if errors.Is(err, errNoTxnLog) {
					// The first transaction creates it: look again soon.
					wait = followRetry / 6
				}
				select {
				case <-c.life.Done():
					return
				case <-time.After(wait):
				}
			}
		}()
	})
	return c.followed.Load()
}

// LetGo says the caller holds no rows of the polls before it
// (Config.FollowOnLetGo): the log's first read may begin.
func (c *Client) LetGo() { c.letGoOnce.Do(func() { close(c.letGo) }) }

// letGoWait bounds how long the log's first read waits for LetGo: a caller
// that keeps its rows (a first poll with open ids to describe, then
// another) still gets the log.
const letGoWait = 30 * time.Second

// run reads the log from its start and tails it until it cannot.
func (f *follower) run(c *Client) error {
	starts, ends, err := c.txnLogBounds(c.life)
	if err != nil {
		return err
	}
	lg := model.NewTxnLog()
	lg.Expect(int(c.listed.Load()))
	pos := map[int32]int64{}
	want := map[int32]kgo.Offset{}
	for p, s := range starts {
		pos[p] = s
		want[p] = kgo.NewOffset().At(s)
	}
	f.mu.Lock()
	f.log, f.pos, f.since, f.unread, f.reading = lg, pos, time.Time{}, model.Unreads{}, true
	f.mu.Unlock()
	f.check(ends)

	cl, err := kgo.NewClient(append(slices.Clip(c.opts),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{txnStateTopic: want}),
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()),
		// A few MB in flight: at 500,000 ids the log is 300 MB, and the
		// reader must not hold much of it at once.
		kgo.FetchMaxBytes(4<<20), kgo.MaxBufferedBytes(8<<20))...)
	if err != nil {
		return err
	}
	defer cl.Close()
	for {
		fs := cl.PollFetches(c.life)
		if err := c.life.Err(); err != nil {
			return err
		}
		if err := fatalFetch(fs); err != nil {
			return err
		}
		now := time.Now()
		f.mu.Lock()
		fs.EachRecord(func(r *kgo.Record) {
			// A record it cannot read (a newer Kafka's, or broken) is
			// counted and skipped: the log reads on, and polls hold the
			// rows while it leaves an id's state unknown (source).
			rec := recordOf(r)
			if rec.Unread != "" {
				f.unread.Add(rec)
			}
			lg.Apply(rec, r.Offset >= ends[r.Partition], now)
			if r.Offset < ends[r.Partition] && (f.since.IsZero() || r.Timestamp.Before(f.since)) {
				f.since = r.Timestamp
			}
			pos[r.Partition] = r.Offset + 1
		})
		f.mu.Unlock()
		f.check(ends)
	}
}

// check marks the follower live once it has read up to ends, and wakes
// whoever waits for it to move.
func (f *follower) check(ends map[int32]int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.live && f.reached(ends) {
		f.live, f.why, f.reading = true, "", false
		f.onLive()
	}
	close(f.moved)
	f.moved = make(chan struct{})
}

// reached reports whether every partition was read up to ends; f.mu held.
func (f *follower) reached(ends map[int32]int64) bool {
	for p, e := range ends {
		if f.pos[p] < e {
			return false
		}
	}
	return true
}

// fail records why the log cannot be followed; the state read so far goes.
func (f *follower) fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.live, f.log, f.pos, f.reading = false, nil, nil, false
	f.why = logWhy(err)
	close(f.moved)
	f.moved = make(chan struct{})
}

// catchUp waits, until ctx ends, for the follower to read the log up to
// ends (the end offsets read at the start of a refresh), and then hands out
// its rows and its events; ok is false when it is not live or did not get
// there.
func (f *follower) catchUp(ctx context.Context, ends map[int32]int64, leader func(int32) int32) (snap *model.Snapshot, evs []model.Event, ok bool) {
	for {
		f.mu.Lock()
		if !f.live || !f.log.Sure() {
			f.mu.Unlock()
			return nil, nil, false
		}
		if f.reached(ends) {
			defer f.mu.Unlock()
			return f.log.Snapshot(leader), f.log.Take(time.Now()), true
		}
		moved := f.moved
		f.mu.Unlock()
		select {
		case <-moved:
		case <-ctx.Done():
			return nil, nil, false
		}
	}
}

// source says where the states come from.
func (f *follower) source() model.Source {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := model.Source{Log: f.live, Why: f.why, Since: f.since, Unread: model.UnreadLine(f.unread.List()),
		Reading: f.reading}
	if f.live && !f.log.Sure() {
		// Polls are right where the log's row would be the state before
		// a record it could not read.
		s.Log, s.Why = false, s.Unread
	}
	return s
}

// drop throws away the events the log has for a refresh that did not use
// it: the history then comes from diffing polls, and they must not count twice.
func (f *follower) drop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.log != nil {
		f.log.Take(time.Now())
	}
}

// logEvents puts into snap, which listed its states, the events the log
// has read so far while it stays live (Source.LogEvents); when it no longer
// is, they are dropped as by drop, and snap's history is a Diff.
func (c *Client) logEvents(snap *model.Snapshot) {
	f := c.followed.Load()
	if f == nil || !snap.Source.LogEvents {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	snap.Source.LogEvents = false
	if f.log == nil {
		return
	}
	evs := f.log.Take(time.Now())
	if f.live && f.log.Sure() {
		snap.Events, snap.Source.LogEvents = evs, true
	}
}

// terminated tells the log's reader that txnscope force-terminated id.
func (f *follower) terminated(id string, pid int64, epoch int16) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.log != nil {
		f.log.Terminated(id, pid, epoch)
	}
}

// fatalFetch is the first fetch error that retrying will not cure.
func fatalFetch(fs kgo.Fetches) error {
	var out error
	fs.EachError(func(_ string, _ int32, err error) {
		if out == nil && (errors.Is(err, kerr.TopicAuthorizationFailed) || errors.Is(err, kerr.ClusterAuthorizationFailed) ||
			errors.Is(err, kerr.UnknownTopicOrPartition) || errors.Is(err, kerr.SaslAuthenticationFailed)) {
			out = err
		}
	})
	return out
}

// logWhy says in one line why the log cannot be read: the header's reason
// for polling instead.
func logWhy(err error) string {
	switch {
	case errors.Is(err, kerr.TopicAuthorizationFailed):
		return "no READ on " + txnStateTopic
	case errors.Is(err, errNoTxnLog), errors.Is(err, kerr.UnknownTopicOrPartition):
		return "the cluster has no " + txnStateTopic
	}
	return "cannot read " + txnStateTopic + ": " + errText(err)
}

var errNoTxnLog = errors.New("no " + txnStateTopic)

// txnLogBounds reads the first and the next offset of every partition of
// the log.
func (c *Client) txnLogBounds(ctx context.Context) (starts, ends map[int32]int64, err error) {
	if ends, err = c.txnLogOffsets(ctx, -1); err != nil {
		return nil, nil, err
	}
	if len(ends) == 0 {
		return nil, nil, errNoTxnLog
	}
	if starts, err = c.txnLogStarts(ctx, ends); err != nil {
		return nil, nil, err
	}
	return starts, ends, nil
}

// txnLogStarts reads the first offset of each partition of ends: the
// partitions are the ends', and one without a first offset, or past its
// end, has nothing to read.
func (c *Client) txnLogStarts(ctx context.Context, ends map[int32]int64) (map[int32]int64, error) {
	starts, err := c.txnLogOffsets(ctx, -2)
	if err != nil {
		return nil, err
	}
	for p, e := range ends {
		if s, ok := starts[p]; !ok || s > e {
			starts[p] = e
		}
	}
	for p := range starts {
		if _, ok := ends[p]; !ok {
			delete(starts, p)
		}
	}
	return starts, nil
}

// txnLogOffsets lists one kind of offset (timestamp -1 the next, -2 the
// first) of every partition of the log; none when the topic does not exist.
// Its own ListOffsets, not kadm's: a leader that does not answer is then
// known by its id (noteSilent), and the topic's metadata is hedged.
func (c *Client) txnLogOffsets(ctx context.Context, timestamp int64) (map[int32]int64, error) {
	meta, metaErr := c.metadata(ctx, []string{txnStateTopic})
	m, ok := meta[txnStateTopic]
	switch {
	case metaErr != "":
		return nil, errors.New(metaErr)
	case ok && m.denied != nil:
		return nil, m.denied
	case !ok || m.err != "" || len(m.leader) == 0:
		return map[int32]int64{}, nil
	}
	req := kmsg.NewPtrListOffsetsRequest()
	req.TimeoutMillis = int32(c.cfg.Timeout / time.Millisecond)
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = txnStateTopic
	for p := range m.leader {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp = p, timestamp
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	rctx, cancel := c.deadline(ctx)
	defer cancel()
	shards := c.kgo.RequestSharded(rctx, req)
	noteSilentShards(ctx, rctx, shards)
	out := make(map[int32]int64, len(m.leader))
	for _, sh := range shards {
		if sh.Err != nil {
			return nil, sh.Err
		}
		for _, t := range sh.Resp.(*kmsg.ListOffsetsResponse).Topics {
			for _, p := range t.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					return nil, err
				}
				out[p.Partition] = p.Offset
			}
		}
	}
	return out, nil
}

// notFollowing is the source of a poll's rows when the log is not followed.
var notFollowing = model.Source{Why: "not following the coordinators' log (--history polls)"}

// catchUpWait bounds how long a refresh waits for the follower to read what
// the log held when the refresh started: a follower that falls further
// behind is not trusted with that refresh, which lists instead.
const catchUpWait = 2 * time.Second

// fromLog is a refresh's rows and events from the log, when it is followed
// and read up to its end as of now; ok false means list instead (source
// then says why).
func (c *Client) fromLog(ctx context.Context, early *earlyScan) (snap *model.Snapshot, evs []model.Event, source model.Source, ok bool) {
	f := c.followed.Load()
	if f == nil {
		return nil, nil, notFollowing, false
	}
	source = f.source()
	c.mu.Lock()
	hidden := c.settings.idsHidden
	c.mu.Unlock()
	if source.Log && hidden {
		// ACLs hide some transactional ids from this principal: the log,
		// which shows every id, must not show them either.
		source = model.Source{Why: "ACLs hide some transactional ids, which the log would show", Since: source.Since}
	}
	if !source.Log {
		f.drop()
		return nil, nil, source, false
	}
	var ends map[int32]int64
	var err error
	select {
	case got := <-early.ends:
		ends, err = got.ends, got.err
		if err != nil {
			err = fmt.Errorf("the end of %s: %s", txnStateTopic, errText(err))
		}
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err == nil {
		wait, cancel := context.WithTimeout(ctx, catchUpWait)
		snap, evs, ok = f.catchUp(wait, ends, func(p int32) int32 {
			l, _ := early.meta.leaderOf(tp{Topic: txnStateTopic, Partition: p})
			return l
		})
		cancel()
	}
	if !ok {
		source.Log, source.Why = false, "the log reader is behind"
		switch now := f.source(); {
		case err != nil:
			source.Why = err.Error()
		case !now.Log:
			source = now // it failed while the refresh waited
		}
		// The reader is still live: what it has read is the history, and
		// what it has not is for a later refresh (a Diff of this listing
		// would count that again, and miss all but one commit an id). The
		// refresh takes them once it has listed (logEvents).
		source.LogEvents = f.source().Log
	}
	return snap, evs, source, ok
}
