package ui

import "github.com/txnscope/txnscope/views"

// The events pane (e) is part of the root's layout, not a screen: it takes
// the bottom of the body under the transaction list, and the list gets what
// is left (listRows).

// eventsHeight is how much of the body the events pane takes when shown.
func (m *Model) eventsHeight(body int) int {
	if !m.showEvents || m.cur != screenList {
		return 0
	}
	h := max(body/3, 5)
	if body-h < views.ListChrome+3 {
		return 0
	}
	return h
}

func (m *Model) eventsView(w, h int) string {
	n := views.EventsRows(h)
	if m.replay.on {
		return views.Events(m.replayData(n), w, h, m.st)
	}
	d := views.EventsData{Events: m.hist.Latest(n), Total: m.hist.Len(), Loc: m.loc}
	return views.Events(d, w, h, m.st)
}
