package ui

import (
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/txnscope/txnscope/model"
	"github.com/txnscope/txnscope/views"
)

// screen is one view of the body, between the header and the footer. The
// root model holds one of each (New lists them) and routes to the one on
// view; a screen owns its own state (cursor, filter, what it was opened on).
type screen interface {
	// update takes the keys the root does not handle itself, and, while the
	// screen grabs input, every message (pastes too).
	update(msg tea.Msg) tea.Cmd
	// view draws the screen in exactly w×h; it changes nothing.
	view(w, h int) string
	// keys are the footer's bindings for the screen as it is now.
	keys() []key.Binding
	// reload follows a refresh: rows recomputed from the new cluster data,
	// cursors kept on what they were on. Every screen reloads, on view or not.
	reload()
	// sync runs after every message: the cursor kept in its window (the
	// header can grow), anything drawn from the clock rebuilt.
	sync()
	// grabs reports that the screen takes every key itself (a filter being
	// typed), so that q or t are text, not commands.
	grabs() bool
}

// screenID names a screen in the root's table; each screen's file declares its own.
type screenID string

// homed is a screen opened from a top-level view (a detail): tab moves on
// from that view.
type homed interface{ home() screenID }

// shared is what every screen reads: set up by New, kept current by the root,
// never written by a screen. host is what a screen may ask of the root.
type shared struct {
	o    Options
	keys keyMap
	st   views.Styles
	loc  *time.Location
	now  time.Time
	w, h int
	// data is the latest refresh, swapped whole (a zero cluster until the
	// first one arrives).
	data cluster
	hist *model.History
	host host
}

// host is the root model as screens see it (*Model implements it).
type host interface {
	// listRows is how many rows a list-shaped screen shows (the events pane
	// takes its share under the transaction list).
	listRows() int
	bodyHeight() int
	current() screenID
	show(id screenID)
	setStatus(k statusKind, text string)
	toggleEvents()
	// pollErr is why the last request to the cluster failed ("" if it did not).
	pollErr() string
	// The abort dialog, over whatever screen is on view.
	forceTerminate(t model.Txn)
	abortPartition(t model.Txn, p model.TxnPartition)
	forceTerminateAll(of string, ids []string)
	commit(t model.Txn)
	resolveJob(j *model.Job)
}

type statusKind int

const (
	statusInfo statusKind = iota
	statusOK
	statusError
)

func (m *Model) current() screenID { return m.cur }
func (m *Model) pollErr() string   { return m.poll.err }
func (m *Model) toggleEvents()     { m.showEvents, m.evScroll = !m.showEvents, eventsScroll{} }

func (m *Model) show(id screenID) {
	if _, ok := m.screens[id]; ok {
		m.cur = id
	}
}

// nextView cycles the top-level views: transactions → jobs → partitions → groups.
// From a detail it moves on from the view the detail was opened from.
func (m *Model) nextView() {
	top := m.cur
	if h, ok := m.screens[top].(homed); ok {
		top = h.home()
	}
	switch top {
	case screenPartitions:
		m.show(screenGroups)
	case screenGroups:
		m.show(screenList)
	case screenJobs:
		m.show(screenPartitions)
	default:
		m.show(screenJobs)
	}
}

func (m *Model) setStatus(k statusKind, text string) {
	m.status, m.statusKind = views.Clock(m.now, m.loc)+" "+text, k
}

// bodyHeight is what the header and the footer leave.
func (m *Model) bodyHeight() int {
	return max(m.h-views.HeaderHeight(m.headerData())-1, 0)
}

// listRows is how many rows of the list are visible.
func (m *Model) listRows() int {
	body := m.bodyHeight()
	return views.ListRows(body - m.eventsHeight(body))
}
