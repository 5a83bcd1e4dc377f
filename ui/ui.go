// Package ui is txnscope's terminal UI: the root model owns the state, routes
// keys to the screen that has focus, and runs the commands that talk to the
// cluster through Admin. Drawing is left to package views.
package ui

import (
	"context"
	"fmt"
	"sync"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/txnscope/txnscope/internal/audit"
	"github.com/txnscope/txnscope/internal/escape"
	"github.com/txnscope/txnscope/model"
	"github.com/txnscope/txnscope/views"
)

// Options wire the UI to a cluster.
type Options struct {
	Admin              Admin
	Bootstrap          string        // shown in the header and the audit log
	Refresh            time.Duration // poll interval (default 2s)
	ReadOnly           bool
	Audit              *audit.Log       // nil when read-only
	CheckpointInterval time.Duration    // 0 = unknown; passed to model.Query
	Now                func() time.Time // nil = time.Now; tests pin it
	// Warning stays in the header for the whole session, e.g. that the
	// brokers' TLS certificates are not verified.
	Warning string
	// Context is the program's (nil: none): when it ends (a signal), an
	// abort in flight is abandoned and recorded as an unknown outcome.
	Context context.Context
}

// The layout needs this much room; below it a message says so.
const (
	minWidth  = 80
	minHeight = 20
)

// historySize is how many events the events pane can go back.
const historySize = 2000

type screen int

const (
	screenList screen = iota
	screenDetail
	screenPins      // the partitions view
	screenGroups    // the consumer groups view
	screenPinDetail // a pinned partition no transactional id owns
)

type statusKind int

const (
	statusInfo statusKind = iota
	statusOK
	statusError
)

// Model is the root of the UI; *Model implements tea.Model.
type Model struct {
	o        Options
	keys     keyMap
	st       views.Styles
	isDark   bool
	profile  colorprofile.Profile
	loc      *time.Location
	schedule func(time.Duration, tea.Msg) tea.Cmd

	ctx    context.Context
	cancel context.CancelFunc

	w, h int
	now  time.Time

	snap  *model.Snapshot
	hist  *model.History
	sum   views.Summary
	byPID map[int64]*model.Txn
	poll  poller

	// pinTrack is touched only by the refresh command, and refreshes never
	// overlap (poller), so it needs no lock.
	pinTrack   *model.PinTracker
	pins       []model.Pin
	groups     []model.BlockedGroup
	hangingIDs map[string]bool
	pinSum     views.PinSummary

	screen     screen
	showHelp   bool
	showEvents bool
	list       listState
	detail     detailState
	pinView    pinsState
	groupView  groupsState
	pinDetail  pinDetailState
	dialog     *abortDialog
	dialogs    int // dialogs opened so far, to match replies

	status         string
	statusKind     statusKind
	quitAfterAbort bool
	// running counts the aborts whose result is not in the audit log yet.
	running sync.WaitGroup
}

// New builds the UI. Nothing talks to the cluster before the program calls Init.
func New(o Options) *Model {
	if o.Refresh <= 0 {
		o.Refresh = 2 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.ReadOnly {
		o.Audit = nil
	}
	parent := o.Context
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithCancel(parent)
	m := &Model{
		o: o, keys: newKeyMap(o.ReadOnly), isDark: true, profile: colorprofile.TrueColor, loc: time.Local,
		schedule: scheduleUntil(ctx), ctx: ctx, cancel: cancel, hist: model.NewHistory(historySize), now: o.Now(),
		pinTrack: model.NewPinTracker(),
	}
	m.list.query.CheckpointInterval = o.CheckpointInterval
	m.list.input = newFilterInput()
	m.pinView.input = newPinFilterInput()
	m.restyle()
	return m
}

// Init starts polling, the clock that keeps ages current, and asks the
// terminal for its background colour.
func (m *Model) Init() tea.Cmd {
	return tea.Batch(m.refresh(), m.schedule(time.Second, clockMsg{}), tea.RequestBackgroundColor)
}

// Update routes one message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	m.now = m.o.Now()
	cmd := m.update(msg)
	m.sync()
	return m, cmd
}

func (m *Model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
		return nil
	case tea.BackgroundColorMsg:
		m.isDark = msg.IsDark()
		m.restyle()
		return nil
	case tea.ColorProfileMsg:
		m.profile = msg.Profile
		m.restyle()
		return nil
	case tickMsg:
		return m.ticked(msg)
	case clockMsg:
		return m.schedule(time.Second, clockMsg{})
	case refreshedMsg:
		return m.refreshed(msg)
	case executedMsg:
		return m.executed(msg)
	case tea.KeyPressMsg:
		return m.key(msg)
	}
	// Anything else (pastes, cursor messages) belongs to the focused input,
	// when it can be seen.
	switch {
	case !m.fits():
		return nil
	case m.dialog != nil:
		return m.updateDialog(msg)
	case m.list.typing:
		return m.updateFilter(msg)
	case m.pinView.typing:
		return m.updatePinFilter(msg)
	}
	return nil
}

func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	k := m.keys
	// While the terminal is too small nothing of the screens shows, so no key
	// may act on them: not a, not the abort typed into a dialog nobody sees,
	// not enter sending it. q quits, as ctrl+c does, since no filter or
	// dialog input can be seen taking it as text.
	if key.Matches(msg, k.ForceQuit) || (!m.fits() && key.Matches(msg, k.Quit)) {
		if m.dialog != nil && m.dialog.phase == views.DialogSending && !m.quitAfterAbort {
			m.quitAfterAbort = true
			m.setStatus(statusError, "an abort is in flight: quitting once its answer is logged (ctrl+c again quits now)")
			return nil
		}
		return m.quit()
	}
	if !m.fits() {
		return nil
	}
	switch {
	case m.dialog != nil:
		return m.updateDialog(msg)
	case m.list.typing:
		return m.updateFilter(msg)
	case m.pinView.typing:
		return m.updatePinFilter(msg)
	case m.showHelp:
		switch {
		case key.Matches(msg, k.Help, k.Back):
			m.showHelp = false
		case key.Matches(msg, k.Quit):
			return m.quit()
		}
		return nil
	}
	switch {
	case key.Matches(msg, k.Quit):
		return m.quit()
	case key.Matches(msg, k.Help):
		m.showHelp = true
		return nil
	case key.Matches(msg, k.Refresh):
		return m.refresh()
	case key.Matches(msg, k.NextView):
		m.nextView()
		return nil
	case key.Matches(msg, k.Txns):
		m.screen = screenList
		return nil
	case key.Matches(msg, k.Partitions):
		m.screen = screenPins
		return nil
	case key.Matches(msg, k.Groups):
		m.screen = screenGroups
		return nil
	}
	switch m.screen {
	case screenDetail:
		return m.updateDetail(msg)
	case screenPins:
		return m.updatePins(msg)
	case screenGroups:
		return m.updateGroups(msg)
	case screenPinDetail:
		return m.updatePinDetail(msg)
	}
	if key.Matches(msg, k.Events) {
		m.showEvents = !m.showEvents
		return nil
	}
	return m.updateList(msg)
}

// nextView cycles the top-level views: transactions → partitions → groups.
// From a detail it moves on from the view the detail was opened from.
func (m *Model) nextView() {
	top := m.screen
	switch top {
	case screenDetail:
		top = m.detail.from
	case screenPinDetail:
		top = screenPins
	}
	switch top {
	case screenPins:
		m.screen = screenGroups
	case screenGroups:
		m.screen = screenList
	default:
		m.screen = screenPins
	}
}

// Wait blocks until every abort sent has its result in the audit log, or
// timeout passes; it reports whether they all did. The program calls it after
// the UI ended, so that a signal cannot cut a result line short.
func (m *Model) Wait(timeout time.Duration) bool {
	done := make(chan struct{})
	go func() {
		m.running.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(timeout):
		return false
	}
}

// quit stops everything in flight and leaves.
func (m *Model) quit() tea.Cmd {
	m.cancel()
	return tea.Quit
}

// sync keeps derived state in step after every message: the list cursor in
// its window (the header can grow), the detail rebuilt and scrolled.
func (m *Model) sync() {
	m.list.clamp(m.listRows())
	m.pinView.win.clamp(m.listRows())
	m.groupView.win.clamp(m.listRows())
	m.syncDetail()
	m.syncPinDetail()
}

func (m *Model) restyle() {
	m.st = newStyles(m.isDark, m.profile)
}

func (m *Model) setStatus(k statusKind, text string) {
	m.status, m.statusKind = views.Clock(m.now, m.loc)+" "+text, k
}

func (m *Model) headerData() views.HeaderData {
	return views.HeaderData{Bootstrap: m.o.Bootstrap, ReadOnly: m.o.ReadOnly, Sum: m.sum, Conn: m.conn(), Now: m.now, Pins: m.pinSum, Warning: m.o.Warning}
}

// layout splits the height into header, body and footer.
func (m *Model) layout() (header, body, footer int) {
	header = views.HeaderHeight(m.headerData())
	footer = 1
	return header, max(m.h-header-footer, 0), footer
}

// listRows is how many rows of the list are visible.
func (m *Model) listRows() int {
	_, body, _ := m.layout()
	return views.ListRows(body - m.eventsHeight(body))
}

// View draws the whole screen, exactly the terminal's size.
func (m *Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.WindowTitle = "txnscope · " + m.o.Bootstrap
	return v
}

// fits reports whether the screens are on show: the terminal's size is known
// and holds the layout. Keys act only then (see key).
func (m *Model) fits() bool { return m.w >= minWidth && m.h >= minHeight }

func (m *Model) render() string {
	w, h, st := m.w, m.h, m.st
	if w <= 0 || h <= 0 {
		return ""
	}
	if !m.fits() {
		return views.TooSmall(w, h, minWidth, minHeight, st)
	}
	_, bodyH, _ := m.layout()
	var body string
	keys := m.keys.listShort()
	switch {
	case m.showHelp:
		body = views.Help(m.keys.groups(), m.helpNotes(), w, bodyH, st)
		keys = m.keys.helpShort()
	case m.screen == screenDetail && m.snap != nil:
		body = views.Detail(m.detail.data, w, bodyH, st)
		keys = m.keys.detailShort()
	case m.screen == screenPins:
		body = views.Pins(m.pinsData(), w, bodyH, st)
		keys = m.keys.pinsShort()
		if m.pinView.typing {
			keys = m.keys.filterShort()
		}
	case m.screen == screenGroups:
		body = views.Groups(m.groupsData(), w, bodyH, st)
		keys = m.keys.groupsShort()
	case m.screen == screenPinDetail:
		body = views.PinDetail(m.pinDetail.data, w, bodyH, st)
		keys = m.keys.pinDetailShort()
	default:
		eh := m.eventsHeight(bodyH)
		body = views.List(m.listData(), w, bodyH-eh, st)
		if eh > 0 {
			body += "\n" + views.Events(m.eventsData(eh), w, eh, st)
		}
		if m.list.typing {
			keys = m.keys.filterShort()
		}
	}
	if m.dialog != nil {
		body = views.Overlay(body, views.Dialog(m.dialogData(), w, bodyH, st), w, bodyH, st)
		keys = m.keys.dialogShort(m.dialog.phase)
	}
	// Status texts quote ids, topics and the brokers' errors as they came;
	// they are written out here, once, on their way to the screen.
	status := escape.Text(m.status)
	switch m.statusKind {
	case statusOK:
		status = st.Good.Render(status)
	case statusError:
		status = st.Error.Render(status)
	default:
		status = st.Text.Render(status)
	}
	return views.Stack(views.Header(m.headerData(), w, st), body, views.Footer(status, keys, w, st))
}

func (m *Model) helpNotes() []string {
	notes := []string{
		"Sort: " + model.SortRatio.String() + " (default, most urgent first) → age → id → state.",
		"Rows marked ! are past half their transaction.timeout.ms, !! past 90%; ? could not be described; " +
			"H! holds a hanging transaction on some partition.",
		"Partitions (p): every partition whose last stable offset is below its high watermark, pinned longest first. " +
			"H! hanging (no coordinator will end it: abort it on the partition), !! consumer groups stuck at its LSO, " +
			"! no open transaction holds it. enter opens the transaction holding it.",
		fmt.Sprintf("Groups (c): consumer groups whose committed offset is at a pinned LSO (or up to %d offsets below); "+
			"enter shows the partitions blocking one.", model.StuckSlack),
	}
	if m.o.ReadOnly {
		notes = append(notes, "Read-only: the abort keys are not available in this session.")
	} else {
		notes = append(notes, "Aborts open a dialog that shows the transaction's start time: type abort and press enter to send; esc cancels. "+
			"Just before sending, the target is re-read and the abort refused if it is not the very transaction shown; "+
			"every request is written to the audit log before it goes out.")
	}
	return notes
}
