package ui

import (
	"image/color"

	"charm.land/bubbles/v2/help"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/txnscope/txnscope/views"
)

// newStyles is the one place colours are chosen: from the terminal's
// background (dark or light) and its colour profile. Without colour (NO_COLOR,
// a dumb terminal) only bold, faint and reverse remain, so the cursor row is
// reversed instead of tinted.
func newStyles(isDark bool, p colorprofile.Profile) views.Styles {
	s := lipgloss.NewStyle()
	if p <= colorprofile.ASCII {
		st := views.PlainStyles()
		st.Title = s.Bold(true)
		st.Bold = s.Bold(true)
		st.Dim = s.Faint(true)
		st.Section = s.Bold(true)
		st.Selected = s.Reverse(true)
		st.Key = s.Bold(true)
		st.Danger = s.Bold(true)
		st.Error = s.Bold(true)
		st.Stale = s.Reverse(true).Bold(true)
		st.ReadOnly = s.Reverse(true)
		st.GaugeBad = s.Bold(true)
		st.GaugeRest = s.Faint(true)
		st.Border = s
		st.DialogTitle = s.Bold(true).Underline(true)
		st.Help = help.Styles{Ellipsis: s.Faint(true), ShortKey: s.Bold(true), ShortDesc: s, ShortSeparator: s.Faint(true),
			FullKey: s.Bold(true), FullDesc: s, FullSeparator: s}
		return st
	}
	ld := lipgloss.LightDark(isDark)
	c := func(light, dark string) color.Color { return ld(lipgloss.Color(light), lipgloss.Color(dark)) }
	var (
		text   = c("#1f2328", "#e6edf3")
		dim    = c("#6e7781", "#8b949e")
		accent = c("#0969da", "#58a6ff")
		green  = c("#1a7f37", "#3fb950")
		yellow = c("#9a6700", "#d29922")
		red    = c("#cf222e", "#f85149")
		purple = c("#8250df", "#bc8cff")
		selBg  = c("#ddf4ff", "#1f3a5f")
		rest   = c("#d0d7de", "#30363d")
	)
	fg := func(col color.Color) lipgloss.Style { return s.Foreground(col) }
	return views.Styles{
		Title:       fg(accent).Bold(true),
		Text:        fg(text),
		Dim:         fg(dim),
		Bold:        fg(text).Bold(true),
		Section:     fg(dim).Bold(true),
		Selected:    s.Foreground(text).Background(selBg).Bold(true),
		Key:         fg(accent).Bold(true),
		Warn:        fg(yellow),
		Danger:      fg(red).Bold(true),
		Error:       fg(red),
		Good:        fg(green),
		Stale:       s.Foreground(c("#ffffff", "#0d1117")).Background(yellow).Bold(true),
		ReadOnly:    s.Foreground(c("#ffffff", "#0d1117")).Background(accent),
		GaugeOK:     fg(green),
		GaugeWarn:   fg(yellow),
		GaugeBad:    fg(red).Bold(true),
		GaugeRest:   fg(rest),
		StateOpen:   fg(accent),
		StateCommit: fg(green),
		StateAbort:  fg(purple),
		StateIdle:   fg(dim),
		Border:      fg(red),
		DialogTitle: fg(red).Bold(true),
		Help: help.Styles{
			Ellipsis: fg(dim), ShortKey: fg(accent), ShortDesc: fg(dim), ShortSeparator: fg(rest),
			FullKey: fg(accent).Bold(true), FullDesc: fg(text), FullSeparator: fg(rest),
		},
	}
}
