package ui

import (
	"context"
	"errors"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/txnscope/txnscope/model"
	"github.com/txnscope/txnscope/views"
)

// maxBackoff caps the wait between full refreshes while they fail.
const maxBackoff = 30 * time.Second

// poller is the refresh loop's state. Exactly one request runs at a time: the
// next tick is scheduled only once the reply is in, so a slow cluster
// stretches the interval instead of piling up requests.
//
// While refreshes fail, the full refresh (many requests against a cluster
// that may be struggling) backs off, but every interval in between a probe
// (Admin.Ping, one light request) asks whether the cluster answers at all.
// When it answers again after not answering, a full refresh starts at once:
// the backoff never keeps fresh data off the screen for longer than an
// interval after the cluster is back. A cluster that answers the probe but
// fails the refresh is left to the backoff.
type poller struct {
	gen       uint64 // the latest request started; older replies are dropped
	tick      uint64 // the pending tick; older ticks are dropped
	busy      bool
	probing   bool // the request in flight is a probe
	busySince time.Time
	again     bool // refresh as soon as the reply is in
	failures  int  // failed full refreshes in a row, for the backoff
	err       string
	retryAt   time.Time // when the next request starts (set on error)
	fullAt    time.Time // when the backed-off full refresh is due
	// answered: the last probe got an answer, so the failures are the
	// refresh's own and a probe's answer is no news.
	answered bool
	// recovering: the refresh in flight started because the cluster answered
	// a probe again; if it fails, that is a new problem and its backoff
	// starts over (a restarted broker may need a moment to load its
	// transaction state).
	recovering bool
	lastOK     time.Time
	loaded     bool
	// batch: the request in flight describes pending rows (describe.go).
	batch bool
	// stalled: a batch described nothing, so no more until the next poll.
	stalled bool
	// took is how long the last successful poll took, for the header when
	// it outlasts the interval.
	took time.Duration
}

type tickMsg struct{ id uint64 }

type clockMsg struct{}

// refreshedMsg is a Refresh reply with everything derived from it off the UI
// goroutine (data; events, the diff from the previous snapshot, for the
// history), or, with probe set, a Ping reply (only gen and err).
type refreshedMsg struct {
	gen    uint64
	probe  bool
	data   cluster
	events []model.Event
	err    error
	took   time.Duration // how long the refresh took, Admin.Poll and the rest
	// baseline is the history of a first snapshot, the outcome each id shows,
	// worked out here too: at 500,000 ids it is no work for the UI goroutine.
	baseline *model.History
}

// Init starts polling, the clock that keeps ages current, and asks the
// terminal for its background colour.
func (m *Model) Init() tea.Cmd {
	return tea.Batch(m.refresh(), m.schedule(time.Second, clockMsg{}), tea.RequestBackgroundColor, m.awaitLog())
}

// logLiveMsg: the coordinators' log has been read to its end.
type logLiveMsg struct{}

// logFollower is an Admin that follows the coordinators' log
// (kafkaadmin.Client.LogLive).
type logFollower interface{ LogLive() <-chan struct{} }

// awaitLog asks for a refresh the moment the coordinators' log has been
// read, rather than at the next tick: from then on the history is exact.
func (m *Model) awaitLog() tea.Cmd {
	l, ok := m.o.Admin.(logFollower)
	if !ok || l.LogLive() == nil {
		return nil
	}
	live, ctx := l.LogLive(), m.ctx
	return func() tea.Msg {
		select {
		case <-live:
			return logLiveMsg{}
		case <-ctx.Done():
			return nil
		}
	}
}

// backoff is the wait before full refresh n+1 after n consecutive failures.
func backoff(interval time.Duration, n int) time.Duration {
	d := interval
	for i := 1; i < n && d < maxBackoff; i++ {
		d *= 2
	}
	if d > maxBackoff && interval < maxBackoff {
		d = maxBackoff
	}
	return d
}

// refresh starts a refresh now, unless one is running: then it asks for
// another as soon as that one returns.
func (m *Model) refresh() tea.Cmd {
	if m.poll.busy {
		m.poll.again = true
		return nil
	}
	m.poll.gen++
	m.poll.tick++ // whatever tick was pending is now obsolete
	m.poll.busy, m.poll.probing, m.poll.busySince, m.poll.again = true, false, m.now, false
	gen, prev, admin, ctx, track, now, q, jobs, flink := m.poll.gen, m.data.snap, m.o.Admin, m.ctx, m.pinTrack, m.o.Now, m.listQuery(), m.jobsOn(), m.o.Flink
	return func() tea.Msg {
		start := now()
		next, err := admin.Poll(ctx, prev)
		if err != nil || next == nil {
			if err == nil {
				err = errors.New("the cluster returned no snapshot")
			}
			return refreshedMsg{gen: gen, err: err}
		}
		// A snapshot of the log shares its rows with the log's reader, and
		// its strings across refreshes already: it is never written.
		if next != prev && !next.Source.Log {
			model.ShareStrings(prev, next)
		}
		var fv *model.FlinkView
		if flink != nil {
			fv = flink()
		}
		msg := refreshedMsg{gen: gen, data: newCluster(next, track, now(), q, jobs, fv), events: model.EventsBetween(prev, next)}
		if prev == nil {
			msg.baseline = model.NewHistory(historySize)
			msg.baseline.Baseline(next)
		}
		msg.took = now().Sub(start) // reading the cluster and working out the screens' data
		return msg
	}
}

// probe asks whether the cluster answers at all.
func (m *Model) probe() tea.Cmd {
	m.poll.gen++
	m.poll.tick++
	m.poll.busy, m.poll.probing, m.poll.busySince = true, true, m.now
	gen, admin, ctx := m.poll.gen, m.o.Admin, m.ctx
	return func() tea.Msg {
		return refreshedMsg{gen: gen, probe: true, err: admin.Ping(ctx)}
	}
}

// refreshed takes a reply in and schedules what comes next.
func (m *Model) refreshed(msg refreshedMsg) tea.Cmd {
	if msg.gen != m.poll.gen || !m.poll.busy || msg.probe != m.poll.probing {
		return nil
	}
	m.poll.busy, m.poll.probing = false, false
	if msg.err != nil && errors.Is(msg.err, context.Canceled) && m.ctx.Err() != nil {
		return nil // quitting
	}
	if msg.probe {
		return m.probed(msg.err)
	}
	if msg.err != nil {
		m.failed(msg.err)
	} else {
		m.poll = poller{gen: m.poll.gen, tick: m.poll.tick, again: m.poll.again, lastOK: m.now, loaded: true, took: msg.took}
		m.apply(msg)
	}
	m.poll.recovering = false
	return m.next()
}

// failed counts a failed request that was to bring data (a poll or a
// describe batch) and backs the next full poll off.
func (m *Model) failed(err error) {
	if m.poll.recovering {
		m.poll.failures = 0
	}
	m.poll.failures++
	m.poll.err = err.Error()
	m.poll.fullAt = m.now.Add(backoff(m.every(), m.poll.failures))
}

// probed takes a probe's answer in: an answer after none means the cluster is
// back, and a full refresh starts now.
func (m *Model) probed(err error) tea.Cmd {
	if err != nil {
		m.poll.answered = false
		m.poll.err = err.Error()
		return m.next()
	}
	back := !m.poll.answered
	m.poll.answered = true
	if back {
		m.poll.recovering = true
		return m.refresh()
	}
	return m.next()
}

// next schedules the following request: while rows are pending, the next
// describe batch, or the poll once it is due; otherwise a full refresh one
// interval after the last one, or, while they fail, a probe every interval
// until the backed-off full refresh is due (ticked tells which).
func (m *Model) next() tea.Cmd {
	if m.poll.again {
		return m.refresh()
	}
	delay := max(m.poll.lastOK.Add(m.every()).Sub(m.now), 0)
	if m.poll.err == "" && !m.poll.stalled && m.toDescribe() {
		if delay == 0 {
			return m.refresh()
		}
		return m.describe()
	}
	if m.poll.err != "" {
		// The probe is one light request: it keeps --refresh, so a cluster
		// that is back is seen as soon as at the asked-for interval.
		delay = min(m.o.Refresh, max(m.poll.fullAt.Sub(m.now), 0))
		m.poll.retryAt = m.now.Add(delay)
		if m.poll.answered {
			// The cluster answers probes already: only the backed-off refresh
			// can bring new data, so that is the retry the header counts down to.
			m.poll.retryAt = m.poll.fullAt
		}
	}
	m.poll.tick++
	return m.schedule(delay, tickMsg{id: m.poll.tick})
}

func (m *Model) ticked(msg tickMsg) tea.Cmd {
	if msg.id != m.poll.tick || m.poll.busy {
		return nil
	}
	if m.poll.err != "" && m.now.Before(m.poll.fullAt) {
		return m.probe()
	}
	return m.refresh()
}

// apply makes a refresh's data current: the history, every screen and the
// dialog follow it.
func (m *Model) apply(msg refreshedMsg) {
	switch {
	case m.data.snap == nil && msg.baseline != nil:
		m.hist = msg.baseline // nothing was recorded before the first snapshot
	case m.data.snap == nil:
		m.hist.Baseline(msg.data.snap)
	default:
		m.hist.Add(msg.events)
		m.hist.Forget(msg.data.snap)
	}
	m.swap(msg.data)
}

// swap makes data current: every screen and the dialog follow it.
func (m *Model) swap(data cluster) {
	m.data = data
	for _, s := range m.screens {
		s.reload()
	}
	if m.dialog != nil {
		m.dialog.recheck(m)
	}
}

// every is the refresh interval: --refresh, stretched while every refresh
// lists a great many ids (model.PollEvery), which would cost the brokers more
// than the data is worth.
func (m *Model) every() time.Duration {
	return model.PollEvery(m.o.Refresh, m.data.snap)
}

func (m *Model) conn() views.Conn {
	every := m.every()
	return views.Conn{
		Loaded: m.poll.loaded, LastOK: m.poll.lastOK, Err: m.poll.err, RetryAt: m.poll.retryAt,
		Busy: m.poll.busy && !m.poll.batch, BusySince: m.poll.busySince, Refresh: every, Took: m.poll.took,
		Stretched: every > m.o.Refresh,
	}
}

// scheduleUntil delivers msg after d, or nothing once ctx ends: tea.Tick's
// timer would outlive a quit program by up to a backoff (30 s).
func scheduleUntil(ctx context.Context) func(time.Duration, tea.Msg) tea.Cmd {
	return func(d time.Duration, msg tea.Msg) tea.Cmd {
		t := time.NewTimer(d)
		return func() tea.Msg {
			defer t.Stop()
			select {
			case <-t.C:
				return msg
			case <-ctx.Done():
				return nil
			}
		}
	}
}
