package ui

import "github.com/txnscope/txnscope/views"

// The events pane (e) is part of the root's layout, not a screen: it takes
// the bottom of the body under the transaction list, and the list gets what
// is left (listRows). [ and ] page through it, the session's events or the
// replay alike.

// eventsScroll is how far back the events pane is paged: back events before
// the newest one at the time (mark, the history's Added), so that events
// arriving meanwhile do not move what is on view. A replay does not grow:
// its back counts from its newest.
type eventsScroll struct{ back, mark int }

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
	skip := m.eventsSkip(n)
	if m.replay.on {
		return views.Events(m.replayData(skip, n), w, h, m.st)
	}
	d := views.EventsData{Events: m.hist.LatestFrom(skip, n), Skipped: skip, Total: m.hist.Len(), Loc: m.loc}
	return views.Events(d, w, h, m.st)
}

// eventsTotal is how many events the pane can page through.
func (m *Model) eventsTotal() int {
	if m.replay.on {
		return len(m.replay.evs)
	}
	return m.hist.Len()
}

// eventsSkip is how many of the newest events the pane passes over to show n,
// never so many that it shows fewer than n while there are more.
func (m *Model) eventsSkip(n int) int {
	s := m.evScroll
	if s.back == 0 {
		return 0
	}
	skip := s.back
	if !m.replay.on {
		skip += m.hist.Added() - s.mark
	}
	return max(min(skip, m.eventsTotal()-n), 0)
}

// pageEvents is [ (pages > 0, older) and ] (newer); back at the newest, the
// pane follows new events again.
func (m *Model) pageEvents(pages int) {
	n := views.EventsRows(m.eventsHeight(m.bodyHeight()))
	if n == 0 {
		return
	}
	skip := max(min(m.eventsSkip(n)+pages*n, m.eventsTotal()-n), 0)
	m.evScroll = eventsScroll{back: skip, mark: m.hist.Added()}
}
