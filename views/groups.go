package views

import (
	"strconv"
	"strings"
	"time"

	"github.com/txnscope/txnscope/model"
)

// GroupsData is the consumer groups view: the groups stuck behind a pinned
// partition, longest blocked first.
type GroupsData struct {
	Groups []model.BlockedGroup
	Cursor int
	Top    int
	Now    time.Time
	Empty  string
	// Err says why groups could not (all) be read.
	Err string
}

// GroupRow is one line of the groups view.
type GroupRow struct {
	G   *model.BlockedGroup
	Now time.Time
}

// GroupColumns are the groups view's columns, in order.
func GroupColumns() []Column[GroupRow] {
	return []Column[GroupRow]{
		{Name: "CONSUMER GROUP", Width: 18, Flex: true, Max: 40, Clip: ClipMiddle, Text: func(r GroupRow) string { return name(r.G.Group) }},
		{Name: "TYPE", Width: 8, Drop: 1, Text: func(r GroupRow) string { return groupType(r.G.Type) }},
		{Name: "STATE", Width: 11, Drop: 3, Text: func(r GroupRow) string {
			if r.G.State == "" {
				return "–"
			}
			return name(r.G.State)
		}},
		{Name: "PARTS", Width: 5, Right: true, Text: func(r GroupRow) string { return strconv.Itoa(len(r.G.Partitions)) }},
		{Name: "LAG TO LSO", Width: 10, Right: true, Drop: 2, Text: func(r GroupRow) string { return Count(int(r.G.LagLSO)) }},
		{Name: "LAG TO HWM", Width: 10, Right: true, Text: func(r GroupRow) string { return Count(int(r.G.LagHWM)) },
			Style: func(_ GroupRow, st *Styles) Ink { return st.Warn }},
		{Name: "BLOCKED", Width: 7, Right: true, Text: func(r GroupRow) string {
			if r.G.Since.IsZero() {
				return "–"
			}
			return Dur(r.Now.Sub(r.G.Since))
		}},
		{Name: "BLOCKED BY", Width: 20, Flex: true, Text: blockedBy, Style: func(r GroupRow, st *Styles) Ink {
			if r.G.Hanging {
				return st.Danger
			}
			return st.Text
		}},
	}
}

// groupType names a group's protocol: classic, consumer (KIP-848), share
// (KIP-932), streams (KIP-1071).
func groupType(t string) string {
	if t == "" {
		return model.GroupClassic
	}
	return name(t)
}

func blockedBy(r GroupRow) string {
	ids := make([]string, len(r.G.Blockers))
	for i, b := range r.G.Blockers {
		ids[i] = name(b)
	}
	s := strings.Join(ids, ", ")
	if r.G.Hanging {
		if s == "" {
			return "HANGING transaction"
		}
		return "HANGING · " + s
	}
	if s == "" {
		return "a producer with no transactional id"
	}
	return s
}

// Groups draws the groups view in exactly w×h.
func Groups(d GroupsData, w, h int, st Styles) string {
	if h <= 0 || w <= 0 {
		return ""
	}
	cols := Layout(GroupColumns(), w-markerWidth)
	lines := make([]string, 0, h)
	lines = append(lines, st.Section.Render(Fit(markerPad+HeaderLine(cols), w)))
	n := ListRows(h)
	if len(d.Groups) == 0 && n > 0 {
		msg := []string{st.Dim.Render(d.Empty)}
		if d.Err != "" {
			// Say why the screen may be emptier than the cluster.
			msg = append(msg, "")
			for _, l := range Wrap(oneLine(d.Err), max(w-4, 10)) {
				msg = append(msg, errInk(d.Err, &st).Render(l))
			}
		}
		lines = append(lines, Lines(Center(msg[:min(len(msg), n)], w, n))...)
	}
	for i := d.Top; i < d.Top+n && i < len(d.Groups) && i >= 0; i++ {
		r := GroupRow{G: &d.Groups[i], Now: d.Now}
		mark := "  "
		if r.G.Hanging {
			mark = "H!"
		}
		if i == d.Cursor {
			lines = append(lines, st.Selected.Render(Fit(cursorMark(true)+mark+" "+RowLine(cols, r, nil), w)))
			continue
		}
		if r.G.Hanging {
			mark = st.Danger.Render(mark)
		}
		lines = append(lines, Fit(cursorMark(false)+mark+" "+RowLine(cols, r, &st), w))
	}
	for len(lines) < h-1 {
		lines = append(lines, "")
	}
	left := st.Dim.Render("groups whose committed offset waits at a pinned LSO (within " +
		strconv.Itoa(model.StuckSlack) + " offsets)")
	if d.Err != "" {
		left = errInk(d.Err, &st).Render(oneLine(d.Err))
	}
	lines = append(lines[:h-1], Spread(left, st.Dim.Render(Count(len(d.Groups))+" stuck"), w))
	return Block(lines, w, h)
}

// errInk colours a problem: a missing permission is a warning (txnscope
// shows what it may), anything else an error.
func errInk(err string, st *Styles) Ink {
	if model.Denied(err) {
		return st.Warn
	}
	return st.Error
}
