package ui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/txnscope/txnscope/model"
	"github.com/txnscope/txnscope/views"
)

const screenDetail screenID = "detail"

// detailScreen is the detail of one transactional.id.
type detailScreen struct {
	e      *shared
	id     string
	from   screenID  // where esc goes back to
	last   model.Txn // shown when the coordinator stops listing the id
	cursor int       // partition row
	top    int       // first line of the scrolling part
	data   views.DetailData
}

// open shows id's detail; esc goes back to from.
func (s *detailScreen) open(id string, from screenID) {
	t, _ := s.e.data.snap.Txn(id)
	*s = detailScreen{e: s.e, id: id, last: t, from: from}
	s.e.host.show(screenDetail)
	s.sync()
}

// focus puts the cursor on tp's row, if the detail has one.
func (s *detailScreen) focus(tp model.TopicPartition) {
	for i, dp := range s.data.Parts {
		if dp.TopicPartition == tp {
			s.cursor = i
			s.data.Cursor = i
			s.scroll(0, false)
			return
		}
	}
}

func (s *detailScreen) home() screenID { return s.from }
func (s *detailScreen) reload()        {} // sync rebuilds it after every message anyway
func (s *detailScreen) grabs() bool    { return false }

// sync rebuilds the detail's data from the current snapshot after any message
// while it is on view (not per frame), keeping the cursor row in view (a
// refresh can move it).
func (s *detailScreen) sync() {
	e := s.e
	if e.host.current() != screenDetail || e.data.snap == nil {
		return
	}
	t, found := e.data.snap.Txn(s.id)
	if found {
		s.last = t
	} else {
		t = s.last
	}
	st := e.hist.Stats(t.ID)
	d := views.DetailData{
		Txn: t, Gone: !found, Stats: st, Now: e.now, Loc: e.loc, ReadOnly: e.o.ReadOnly,
		Source: e.data.snap.Source, Since: e.hist.Since(),
		// The list's query only lends its checkpoint interval here.
		Problems: model.Problems(t, st, e.data.snap, model.Query{CheckpointInterval: e.o.CheckpointInterval}, e.now),
		Parts:    model.TxnPartitions(t, e.data.snap, e.data.byPID),
	}
	d.Cursor = min(max(s.cursor, 0), max(len(d.Parts)-1, 0))
	d.Top = s.top
	s.data = d
	s.cursor = d.Cursor
	s.scroll(0, false)
}

// scroll moves the window by delta lines, then keeps it inside the document
// and, unless the operator scrolled past it on purpose, the cursor row inside
// the window.
func (s *detailScreen) scroll(delta int, free bool) {
	body := s.e.host.bodyHeight()
	if body <= 0 || s.e.w <= 0 {
		return
	}
	rows, lines, visible := views.DetailLayout(s.data, s.e.w, body)
	top := s.top + delta
	if len(rows) > 0 && !free {
		cl := rows[s.cursor]
		if cl < top {
			top = cl
		}
		if cl >= top+visible {
			top = cl - visible + 1
		}
	}
	s.top = min(max(top, 0), max(lines-visible, 0))
	s.data.Top = s.top
}

// move steps the cursor; past either end (or with no rows) it scrolls,
// which is how the fields above and the events below come into view.
func (s *detailScreen) move(n int) {
	rows := len(s.data.Parts)
	to := s.cursor + n
	switch {
	case rows == 0:
		s.scroll(n, true)
	case to < 0 && s.cursor == 0, to >= rows && s.cursor == rows-1:
		s.scroll(n, true)
	default:
		s.cursor = min(max(to, 0), rows-1)
		s.data.Cursor = s.cursor
		s.scroll(0, false)
	}
}

func (s *detailScreen) update(msg tea.Msg) tea.Cmd {
	kp, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	k, host := s.e.keys, s.e.host
	rows := len(s.data.Parts)
	page := max(host.bodyHeight()/2, 1)
	switch {
	case key.Matches(kp, k.Back):
		host.show(s.from)
	case key.Matches(kp, k.Up):
		s.move(-1)
	case key.Matches(kp, k.Down):
		s.move(1)
	case key.Matches(kp, k.PageUp):
		s.move(-page)
	case key.Matches(kp, k.PageDown):
		s.move(page)
	case key.Matches(kp, k.Home):
		s.cursor, s.top = 0, 0
	case key.Matches(kp, k.End):
		s.cursor = max(rows-1, 0)
		s.data.Cursor = s.cursor
		s.scroll(1<<20, true)
		s.scroll(0, false)
	case key.Matches(kp, k.Abort):
		host.forceTerminate(s.data.Txn)
	case key.Matches(kp, k.Commit):
		host.commit(s.data.Txn)
	case key.Matches(kp, k.AbortPartition):
		if rows == 0 {
			host.setStatus(statusInfo, "no partition selected")
			return nil
		}
		host.abortPartition(s.data.Txn, s.data.Parts[s.data.Cursor])
	}
	return nil
}

func (s *detailScreen) keys() []key.Binding {
	k := s.e.keys
	return []key.Binding{k.Back, short(k.Abort, "force-terminate"), short(k.AbortPartition, "abort on partition"), k.Help, k.Quit}
}

func (s *detailScreen) view(w, h int) string { return views.Detail(s.data, w, h, s.e.st) }
