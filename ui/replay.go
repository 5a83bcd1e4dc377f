package ui

import (
	"context"
	"errors"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/txnscope/txnscope/model"
	"github.com/txnscope/txnscope/views"
)

// replayLimit is how many of the log's events a replay keeps, the newest:
// at 500,000 ids the log holds millions, and the pane shows a screenful.
const replayLimit = 5000

// replayState is the events pane's other mode (h): what the coordinators' log
// still holds, read through once, instead of the session's events. One
// replay runs at a time; a newer one, going back to the session's events or
// quitting cancels it and drops its result (gen).
type replayState struct {
	on      bool // the pane shows the replay
	gen     uint64
	running bool
	cancel  context.CancelFunc // the running replay's
	err     string
	// got is the answer: events oldest first; every transition since
	// Complete is there; before it, back to Oldest, each id's last only
	// (model.Replay).
	got model.Replayed
}

// replayedMsg is a Replay's answer.
type replayedMsg struct {
	gen uint64
	got model.Replayed
	err error
}

// replayShown reports that the replay is what the pane shows on screen.
func (m *Model) replayShown() bool {
	return m.replay.on && m.showEvents && m.cur == screenList
}

// toggleReplay is h: the replay, read afresh, in the events pane under the
// transaction list; or, when it shows already, back to the session's events.
func (m *Model) toggleReplay() tea.Cmd {
	if m.replayShown() {
		m.leaveReplay()
		return nil
	}
	m.show(screenList)
	m.showEvents = true
	return m.startReplay()
}

// rereplay is r while the replay shows: the log read again, unless a read
// is running already.
func (m *Model) rereplay() tea.Cmd {
	if !m.replayShown() || m.replay.running {
		return nil
	}
	return m.startReplay()
}

// leaveReplay goes back to the session's events, dropping the replay (5,000
// events are not worth keeping) and cancelling it if it runs.
func (m *Model) leaveReplay() {
	if m.replay.cancel != nil {
		m.replay.cancel()
	}
	m.replay = replayState{gen: m.replay.gen + 1}
	m.evScroll = eventsScroll{}
}

func (m *Model) startReplay() tea.Cmd {
	m.leaveReplay()
	ctx, cancel := context.WithCancel(m.ctx)
	m.replay.on, m.replay.running, m.replay.cancel = true, true, cancel
	gen, admin := m.replay.gen, m.o.Admin
	return func() tea.Msg {
		got, err := admin.Replay(ctx, time.Time{}, replayLimit)
		return replayedMsg{gen: gen, got: got, err: err}
	}
}

// replayed takes an answer in, unless a newer replay, the session's events or
// a quit replaced the one that asked.
func (m *Model) replayed(msg replayedMsg) tea.Cmd {
	if msg.gen != m.replay.gen || !m.replay.running {
		return nil
	}
	m.replay.cancel()
	m.replay.running, m.replay.cancel = false, nil
	switch {
	case msg.err != nil && errors.Is(msg.err, context.Canceled) && m.ctx.Err() != nil:
		m.leaveReplay() // quitting
	case msg.err != nil:
		m.replay.err, _, _ = strings.Cut(msg.err.Error(), "\n")
	default:
		m.replay.got = msg.got
	}
	return nil
}

// replayData is the pane's data in replay mode: n events that fit, after
// the newest skip.
func (m *Model) replayData(skip, n int) views.EventsData {
	r := m.replay
	return views.EventsData{Events: views.ReplayNewest(r.got.Events, skip, n), Skipped: skip, Total: len(r.got.Events), Loc: m.loc,
		Replay: &views.ReplayData{Running: r.running, Err: r.err, Complete: r.got.Complete, Oldest: r.got.Oldest,
			Unread: r.got.Unread, Limit: replayLimit, Now: m.now}}
}
