package ui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/txnscope/txnscope/model"
	"github.com/txnscope/txnscope/views"
)

// detailState is the detail screen of one transactional.id.
type detailState struct {
	id     string
	from   screen    // where esc goes back to
	last   model.Txn // shown when the coordinator stops listing the id
	cursor int       // partition row
	top    int       // first line of the scrolling part
	data   views.DetailData
}

func (m *Model) openDetail(id string) {
	t, _ := m.snap.Txn(id)
	m.detail = detailState{id: id, last: t, from: m.screen}
	m.screen = screenDetail
	m.syncDetail()
}

// detailData gathers what the detail shows from the current snapshot. It runs
// once per Update while the detail is open, not per frame.
func (m *Model) detailData() views.DetailData {
	ds := &m.detail
	t, found := m.snap.Txn(ds.id)
	if found {
		ds.last = t
	} else {
		t = ds.last
	}
	st := m.hist.Stats(t.ID)
	d := views.DetailData{
		Txn: t, Gone: !found, Stats: st, Now: m.now, Loc: m.loc, ReadOnly: m.o.ReadOnly,
		Problems: model.Problems(t, st, m.snap, m.list.query, m.now),
	}
	d.Parts = model.TxnPartitions(t, m.snap, m.byPID)
	d.Cursor = min(max(ds.cursor, 0), max(len(d.Parts)-1, 0))
	d.Top = ds.top
	return d
}

// syncDetail rebuilds the detail's data after any message, keeping the
// cursor row in view (a refresh can move it).
func (m *Model) syncDetail() {
	if m.screen != screenDetail || m.snap == nil {
		return
	}
	ds := &m.detail
	ds.data = m.detailData()
	ds.cursor = ds.data.Cursor
	m.scrollDetail(0, false)
}

// scrollDetail moves the window by delta lines, then keeps it inside the
// document and, unless the operator scrolled past it on purpose, the cursor
// row inside the window.
func (m *Model) scrollDetail(delta int, free bool) {
	ds := &m.detail
	_, body, _ := m.layout()
	if body <= 0 || m.w <= 0 {
		return
	}
	rows, lines, visible := views.DetailLayout(ds.data, m.w, body)
	top := ds.top + delta
	if len(rows) > 0 && !free {
		cl := rows[ds.cursor]
		if cl < top {
			top = cl
		}
		if cl >= top+visible {
			top = cl - visible + 1
		}
	}
	ds.top = min(max(top, 0), max(lines-visible, 0))
	ds.data.Top = ds.top
}

func (m *Model) updateDetail(msg tea.KeyPressMsg) tea.Cmd {
	ds := &m.detail
	k := m.keys
	_, body, _ := m.layout()
	rows := len(ds.data.Parts)
	page := max(body/2, 1)
	// move steps the cursor; past either end (or with no rows) it scrolls,
	// which is how the fields above and the events below come into view.
	move := func(n int) {
		to := ds.cursor + n
		switch {
		case rows == 0:
			m.scrollDetail(n, true)
		case to < 0 && ds.cursor == 0, to >= rows && ds.cursor == rows-1:
			m.scrollDetail(n, true)
		default:
			ds.cursor = min(max(to, 0), rows-1)
			ds.data.Cursor = ds.cursor
			m.scrollDetail(0, false)
		}
	}
	switch {
	case key.Matches(msg, k.Back):
		m.screen = ds.from
	case key.Matches(msg, k.Up):
		move(-1)
	case key.Matches(msg, k.Down):
		move(1)
	case key.Matches(msg, k.PageUp):
		move(-page)
	case key.Matches(msg, k.PageDown):
		move(page)
	case key.Matches(msg, k.Home):
		ds.cursor, ds.top = 0, 0
	case key.Matches(msg, k.End):
		ds.cursor = max(rows-1, 0)
		ds.data.Cursor = ds.cursor
		m.scrollDetail(1<<20, true)
		m.scrollDetail(0, false)
	case key.Matches(msg, k.Abort):
		m.openForceTerminate(ds.data.Txn)
	case key.Matches(msg, k.AbortPartition):
		if rows == 0 {
			m.setStatus(statusInfo, "no partition selected")
			return nil
		}
		m.openAbortPartition(ds.data.Txn, ds.data.Parts[ds.data.Cursor])
	}
	return nil
}
