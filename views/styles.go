package views

import (
	"charm.land/bubbles/v2/help"
	"charm.land/lipgloss/v2"
)

// Styles is every style the renderers use. ui builds it from the terminal's
// background and colour profile; with no colour available the styles use only
// bold, faint and reverse, and severity stays readable from the text itself
// (the gauge, the percent and the ! markers).
type Styles struct {
	Title     Ink // the program's name in the header
	Text      Ink
	Dim       Ink
	Bold      Ink
	Section   Ink // section titles and column headers
	Selected  Ink // the cursor row, applied to the whole line
	Key       Ink // a key name in a hint
	Warn      Ink
	Danger    Ink
	Error     Ink
	Good      Ink // connected, committed
	Stale     Ink // the STALE badge
	Alarm     Ink // the HANGING badge
	ReadOnly  Ink // the read-only badge
	Context   Ink // the context's badge, in its colour
	GaugeOK   Ink
	GaugeWarn Ink
	GaugeBad  Ink
	GaugeRest Ink // the unfilled part of a gauge

	StateOpen   Ink // Ongoing and the Prepare* states
	StateCommit Ink
	StateAbort  Ink
	StateIdle   Ink

	Border      Ink // the dialog frame
	DialogTitle Ink

	Help help.Styles
}

// PlainStyles renders everything as bare text; tests of layout use it.
func PlainStyles() Styles {
	p := NewInk(lipgloss.NewStyle())
	h := lipgloss.NewStyle()
	return Styles{
		Title: p, Text: p, Dim: p, Bold: p, Section: p, Selected: p, Key: p, Warn: p, Danger: p,
		Error: p, Good: p, Stale: p, Alarm: p, ReadOnly: p, Context: p, GaugeOK: p, GaugeWarn: p, GaugeBad: p, GaugeRest: p,
		StateOpen: p, StateCommit: p, StateAbort: p, StateIdle: p, Border: p, DialogTitle: p,
		Help: help.Styles{Ellipsis: h, ShortKey: h, ShortDesc: h, ShortSeparator: h, FullKey: h, FullDesc: h, FullSeparator: h},
	}
}
