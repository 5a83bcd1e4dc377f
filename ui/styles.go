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
		ink := views.NewInk
		st := views.PlainStyles()
		st.Title = ink(s.Bold(true))
		st.Bold = ink(s.Bold(true))
		st.Dim = ink(s.Faint(true))
		st.Section = ink(s.Bold(true))
		st.Selected = ink(s.Reverse(true))
		st.Key = ink(s.Bold(true))
		st.Danger = ink(s.Bold(true))
		st.Error = ink(s.Bold(true))
		st.Stale = ink(s.Reverse(true).Bold(true))
		st.Alarm = ink(s.Reverse(true).Bold(true))
		st.ReadOnly = ink(s.Reverse(true))
		st.GaugeBad = ink(s.Bold(true))
		st.GaugeRest = ink(s.Faint(true))
		st.Border = ink(s)
		st.DialogTitle = ink(s.Bold(true).Underline(true))
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
	ink := views.NewInk
	fg := func(col color.Color) views.Ink { return ink(s.Foreground(col)) }
	bold := func(col color.Color) views.Ink { return ink(s.Foreground(col).Bold(true)) }
	return views.Styles{
		Title:       bold(accent),
		Text:        fg(text),
		Dim:         fg(dim),
		Bold:        bold(text),
		Section:     bold(dim),
		Selected:    ink(s.Foreground(text).Background(selBg).Bold(true)),
		Key:         bold(accent),
		Warn:        fg(yellow),
		Danger:      bold(red),
		Error:       fg(red),
		Good:        fg(green),
		Stale:       ink(s.Foreground(c("#ffffff", "#0d1117")).Background(yellow).Bold(true)),
		Alarm:       ink(s.Foreground(c("#ffffff", "#0d1117")).Background(red).Bold(true)),
		ReadOnly:    ink(s.Foreground(c("#ffffff", "#0d1117")).Background(accent)),
		GaugeOK:     fg(green),
		GaugeWarn:   fg(yellow),
		GaugeBad:    bold(red),
		GaugeRest:   fg(rest),
		StateOpen:   fg(accent),
		StateCommit: fg(green),
		StateAbort:  fg(purple),
		StateIdle:   fg(dim),
		Border:      fg(red),
		DialogTitle: bold(red),
		Help: help.Styles{
			Ellipsis: s.Foreground(dim), ShortKey: s.Foreground(accent), ShortDesc: s.Foreground(dim),
			ShortSeparator: s.Foreground(rest), FullKey: s.Foreground(accent).Bold(true), FullDesc: s.Foreground(text),
			FullSeparator: s.Foreground(rest),
		},
	}
}
