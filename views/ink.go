package views

import (
	"strings"

	"charm.land/lipgloss/v2"
)

// Ink is a lipgloss style reduced to the escape sequences around its text.
// Rendering a frame paints hundreds of short cells, and lipgloss's general
// Render (padding, borders, wrapping) would be most of a frame's cost; the
// styles used here are colours and attributes only, which are exactly a prefix
// and a suffix.
type Ink struct {
	style     lipgloss.Style
	pre, post string
}

// NewInk prepares a style for painting.
func NewInk(s lipgloss.Style) Ink {
	out := s.Render("X")
	i := strings.IndexByte(out, 'X')
	if i < 0 {
		return Ink{style: s}
	}
	return Ink{style: s, pre: out[:i], post: out[i+1:]}
}

// Render paints s, one line.
func (k Ink) Render(s string) string {
	switch {
	case s == "":
		return ""
	case k.pre == "" && k.post == "":
		return s
	case strings.IndexByte(s, '\n') >= 0:
		return k.style.Render(s)
	}
	return k.pre + s + k.post
}

// Style is the lipgloss style behind the ink.
func (k Ink) Style() lipgloss.Style { return k.style }
