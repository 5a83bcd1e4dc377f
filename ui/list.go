package ui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/txnscope/txnscope/model"
	"github.com/txnscope/txnscope/views"
)

const screenList screenID = "transactions"

// listScreen is the transaction list: the query, the rows it selects (indices
// into the snapshot, computed on refresh and on query changes, never per
// frame), and the cursor. The events pane below it belongs to the root
// (events.go), which gives the list what is left.
type listScreen struct {
	listBase
	e        *shared
	detail   *detailScreen
	query    model.Query
	selected string // the id under the cursor; the cursor follows it across refreshes
	// moved is set once the user moves the cursor. Until then the cursor stays on
	// the first row, the most urgent one: following whatever id happened to be
	// first at start-up would scroll the urgent rows away as the list fills.
	moved bool
}

func newListScreen(e *shared, detail *detailScreen) *listScreen {
	s := &listScreen{e: e, detail: detail}
	s.query.CheckpointInterval = e.o.CheckpointInterval
	s.input = input{prompt: "/", placeholder: "part of a transactional.id", limit: 256}
	return s
}

func (l *listScreen) reload() { l.recompute() }
func (l *listScreen) sync()   { l.win.clamp(l.e.host.listRows()) }

// recompute re-runs the query and puts the cursor back on the same id, at the
// same place on screen when possible.
func (l *listScreen) recompute() {
	snap := l.e.data.snap
	if snap == nil {
		return
	}
	w := &l.win
	screenPos := w.cursor - w.top
	rows, ok := l.e.data.listRows(l.query)
	if !ok {
		rows = model.Rows(snap, l.e.hist, l.query, l.e.now)
	}
	w.rows = rows
	// When the selected id is gone (expired, filtered out) the cursor stays
	// where it was on screen.
	if !l.moved {
		w.cursor, screenPos = 0, 0
	} else if l.selected != "" {
		for i, idx := range w.rows {
			if snap.Txns[idx].ID == l.selected {
				w.cursor = i
				break
			}
		}
	}
	w.top = w.cursor - screenPos
	w.clamp(l.e.host.listRows())
	l.remember()
}

// remember notes the id under the cursor.
func (l *listScreen) remember() {
	if t, ok := l.current(); ok {
		l.selected = t.ID
	}
}

func (l *listScreen) current() (model.Txn, bool) {
	snap, w := l.e.data.snap, &l.win
	if snap == nil || w.cursor < 0 || w.cursor >= len(w.rows) {
		return model.Txn{}, false
	}
	return snap.Txns[w.rows[w.cursor]], true
}

func (l *listScreen) update(msg tea.Msg) tea.Cmd {
	k := l.e.keys
	kp, ok := msg.(tea.KeyPressMsg)
	if l.handle(k, msg, l.e.host.listRows(), l.filtered, l.cursorMoved) || !ok {
		return nil
	}
	switch {
	case key.Matches(kp, k.Events):
		l.e.host.toggleEvents()
	case key.Matches(kp, k.Open):
		if t, ok := l.current(); ok {
			l.detail.open(t.ID, screenList)
		}
	case key.Matches(kp, k.Filter):
		l.startFilter(l.query.Text)
	case key.Matches(kp, k.StateFilter):
		l.query.Filter = l.query.Filter.Next()
		l.recompute()
	case key.Matches(kp, k.Sort):
		l.query.Sort = l.query.Sort.Next()
		l.recompute()
	case key.Matches(kp, k.Back):
		if l.query.Text != "" {
			l.query.Text = ""
			l.recompute()
		}
	case key.Matches(kp, k.Abort):
		if t, ok := l.current(); ok {
			l.e.host.forceTerminate(t)
		}
	case key.Matches(kp, k.Commit):
		if t, ok := l.current(); ok {
			l.e.host.commit(t)
		}
	}
	return nil
}

func (l *listScreen) filtered(text string) {
	l.query.Text = text
	l.recompute()
}

func (l *listScreen) cursorMoved() {
	l.moved = true
	l.remember()
}

func (l *listScreen) keys() []key.Binding {
	k := l.e.keys
	if l.typing {
		return k.filterShort()
	}
	return []key.Binding{short(k.Open, "open"), short(k.Abort, "abort"), short(k.Filter, "filter"),
		short(k.StateFilter, "show"), k.Sort, k.Events, short(k.NextView, "jobs"), k.Help, k.Quit}
}

func (l *listScreen) view(w, h int) string {
	return views.List(l.data(), w, h, l.e.st)
}

func (l *listScreen) data() views.ListData {
	e := l.e
	d := views.ListData{
		Snap: e.data.snap, Hist: e.hist, Rows: l.win.rows, Cursor: l.win.cursor, Top: l.win.top,
		Now: e.now, Query: l.query, PIDWidth: e.data.sum.PIDWidth, Hanging: e.data.hanging,
	}
	d.Input = l.filterView(e.w/2, e.st)
	switch {
	case e.data.snap == nil && e.host.pollErr() != "":
		d.Empty = "cannot reach the cluster yet; retrying"
	case e.data.snap == nil:
		d.Empty = "connecting to " + e.o.Bootstrap + "…"
	case len(e.data.snap.Txns) == 0:
		d.Empty = "no transactional ids on this cluster"
	default:
		d.Empty = "no ids match (show " + l.query.Filter.String() + ")"
		if l.query.Text != "" {
			d.Empty = "no ids match /" + l.query.Text + " (show " + l.query.Filter.String() + "; esc clears)"
		}
	}
	return d
}
