package ui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/txnscope/txnscope/views"
)

// listBase is what every list screen embeds, as gh-dash's sections embed
// section.Model: the window over its rows and, for a screen with a filter,
// the filter typed after /. A screen keeps only what is its own: its rows'
// data, its keys, its rendering.
type listBase struct {
	win    window
	input  input // the filter as typed; a screen without one never types
	typing bool
}

func (b *listBase) grabs() bool { return b.typing }

// startFilter opens the filter's input on the text applied now.
func (b *listBase) startFilter(text string) {
	b.typing = true
	b.input.SetValue(text)
	b.input.Focus()
}

// filterView is the filter's input w wide while it is typed ("" otherwise).
func (b *listBase) filterView(w int, st views.Styles) string {
	if !b.typing {
		return ""
	}
	return b.input.View(w, st)
}

// handle takes msg if it is the list's own: while the filter is typed, any
// message (applied gets the text once enter or esc ends the typing); else a
// cursor key (moved is told). It reports whether it took msg; visible is how
// many rows the screen shows.
func (b *listBase) handle(k keyMap, msg tea.Msg, visible int, applied func(text string), moved func()) bool {
	if b.typing {
		if text, done := filterKey(k, &b.input, msg); done {
			b.typing = false
			applied(strings.TrimSpace(text))
		}
		return true
	}
	kp, ok := msg.(tea.KeyPressMsg)
	if !ok || !b.win.move(k, kp, visible) {
		return false
	}
	moved()
	return true
}

// showAll shows rows 0…n-1 of the screen's data, the cursor back on the row
// found names (the one it was on before the refresh), if it is still there.
func (b *listBase) showAll(n int, found func(i int) bool, visible int) {
	b.win.rows = b.win.rows[:0]
	for i := 0; i < n; i++ {
		b.win.rows = append(b.win.rows, i)
	}
	b.show(b.win.rows, found, visible)
}

// show shows rows (indices into the screen's data), the cursor back on the
// row whose index found names, if it is still there.
func (b *listBase) show(rows []int, found func(idx int) bool, visible int) {
	b.win.rows = rows
	for i, idx := range rows {
		if found(idx) {
			b.win.cursor = i
			break
		}
	}
	b.win.clamp(visible)
}

// window is a cursor over rows (indices into the screen's data) and the
// first row on view.
type window struct {
	rows   []int
	cursor int
	top    int
}

// clamp keeps cursor and window inside the rows, the cursor inside the window.
func (l *window) clamp(visible int) {
	n := len(l.rows)
	l.cursor = min(max(l.cursor, 0), max(n-1, 0))
	if visible <= 0 {
		l.top = l.cursor
		return
	}
	if l.cursor < l.top {
		l.top = l.cursor
	}
	if l.cursor >= l.top+visible {
		l.top = l.cursor - visible + 1
	}
	l.top = min(max(l.top, 0), max(n-visible, 0))
}

// move applies a cursor key; it reports whether msg was one.
func (l *window) move(k keyMap, msg tea.KeyPressMsg, visible int) bool {
	page := max(visible-1, 1)
	switch {
	case key.Matches(msg, k.Up):
		l.cursor--
	case key.Matches(msg, k.Down):
		l.cursor++
	case key.Matches(msg, k.PageUp):
		l.cursor -= page
		l.top -= page
	case key.Matches(msg, k.PageDown):
		l.cursor += page
		l.top += page
	case key.Matches(msg, k.Home):
		l.cursor = 0
	case key.Matches(msg, k.End):
		l.cursor = len(l.rows) - 1
	default:
		return false
	}
	l.clamp(visible)
	return true
}

// filterKey handles a key while a filter is typed into in: enter applies,
// esc clears, anything else is text. It reports whether typing ended, and
// with what text.
func filterKey(k keyMap, in *input, msg tea.Msg) (text string, done bool) {
	if kp, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(kp, k.Apply):
			in.Blur()
			return in.Value(), true
		case key.Matches(kp, k.Clear):
			in.Blur()
			in.SetValue("")
			return "", true
		}
	}
	in.Update(msg)
	return "", false
}
