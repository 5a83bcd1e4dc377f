package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/testutil/uitest"
	"github.com/txnscope/txnscope/model"
)

// addEvents puts n commits of ids ev-<from>… into the session's history.
func (h *harness) addEvents(from, n int) {
	evs := make([]model.Event, n)
	for i := range evs {
		evs[i] = model.Event{At: uitest.T0.Add(time.Duration(from+i) * time.Millisecond), ID: fmt.Sprintf("ev-%d", from+i), Kind: model.Committed}
	}
	h.m.hist.Add(evs)
}

// eventIDs are the ids of the events on screen, top to bottom.
func (h *harness) eventIDs() []string {
	var ids []string
	for _, f := range strings.Fields(h.screen()) {
		if strings.HasPrefix(f, "ev-") {
			ids = append(ids, f)
		}
	}
	return ids
}

// [ and ] page through the session's events; events that arrive while paged
// back do not move what is on view, and ] back at the newest follows them.
func TestEventsPaging(t *testing.T) {
	h := started(t)
	h.addEvents(0, 50)
	h.press("e")
	newest := h.eventIDs()
	n := len(newest)
	if n < 3 || newest[0] != "ev-49" {
		t.Fatalf("events pane shows %v; want the newest first", newest)
	}
	h.press("[")
	page := h.eventIDs()
	if page[0] != fmt.Sprintf("ev-%d", 49-n) || len(page) != n {
		t.Errorf("[ shows %v; want the %d before %v", page, n, newest)
	}
	mustContain(t, h.screen(), fmt.Sprintf("events · latest first · %d–%d of 50 kept · ] newer", n+1, 2*n))

	h.addEvents(50, 7)
	if got := h.eventIDs(); strings.Join(got, " ") != strings.Join(page, " ") {
		t.Errorf("new events moved the page: %v, was %v", got, page)
	}
	for range 30 {
		h.press("[")
	}
	if got := h.eventIDs(); got[len(got)-1] != "ev-0" || len(got) != n {
		t.Errorf("paged to the oldest: %v; want a full page ending at ev-0", got)
	}
	for range 30 {
		h.press("]")
	}
	if got := h.eventIDs(); got[0] != "ev-56" {
		t.Errorf("paged back to the newest: %v; want ev-56 first", got)
	}
	mustNotContain(t, h.screen(), "] newer")
	h.addEvents(57, 1)
	if got := h.eventIDs(); got[0] != "ev-57" {
		t.Errorf("at the newest, the pane shows %v; want it to follow ev-57", got)
	}

	h.press("[", "e", "e") // hidden and shown again: from the newest
	if got := h.eventIDs(); got[0] != "ev-57" {
		t.Errorf("after e e the pane shows %v; want the newest", got)
	}
}

// Without the pane, [ and ] do nothing, and they never move the list.
func TestEventsPagingNeedsThePane(t *testing.T) {
	h := started(t)
	h.addEvents(0, 50)
	before := h.selectedID()
	h.press("[", "[", "]")
	if h.m.evScroll != (eventsScroll{}) || h.selectedID() != before {
		t.Errorf("[ ] without the pane: scroll %+v, selected %s (was %s)", h.m.evScroll, h.selectedID(), before)
	}
}

// The replay pages the same way, and a new replay starts at its newest.
func TestReplayPaging(t *testing.T) {
	h := withReplay(t)
	evs := replayEvents()
	h.finish(h.hold("h"))
	mustContain(t, h.screen(), "orders-enricher-v1-0-41")
	h.press("[")
	s := h.screen()
	mustContain(t, s, "log replay", "of 8 events", "] newer")
	if !strings.Contains(s, evs[0].ID) {
		t.Errorf("paged back, the replay does not reach the oldest event %s:\n%s", evs[0].ID, s)
	}
	h.finish(h.hold("r")) // read again: from the newest
	mustNotContain(t, h.screen(), "] newer")
}

// Paged through end to end and back, the replay shows every event, none cut
// by the mark where the log stops being complete.
func TestReplayPagingShowsEveryEvent(t *testing.T) {
	h := withReplay(t)
	h.finish(h.hold("h"))
	seen := map[string]int{}
	look := func() { // the pane only: the list above names the same ids
		_, pane, _ := strings.Cut(h.screen(), "log replay")
		if pane == "" {
			_, pane, _ = strings.Cut(h.screen(), "replay of the coordinators' log")
		}
		for _, f := range strings.Fields(pane) {
			for _, e := range replayEvents() {
				if f == e.ID {
					seen[f]++
				}
			}
		}
	}
	look()
	for range 5 {
		h.press("[")
		look()
	}
	for _, e := range replayEvents() {
		if seen[e.ID] == 0 {
			t.Errorf("paging older never showed %s", e.ID)
		}
	}
	if _, pane, _ := strings.Cut(h.screen(), "log replay"); !strings.Contains(pane, "compacted, each id's last transition only") ||
		!strings.Contains(pane, replayEvents()[0].ID) {
		t.Errorf("the last page lacks the mark or the oldest event:\n%s", h.screen())
	}
	clear(seen)
	look()
	for range 5 {
		h.press("]")
		look()
	}
	for _, e := range replayEvents() {
		if seen[e.ID] == 0 {
			t.Errorf("paging newer never showed %s", e.ID)
		}
	}
	mustNotContain(t, h.screen(), "] newer")
}
