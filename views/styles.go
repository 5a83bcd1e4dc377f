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
	Title     lipgloss.Style // the program's name in the header
	Text      lipgloss.Style
	Dim       lipgloss.Style
	Bold      lipgloss.Style
	Section   lipgloss.Style // section titles and column headers
	Selected  lipgloss.Style // the cursor row, applied to the whole line
	Key       lipgloss.Style // a key name in a hint
	Warn      lipgloss.Style
	Danger    lipgloss.Style
	Error     lipgloss.Style
	Good      lipgloss.Style // connected, committed
	Stale     lipgloss.Style // the STALE badge
	ReadOnly  lipgloss.Style // the read-only badge
	GaugeOK   lipgloss.Style
	GaugeWarn lipgloss.Style
	GaugeBad  lipgloss.Style
	GaugeRest lipgloss.Style // the unfilled part of a gauge

	StateOpen   lipgloss.Style // Ongoing and the Prepare* states
	StateCommit lipgloss.Style
	StateAbort  lipgloss.Style
	StateIdle   lipgloss.Style

	Border      lipgloss.Style // the dialog frame
	DialogTitle lipgloss.Style

	Help help.Styles
}

// PlainStyles renders everything as bare text; tests of layout use it.
func PlainStyles() Styles {
	p := lipgloss.NewStyle()
	return Styles{
		Title: p, Text: p, Dim: p, Bold: p, Section: p, Selected: p, Key: p, Warn: p, Danger: p,
		Error: p, Good: p, Stale: p, ReadOnly: p, GaugeOK: p, GaugeWarn: p, GaugeBad: p, GaugeRest: p,
		StateOpen: p, StateCommit: p, StateAbort: p, StateIdle: p, Border: p, DialogTitle: p,
		Help: help.Styles{Ellipsis: p, ShortKey: p, ShortDesc: p, ShortSeparator: p, FullKey: p, FullDesc: p, FullSeparator: p},
	}
}
