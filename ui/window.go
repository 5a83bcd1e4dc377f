package ui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// window is a cursor over rows (indices into the screen's data) and the
// first row on view: the list, partitions and groups screens each have one.
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
