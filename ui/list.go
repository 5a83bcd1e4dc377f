package ui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/txnscope/txnscope/model"
	"github.com/txnscope/txnscope/views"
)

// listState is the transaction list: the query, the rows it selects (indices
// into the snapshot, computed on refresh and on query changes, never per
// frame), and the cursor.
type listState struct {
	query    model.Query
	rows     []int
	cursor   int
	top      int
	selected string // the id under the cursor; the cursor follows it across refreshes
	// moved is set once the user moves the cursor. Until then the cursor stays on
	// the first row, the most urgent one: following whatever id happened to be
	// first at start-up would scroll the urgent rows away as the list fills.
	moved  bool
	input  input
	typing bool
}

func newFilterInput() input {
	return input{prompt: "/", placeholder: "part of a transactional.id", limit: 256}
}

// recompute re-runs the query and puts the cursor back on the same id, at the
// same place on screen when possible.
func (l *listState) recompute(m *Model) {
	if m.snap == nil {
		return
	}
	screenPos := l.cursor - l.top
	l.rows = model.Rows(m.snap, m.hist, l.query, m.now)
	// When the selected id is gone (expired, filtered out) the cursor stays
	// where it was on screen.
	if !l.moved {
		l.cursor, screenPos = 0, 0
	} else if l.selected != "" {
		for i, idx := range l.rows {
			if m.snap.Txns[idx].ID == l.selected {
				l.cursor = i
				break
			}
		}
	}
	l.top = l.cursor - screenPos
	l.clamp(m.listRows())
	l.remember(m)
}

// remember notes the id under the cursor.
func (l *listState) remember(m *Model) {
	if t, ok := l.current(m); ok {
		l.selected = t.ID
	}
}

func (l *listState) current(m *Model) (model.Txn, bool) {
	if m.snap == nil || l.cursor < 0 || l.cursor >= len(l.rows) {
		return model.Txn{}, false
	}
	return m.snap.Txns[l.rows[l.cursor]], true
}

// clamp keeps cursor and window inside the rows, the cursor inside the window.
func (l *listState) clamp(visible int) {
	n := len(l.rows)
	l.cursor = min(max(l.cursor, 0), max(n-1, 0))
	if visible <= 0 {
		l.top = l.cursor
		return
	}
	if l.cursor < l.top {
		l.top = l.cursor
	}
	if l.cursor >= l.top+visible {
		l.top = l.cursor - visible + 1
	}
	l.top = min(max(l.top, 0), max(n-visible, 0))
}

// move applies a cursor key; it reports whether msg was one.
func (l *listState) move(k keyMap, msg tea.KeyPressMsg, visible int) bool {
	page := max(visible-1, 1)
	switch {
	case key.Matches(msg, k.Up):
		l.cursor--
	case key.Matches(msg, k.Down):
		l.cursor++
	case key.Matches(msg, k.PageUp):
		l.cursor -= page
		l.top -= page
	case key.Matches(msg, k.PageDown):
		l.cursor += page
		l.top += page
	case key.Matches(msg, k.Home):
		l.cursor = 0
	case key.Matches(msg, k.End):
		l.cursor = len(l.rows) - 1
	default:
		return false
	}
	l.moved = true
	l.clamp(visible)
	return true
}

func (m *Model) updateList(msg tea.KeyPressMsg) tea.Cmd {
	l := &m.list
	k := m.keys
	if l.move(k, msg, m.listRows()) {
		l.remember(m)
		return nil
	}
	switch {
	case key.Matches(msg, k.Open):
		if t, ok := l.current(m); ok {
			m.openDetail(t.ID)
		}
	case key.Matches(msg, k.Filter):
		l.typing = true
		l.input.SetValue(l.query.Text)
		l.input.Focus()
	case key.Matches(msg, k.StateFilter):
		l.query.Filter = l.query.Filter.Next()
		l.recompute(m)
	case key.Matches(msg, k.Sort):
		l.query.Sort = l.query.Sort.Next()
		l.recompute(m)
	case key.Matches(msg, k.Back):
		if l.query.Text != "" {
			l.query.Text = ""
			l.recompute(m)
		}
	case key.Matches(msg, k.Abort):
		if t, ok := l.current(m); ok {
			m.openForceTerminate(t)
		}
	}
	return nil
}

// updateFilter handles keys while the filter is being typed: enter applies,
// esc clears, everything else is text (so q does not quit here).
func (m *Model) updateFilter(msg tea.Msg) tea.Cmd {
	l := &m.list
	if kp, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(kp, m.keys.Apply):
			l.typing = false
			l.input.Blur()
			l.query.Text = strings.TrimSpace(l.input.Value())
			l.recompute(m)
			return nil
		case key.Matches(kp, m.keys.Clear):
			l.typing = false
			l.input.Blur()
			l.input.SetValue("")
			l.query.Text = ""
			l.recompute(m)
			return nil
		}
	}
	l.input.Update(msg)
	return nil
}

func (m *Model) listData() views.ListData {
	d := views.ListData{
		Snap: m.snap, Hist: m.hist, Rows: m.list.rows, Cursor: m.list.cursor, Top: m.list.top,
		Now: m.now, Query: m.list.query, PIDWidth: m.sum.PIDWidth, Hanging: m.hangingIDs,
	}
	if m.list.typing {
		d.Input = m.list.input.View(m.w/2, m.st)
	}
	switch {
	case m.snap == nil && m.poll.err != "":
		d.Empty = "cannot reach the cluster yet; retrying"
	case m.snap == nil:
		d.Empty = "connecting to " + m.o.Bootstrap + "…"
	case len(m.snap.Txns) == 0:
		d.Empty = "no transactional ids on this cluster"
	default:
		d.Empty = "no ids match (show " + m.list.query.Filter.String() + ")"
		if m.list.query.Text != "" {
			d.Empty = "no ids match /" + m.list.query.Text + " (show " + m.list.query.Filter.String() + "; esc clears)"
		}
	}
	return d
}
