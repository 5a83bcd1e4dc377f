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
	Total  int // events kept in the history
	Loc    *time.Location
}

// EventsRows is how many events fit in a pane of h lines.
func EventsRows(h int) int { return max(0, h-1) }

// Events draws a titled pane of the latest events in exactly w×h.
func Events(d EventsData, w, h int, st Styles) string {
	if h <= 0 {
		return ""
	}
	title := fmt.Sprintf("── events · latest first · %s kept ", Count(d.Total))
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
