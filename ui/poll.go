package ui

import (
	"context"
	"errors"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/txnscope/txnscope/model"
	"github.com/txnscope/txnscope/views"
)

// maxBackoff caps the wait between attempts while the cluster is failing.
const maxBackoff = 30 * time.Second

// poller is the refresh loop's state. Exactly one refresh runs at a time: the
// next tick is scheduled only once the reply is in, so a slow cluster
// stretches the interval instead of piling up requests.
type poller struct {
	gen       uint64 // the latest refresh started; older replies are dropped
	tick      uint64 // the pending tick; older ticks are dropped
	busy      bool
	busySince time.Time
	again     bool // refresh again as soon as the reply is in
	failures  int
	err       string
	retryAt   time.Time
	lastOK    time.Time
	loaded    bool
}

type tickMsg struct{ id uint64 }

type clockMsg struct{}

// refreshedMsg is a Refresh reply with everything derived from it off the UI
// goroutine (diff, header counts, producer index).
type refreshedMsg struct {
	gen    uint64
	snap   *model.Snapshot
	events []model.Event
	sum    views.Summary
	byPID  map[int64]*model.Txn
	// pins, groups and hanging are the partitions and groups views' data.
	pins    []model.Pin
	groups  []model.BlockedGroup
	hanging map[string]bool
	err     error
}

// backoff is the wait before attempt n+1 after n consecutive failures.
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
	m.poll.busy, m.poll.busySince, m.poll.again = true, m.now, false
	gen, prev, admin, ctx, track, now := m.poll.gen, m.snap, m.o.Admin, m.ctx, m.pinTrack, m.o.Now
	return func() tea.Msg {
		next, err := admin.Refresh(ctx, prev)
		if err != nil || next == nil {
			if err == nil {
				err = errors.New("the cluster returned no snapshot")
			}
			return refreshedMsg{gen: gen, err: err}
		}
		track.Observe(next)
		pins := model.Pins(next, track, now())
		return refreshedMsg{gen: gen, snap: next, events: model.Diff(prev, next),
			sum: views.Summarize(next), byPID: model.ByProducerID(next),
			pins: pins, groups: model.BlockedGroups(pins), hanging: model.HangingIDs(next, pins)}
	}
}

// refreshed takes a reply in and schedules what comes next.
func (m *Model) refreshed(msg refreshedMsg) tea.Cmd {
	if msg.gen != m.poll.gen || !m.poll.busy {
		return nil
	}
	m.poll.busy = false
	var delay time.Duration
	if msg.err != nil {
		if errors.Is(msg.err, context.Canceled) && m.ctx.Err() != nil {
			return nil // quitting
		}
		m.poll.failures++
		m.poll.err = msg.err.Error()
		delay = backoff(m.o.Refresh, m.poll.failures)
		m.poll.retryAt = m.now.Add(delay)
	} else {
		m.poll.failures, m.poll.err = 0, ""
		m.poll.lastOK, m.poll.loaded = m.now, true
		m.apply(msg)
		delay = m.o.Refresh
	}
	if m.poll.again {
		return m.refresh()
	}
	m.poll.tick++
	return m.schedule(delay, tickMsg{id: m.poll.tick})
}

func (m *Model) ticked(msg tickMsg) tea.Cmd {
	if msg.id != m.poll.tick || m.poll.busy {
		return nil
	}
	return m.refresh()
}

// apply makes a new snapshot current: history, list rows, open detail and
// dialog all follow it.
func (m *Model) apply(msg refreshedMsg) {
	if m.snap == nil {
		m.hist.Baseline(msg.snap)
	} else {
		m.hist.Add(msg.events)
	}
	m.snap, m.sum, m.byPID = msg.snap, msg.sum, msg.byPID
	m.pins, m.groups, m.hangingIDs = msg.pins, msg.groups, msg.hanging
	m.pinSum = m.pinSummary()
	m.list.recompute(m)
	m.recomputePins()
	if m.dialog != nil {
		m.dialog.recheck(m)
	}
}

func (m *Model) conn() views.Conn {
	return views.Conn{
		Loaded: m.poll.loaded, LastOK: m.poll.lastOK, Err: m.poll.err, RetryAt: m.poll.retryAt,
		Busy: m.poll.busy, BusySince: m.poll.busySince, Refresh: m.o.Refresh,
	}
}

func defaultSchedule(d time.Duration, msg tea.Msg) tea.Cmd {
	return tea.Tick(d, func(time.Time) tea.Msg { return msg })
}
