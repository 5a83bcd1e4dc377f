package ui

import (
	"sort"

	"github.com/txnscope/txnscope/views"
)

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
		return views.Events(m.replayData(skip, m.replayShows(skip, n)), w, h, m.st)
	}
	d := views.EventsData{Events: m.hist.LatestFrom(skip, n), Skipped: skip, Total: m.hist.Len(), Loc: m.loc}
	return views.Events(d, w, h, m.st)
}

// eventsTotal is how many events the pane can page through.
func (m *Model) eventsTotal() int {
	if m.replay.on {
		return len(m.replay.got.Events)
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
	return max(min(skip, m.lastSkip(n)), 0)
}

// lastSkip is the skip of the page that shows the oldest event. In a replay
// that reaches into the log's compacted part, that page has the mark where
// it does, and room for one event less.
func (m *Model) lastSkip(n int) int {
	last := m.eventsTotal() - n
	if m.replay.on && m.compacted() > 0 {
		last++
	}
	return max(last, 0)
}

// compacted is how many of the replay's oldest events come before the point
// from which it has every transition.
func (m *Model) compacted() int {
	r := m.replay.got
	return sort.Search(len(r.Events), func(i int) bool { return !r.Events[i].At.Before(r.Complete) })
}

// shows is how many events the page from skip shows in n rows.
func (m *Model) shows(skip, n int) int {
	if m.replay.on {
		return m.replayShows(skip, n)
	}
	return n
}

// replayShows is how many events the replay's page from skip shows in n
// rows: one less when the mark is among them, so that none is cut.
func (m *Model) replayShows(skip, n int) int {
	if c := m.compacted(); c > 0 && skip+n-1 >= len(m.replay.got.Events)-c {
		return max(n-1, 0)
	}
	return n
}

// pageEvents is [ (pages > 0, older) and ] (newer); back at the newest, the
// pane follows new events again.
func (m *Model) pageEvents(pages int) {
	n := views.EventsRows(m.eventsHeight(m.bodyHeight()))
	if n == 0 {
		return
	}
	skip := m.eventsSkip(n)
	for ; pages > 0; pages-- {
		skip += m.shows(skip, n)
	}
	for ; pages < 0; pages++ {
		// The newer page ends where this one begins, whether it has the mark.
		if next := skip - n; m.shows(next, n) == n {
			skip = next
		} else {
			skip -= m.shows(next, n)
		}
	}
	skip = max(min(skip, m.lastSkip(n)), 0)
	m.evScroll = eventsScroll{back: skip, mark: m.hist.Added()}
}
