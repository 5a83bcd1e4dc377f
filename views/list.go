package views

import (
	"time"

	"github.com/txnscope/txnscope/model"
)

// ListData is the transaction list as the ui holds it. Rows are indices into
// Snap.Txns in display order; only Rows[Top:Top+visible] are ever looked at,
// which keeps a frame as cheap for 100,000 ids as for 100.
type ListData struct {
	Snap   *model.Snapshot
	Hist   *model.History
	Rows   []int
	Cursor int
	Top    int
	Now    time.Time
	Query  model.Query
	// Input is the filter being typed, already rendered; "" when not typing.
	Input string
	// Empty is said in place of rows when there are none.
	Empty string
	// PIDWidth widens the producer column to the widest id (Summary.PIDWidth).
	PIDWidth int
	// Hanging marks the ids whose producer holds a hanging transaction.
	Hanging map[string]bool
}

// ListChrome is how many of its lines List spends on other things than rows.
const ListChrome = 2

// markerWidth is what comes before each row's cells: the cursor, the
// two-cell severity sign and a space.
const markerWidth = 4

// markerPad stands in for the marker over the column titles.
const markerPad = "    "

// cursorMark is a row's first cell: > on the selected row. Colour and reverse
// video alone do not do: TERM=dumb (or no TERM) strips every attribute, and
// the operator must still see what a would act on.
func cursorMark(selected bool) string {
	if selected {
		return ">"
	}
	return " "
}

// ListRows is how many rows List shows in h lines.
func ListRows(h int) int { return max(0, h-ListChrome) }

// List draws the column titles, the visible window of rows and a status line,
// in exactly w×h.
func List(d ListData, w, h int, st Styles) string {
	if h <= 0 || w <= 0 {
		return ""
	}
	all := ListColumns()
	for i := range all {
		if all[i].Name == pidColumn {
			all[i].Width = max(all[i].Width, min(d.PIDWidth, 24))
		}
	}
	cols := Layout(all, w-markerWidth)
	lines := make([]string, 0, h)
	lines = append(lines, st.Section.Render(Fit(markerPad+HeaderLine(cols), w)))
	n := ListRows(h)
	if len(d.Rows) == 0 && n > 0 {
		msg := []string{st.Dim.Render(d.Empty)}
		if d.Snap != nil && d.Snap.Hidden != "" && len(d.Snap.Txns) == 0 {
			msg[0] = st.Dim.Render("no transactional id you may DESCRIBE") // not "none on this cluster"
		}
		if d.Snap != nil && d.Snap.Hidden != "" {
			msg = append(msg, "")
			for _, l := range Wrap(oneLine(d.Snap.Hidden), max(w-4, 10)) {
				msg = append(msg, st.Warn.Render(l))
			}
		}
		lines = append(lines, Lines(Center(msg[:min(len(msg), n)], w, n))...)
	}
	for i := d.Top; i < d.Top+n && i < len(d.Rows) && i >= 0; i++ {
		t := &d.Snap.Txns[d.Rows[i]]
		r := Row{Txn: t, Stats: d.Hist.Stats(t.ID), Now: d.Now, Hanging: d.Hanging[t.ID]}
		lines = append(lines, listRow(cols, r, i == d.Cursor, w, &st))
	}
	for len(lines) < h-1 {
		lines = append(lines, "")
	}
	lines = append(lines[:h-1], listStatus(d, w, st))
	return Block(lines, w, h)
}

func listRow(cols []Column[Row], r Row, selected bool, w int, st *Styles) string {
	mark := Marker(r.Txn, r.Now)
	if r.Hanging {
		mark = "H!"
	}
	var line string
	if selected {
		line = Fit(cursorMark(true)+mark+" "+rowCells(cols, r, nil), w)
		return st.Selected.Render(line)
	}
	switch mark {
	case "!!", "H!":
		mark = st.Danger.Render(mark)
	case "! ":
		mark = st.Warn.Render(mark)
	case "? ":
		mark = st.Error.Render(mark)
	}
	return Fit(cursorMark(false)+mark+" "+rowCells(cols, r, st), w)
}

// rowCells draws the cells; an id the cluster would not describe shows its
// error in place of the columns it could not fill.
func rowCells(cols []Column[Row], r Row, st *Styles) string {
	if r.Txn.Err == "" || len(cols) < 3 {
		return RowLine(cols, r, st)
	}
	head := RowLine(cols[:2], r, st)
	rest := width(cols[2:])
	msg := Clip(errLine(r.Txn.Err), rest)
	if st != nil {
		msg = st.Error.Render(msg)
	}
	return head + " " + msg
}

func listStatus(d ListData, w int, st Styles) string {
	count := Count(len(d.Rows))
	if d.Snap != nil && len(d.Rows) != len(d.Snap.Txns) {
		count += " of " + Count(len(d.Snap.Txns))
	}
	count += " ids"
	if d.Snap != nil && d.Snap.Hidden != "" {
		count += " visible to you" // the header says why
	}
	if d.Input != "" {
		right := st.Dim.Render(count+" · ") + st.Key.Render("enter") + st.Dim.Render(" apply · ") +
			st.Key.Render("esc") + st.Dim.Render(" clear")
		return Spread(d.Input, right, w)
	}
	left := st.Dim.Render("sort ") + st.Text.Render(d.Query.Sort.String()) +
		st.Dim.Render(" · show ") + st.Text.Render(d.Query.Filter.String())
	if d.Query.Text != "" {
		left += st.Dim.Render(" · filter ") + st.Text.Render("/"+d.Query.Text)
	}
	return Spread(left, st.Dim.Render(count), w)
}
