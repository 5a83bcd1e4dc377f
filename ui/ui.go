// Package ui is txnscope's terminal UI: the root model holds the cluster data
// and routes keys to the screen on view (one file each, see screen.go); it
// runs the commands that talk to the cluster through Admin. Drawing is left
// to package views.
package ui

import (
	"context"
	"sync"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/txnscope/txnscope/model"
)

// Model is the root of the UI; *Model implements tea.Model. What it shares
// with the screens (options, keys, styles, clock, size, cluster data) is in
// shared, which every screen holds a pointer to.
type Model struct {
	*shared
	isDark   bool
	profile  colorprofile.Profile
	schedule func(time.Duration, tea.Msg) tea.Cmd
	ctx      context.Context
	cancel   context.CancelFunc
	poll     poller
	batch    int // ids per describe batch at least, and a load in at most this many (describe.go)
	batches  int
	pinTrack *model.PinTracker

	screens    map[screenID]screen
	cur        screenID
	showHelp   bool // the help covers the body; the screen under it stays
	helpTop    int  // the help's first line on view, when it does not fit
	showEvents bool // the events pane under the transaction list
	evScroll   eventsScroll
	dialog     *actionDialog // an action to confirm, on its way or answered (action.go)
	dialogs    int           // dialogs opened so far, to match replies

	status     string
	statusKind statusKind
	// cmd is the command line (:) while it is open; switchedTo the
	// context :ctx left for.
	cmd            *cmdline
	switchedTo     string
	quitAfterAbort bool
	// running counts the aborts whose result is not in the audit log yet.
	running sync.WaitGroup

	// replay is what the events pane shows instead of the session's events (h).
	replay replayState
}

// New builds the UI. Nothing talks to the cluster before the program calls Init.
func New(o Options) *Model {
	o = o.withDefaults()
	ctx, cancel := context.WithCancel(o.Context)
	e := &shared{o: o, keys: newKeyMap(o.ReadOnly), loc: time.Local, now: o.Now(), hist: model.NewHistory(historySize)}
	m := &Model{shared: e, isDark: true, profile: colorprofile.TrueColor, schedule: scheduleUntil(ctx), ctx: ctx,
		cancel: cancel, batch: describeBatch, batches: loadBatches, pinTrack: model.NewPinTracker(), cur: screenList}
	e.host = m
	// The screens, one line each (those that others open are built first).
	detail, partDetail := &detailScreen{e: e}, &partDetailScreen{e: e}
	partitions := newPartitionsScreen(e, detail, partDetail)
	list := newListScreen(e, detail)
	jobs := newJobsScreen(e, list)
	m.screens = map[screenID]screen{
		screenList:       list,
		screenJobs:       jobs,
		screenJob:        jobs.sub,
		screenDetail:     detail,
		screenPartitions: partitions,
		screenPartDetail: partDetail,
		screenGroups:     &groupsScreen{e: e, partitions: partitions},
	}
	m.restyle()
	if o.Status != "" {
		m.setStatus(map[bool]statusKind{true: statusError, false: statusInfo}[o.StatusError], o.Status)
	}
	return m
}

// Update routes one message, then lets every screen catch up with it.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	m.now = m.o.Now()
	cmd := m.update(msg)
	for _, s := range m.screens {
		s.sync()
	}
	return m, cmd
}

func (m *Model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
	case tea.BackgroundColorMsg:
		m.isDark = msg.IsDark()
		m.restyle()
	case tea.ColorProfileMsg:
		m.profile = msg.Profile
		m.restyle()
	case tickMsg:
		return m.ticked(msg)
	case clockMsg:
		return m.schedule(time.Second, clockMsg{})
	case refreshedMsg:
		return m.refreshed(msg)
	case describedMsg:
		return m.described(msg)
	case sentMsg:
		return m.sent(msg)
	case replayedMsg:
		return m.replayed(msg)
	case logLiveMsg:
		return m.refresh()
	case tea.KeyPressMsg:
		return m.key(msg)
	default:
		// Anything else (pastes, cursor messages) belongs to the focused
		// input, when it can be seen.
		switch {
		case !m.fits():
		case m.dialog != nil:
			return m.updateDialog(msg)
		case m.cmd != nil:
			return m.updateCmdline(msg)
		case m.screens[m.cur].grabs():
			return m.screens[m.cur].update(msg)
		}
	}
	return nil
}

func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	k, s := m.keys, m.screens[m.cur]
	// While the terminal is too small nothing of the screens shows, so no key
	// may act on them: not a, not the abort typed into a dialog nobody sees,
	// not enter sending it. q quits, as ctrl+c does, since no filter or
	// dialog input can be seen taking it as text.
	if key.Matches(msg, k.ForceQuit) || (!m.fits() && key.Matches(msg, k.Quit)) {
		return m.forceQuit()
	}
	switch {
	case !m.fits():
		return nil
	case m.dialog != nil:
		return m.updateDialog(msg)
	case m.cmd != nil:
		return m.updateCmdline(msg)
	case s.grabs():
		return s.update(msg)
	case m.showHelp:
		return m.updateHelp(msg)
	case key.Matches(msg, k.Quit):
		return m.quit()
	case key.Matches(msg, k.Help):
		m.showHelp = true
	case key.Matches(msg, k.Command):
		m.openCmdline()
	case key.Matches(msg, k.Refresh):
		return tea.Batch(m.refresh(), m.rereplay())
	case key.Matches(msg, k.Replay):
		return m.toggleReplay()
	case key.Matches(msg, k.Back) && m.replayShown():
		m.leaveReplay()
	case key.Matches(msg, k.EventsOlder) && m.eventsHeight(m.bodyHeight()) > 0:
		m.pageEvents(1)
	case key.Matches(msg, k.EventsNewer) && m.eventsHeight(m.bodyHeight()) > 0:
		m.pageEvents(-1)
	case key.Matches(msg, k.NextView):
		m.nextView()
	case key.Matches(msg, k.Txns):
		m.show(screenList)
	case key.Matches(msg, k.Jobs):
		m.show(screenJobs)
	case key.Matches(msg, k.Partitions):
		m.show(screenPartitions)
	case key.Matches(msg, k.Groups):
		m.show(screenGroups)
	default:
		return s.update(msg)
	}
	return nil
}
