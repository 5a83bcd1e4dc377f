package views

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"
)

// HelpGroup is one titled column of the full help.
type HelpGroup struct {
	Title string
	Keys  []key.Binding
}

// Help draws the full help in exactly w×h, from its top-th line on (HelpTop
// keeps that in range). When it does not fit, the last line says what is
// above and below and which keys move.
func Help(lines []string, top, w, h int, st Styles) string {
	if len(lines) <= h || h <= 0 {
		return Block(lines, w, h)
	}
	top = HelpTop(len(lines), top, h)
	page := append([]string(nil), lines[top:top+h-1]...)
	var where string
	switch {
	case top == 0:
		where = fmt.Sprintf("  ↓ %d more lines: j/↓, pgdn, G", len(lines)-(h-1))
	case top+h-1 >= len(lines):
		where = fmt.Sprintf("  ↑ %d lines above: k/↑, pgup, g", top)
	default:
		where = fmt.Sprintf("  ↑ %d above, ↓ %d below: j/k, pgup/pgdn", top, len(lines)-top-(h-1))
	}
	return Block(append(page, st.Dim.Render(where)), w, h)
}

// HelpTop is top kept where a page of h lines (one of them saying where it
// is) still shows help: at 0 when it all fits.
func HelpTop(lines, top, h int) int {
	if lines <= h {
		return 0
	}
	return max(min(top, lines-(h-1)), 0)
}

// HelpLines is the full help from the keymap's own bindings, packing the
// groups into as many rows as the width needs.
func HelpLines(groups []HelpGroup, notes []string, w int, st Styles) []string {
	hm := help.New()
	hm.Styles = st.Help
	var blocks []string
	for _, g := range groups {
		body := hm.FullHelpView([][]key.Binding{g.Keys})
		if body == "" {
			continue
		}
		blocks = append(blocks, st.Section.Render(g.Title)+"\n"+body)
	}
	lines := []string{st.Title.Render("txnscope keys") + st.Dim.Render("  (? or esc closes)"), ""}
	var row []string
	rowW := 0
	flush := func() {
		if len(row) == 0 {
			return
		}
		lines = append(lines, Lines(lipgloss.JoinHorizontal(lipgloss.Top, row...))...)
		lines = append(lines, "")
		row, rowW = nil, 0
	}
	for _, b := range blocks {
		bw := lipgloss.Width(b) + 4
		if rowW > 0 && rowW+bw > w {
			flush()
		}
		row = append(row, padBlock(b, bw))
		rowW += bw
	}
	flush()
	for _, n := range notes {
		for _, l := range Wrap(n, max(w-4, 10)) {
			lines = append(lines, st.Dim.Render(l))
		}
	}
	for i := range lines {
		lines[i] = "  " + lines[i]
	}
	return lines
}

func padBlock(b string, w int) string {
	ls := strings.Split(b, "\n")
	for i := range ls {
		ls[i] = Fit(ls[i], w)
	}
	return strings.Join(ls, "\n")
}

// Footer is the bottom line: a status message on the left, the short help
// for the screen on the right in whatever room is left.
func Footer(status string, keys []key.Binding, w int, st Styles) string {
	hm := help.New()
	hm.Styles = st.Help
	sw := lipgloss.Width(status)
	room := w - sw
	if sw > 0 {
		room -= 3
	}
	if room < 10 {
		return Fit(status, w)
	}
	if sw == 0 {
		hm.SetWidth(w - 1)
		return Fit(" "+hm.ShortHelpView(keys), w)
	}
	hm.SetWidth(room)
	right := hm.ShortHelpView(keys)
	if lipgloss.Width(right) > room {
		// Not even the first key fits beside the status: the help model
		// then gives them all, and the status would be pushed off.
		return Fit(status, w)
	}
	return Spread(status, right, w)
}
