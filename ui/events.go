package ui

import "github.com/txnscope/txnscope/views"

// eventsHeight is how much of the body the events pane takes when shown.
func (m *Model) eventsHeight(body int) int {
	if !m.showEvents || m.screen != screenList {
		return 0
	}
	h := max(body/3, 5)
	if body-h < views.ListChrome+3 {
		return 0
	}
	return h
}

func (m *Model) eventsData(h int) views.EventsData {
	n := views.EventsRows(h)
	return views.EventsData{Events: m.hist.Latest(n), Total: m.hist.Len(), Loc: m.loc}
}
