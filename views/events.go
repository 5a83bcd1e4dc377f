package views

import (
	"fmt"
	"strconv"
	"time"

	"github.com/txnscope/txnscope/model"
)

// EventsData is the events pane: the latest events, newest first.
type EventsData struct {
	Events []model.Event
	// Skipped is how many newer events the pane was paged past ([).
	Skipped int
	Total   int // events kept in the history, or replayed
	Loc     *time.Location
	// Replay, when set, makes the pane the replay of the coordinators' log
	// (replay.go) instead of the session's events.
	Replay *ReplayData
}

// EventsRows is how many events fit in a pane of h lines.
func EventsRows(h int) int { return max(0, h-1) }

// Events draws a titled pane of the latest events in exactly w×h.
func Events(d EventsData, w, h int, st Styles) string {
	if h <= 0 {
		return ""
	}
	if d.Replay != nil {
		return replayPane(d, w, h, st)
	}
	title := fmt.Sprintf("── events · latest first · %s kept ", Count(d.Total))
	if d.Skipped > 0 {
		title = fmt.Sprintf("── events · latest first · %s of %s kept · ] newer ", span(d), Count(d.Total))
	}
	lines := []string{st.Section.Render(Fit(title+repeatDash(w), w))}
	if len(d.Events) == 0 {
		lines = append(lines, st.Dim.Render("  nothing seen yet: events appear as transactions begin, commit, abort, time out or get fenced"))
	}
	for _, e := range d.Events {
		if len(lines) >= h {
			break
		}
		lines = append(lines, EventLine(e, d.Loc, w, st))
	}
	return Block(lines, w, h)
}

// span is which of the events are on view, counted from the newest: 41–60.
func span(d EventsData) string {
	return Count(d.Skipped+1) + "–" + Count(d.Skipped+len(d.Events))
}

// EventLine is one event: time, kind, id, producer, detail.
func EventLine(e model.Event, loc *time.Location, w int, st Styles) string {
	kind := pad(string(e.Kind), 18, false)
	line := "  " + st.Dim.Render(Clock(e.At, loc)) + "  " + EventStyle(e.Kind, &st).Render(kind) + " " +
		name(e.ID) + st.Dim.Render(fmt.Sprintf("  pid %d/%s", e.ProducerID, eventEpoch(e)))
	// A logged event's time is the coordinator's, and an end it reports
	// knows when its transaction began.
	if e.Kind.Ends() && !e.Begun.IsZero() && !e.At.Before(e.Begun) {
		line += st.Dim.Render("  took " + Elapsed(e.At.Sub(e.Begun)))
	}
	if e.Detail != "" {
		line += st.Dim.Render("  " + oneLine(e.Detail))
	}
	return Fit(line, w)
}

func repeatDash(w int) string {
	b := make([]byte, 0, w*3)
	for i := 0; i < w; i++ {
		b = append(b, "─"...)
	}
	return string(b)
}

// eventEpoch is the epoch an event reports, "…" when it came from a row that
// was listed only (model.UnknownEpoch).
func eventEpoch(e model.Event) string {
	if e.ProducerEpoch == model.UnknownEpoch {
		return notYet
	}
	return strconv.Itoa(int(e.ProducerEpoch))
}

// ReplayData is the state of a replay of the coordinators' log: running,
// failed, or read (EventsData carries its events).
type ReplayData struct {
	Running bool
	Err     string
	// Complete is the time from which the log holds every transition;
	// before it, back to Oldest, only each id's last one is left.
	Complete, Oldest time.Time
	// Unread are the records of the log it could not read: Complete is
	// after them.
	Unread []model.Unread
	Limit  int // the newest this many at most were kept
	Now    time.Time
}

// replayNeeds is what a failed replay says under its error.
const replayNeeds = "the replay reads the coordinators' own log, the topic __transaction_state: it needs READ on it " +
	"(managed clusters usually deny it), and a cluster that has one (the demo's has none). " +
	"h or esc: back to the session's events"

// replayPane draws the replay in exactly w×h: a title that says how far back
// it reaches, then the events newest first, with a line where they stop
// being complete.
func replayPane(d EventsData, w, h int, st Styles) string {
	r := d.Replay
	lines := []string{st.Section.Render(Fit(replayTitle(d, w)+" "+repeatDash(w), w))}
	back := st.Dim.Render("  h or esc: back to the session's events")
	switch {
	case r.Running:
		lines = append(lines, st.Dim.Render(Fit("  replaying the coordinators' log…", w)), Fit(back, w))
	case r.Err != "":
		lines = append(lines, st.Error.Render(Fit("  cannot replay: "+oneLine(r.Err), w)))
		for _, l := range Wrap(replayNeeds, max(w-4, 10)) {
			lines = append(lines, st.Dim.Render(Fit("  "+l, w)))
		}
	case len(d.Events) == 0:
		lines = append(lines, st.Dim.Render(Fit("  the coordinators' log holds no transitions", w)), Fit(back, w))
	}
	marked := false
	for _, e := range d.Events {
		if len(lines) >= h {
			break
		}
		if !marked && e.At.Before(r.Complete) {
			marked = true
			why := ": compacted, each id's last transition only"
			if len(r.Unread) > 0 {
				why = ": not every transition (compacted, or before a record it cannot read)"
			}
			lines = append(lines, st.Dim.Render(Fit("  ── before "+replayTime(r.Complete, r.Now, d.Loc)+why, w)))
			if len(lines) >= h {
				break
			}
		}
		lines = append(lines, EventLine(e, d.Loc, w, st))
	}
	return Block(lines, w, h)
}

// replayTitle is the longest title that fits w: how far back every
// transition is there, how far back anything is, and how many were kept.
func replayTitle(d EventsData, w int) string {
	r := d.Replay
	if r.Running || r.Err != "" || r.Complete.IsZero() {
		return fitTitle(w, "── replay of the coordinators' log", "── log replay")
	}
	since := replayTime(r.Complete, r.Now, d.Loc)
	every := fmt.Sprintf("every transition since %s (%s ago)", since, Dur(r.Now.Sub(r.Complete)))
	if n := unreadCount(r.Unread); n > 0 {
		// The records it cannot read come first: they are why every
		// transition is there only since then.
		every = fmt.Sprintf("%s unreadable %s · %s", Count(n), plural(n, "record", "records"), every)
		since = fmt.Sprintf("%s (%s unreadable)", since, Count(n))
	}
	n := Count(d.Total) + " events"
	if r.Limit > 0 && d.Total >= r.Limit {
		n = Count(d.Total) + " newest"
	}
	if d.Skipped > 0 {
		at := span(d) + " of " + n
		return fitTitle(w, "── replay of the coordinators' log · "+at+" · "+every+" · ] newer",
			"── log replay · "+at+" · "+every+" · ] newer", "── log replay · "+at+" · ] newer", "── log replay · "+at)
	}
	cands := []string{}
	if r.Oldest.Before(r.Complete) {
		last := "before: each id's last only"
		if len(r.Unread) > 0 {
			last = "before: not all"
		}
		cands = append(cands,
			"── replay of the coordinators' log · "+every+" · "+last+", back to "+replayTime(r.Oldest, r.Now, d.Loc)+" · "+n,
			"── replay of the coordinators' log · "+every+" · "+last+" · "+n)
	}
	cands = append(cands,
		"── replay of the coordinators' log · "+every+" · "+n,
		"── log replay · "+every+" · "+n,
		"── log replay · complete since "+since+" · "+n,
		"── log replay · since "+since)
	return fitTitle(w, cands...)
}

func unreadCount(us []model.Unread) int {
	n := 0
	for _, u := range us {
		n += u.Count
	}
	return n
}

// fitTitle is the first of titles that leaves room for a dash or two in w.
func fitTitle(w int, titles ...string) string {
	for _, t := range titles {
		if cells(t)+3 <= w {
			return t
		}
	}
	return titles[len(titles)-1]
}

// replayTime is a time of day, with its date when it is not within a day
// of now.
func replayTime(t, now time.Time, loc *time.Location) string {
	if now.Sub(t) < 24*time.Hour {
		return Clock(t, loc)
	}
	if loc != nil {
		t = t.In(loc)
	}
	return t.Format("Jan 2 15:04:05")
}

// ReplayNewest are n of evs (oldest first) after the newest skip, newest first.
func ReplayNewest(evs []model.Event, skip, n int) []model.Event {
	skip = min(max(skip, 0), len(evs))
	n = max(min(n, len(evs)-skip), 0)
	out := make([]model.Event, n)
	for i := range out {
		out[i] = evs[len(evs)-1-skip-i]
	}
	return out
}
