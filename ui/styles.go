package ui

import (
	"image/color"
	"strconv"
	"strings"

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

// contextColors are the colours a context may name (ctxfile.Colors), as a
// badge's background and the text on it.
var contextColors = map[string][2]string{
	"red": {"#d70000", "#ffffff"}, "orange": {"#ff8700", "#000000"}, "yellow": {"#ffd700", "#000000"},
	"green": {"#00af00", "#000000"}, "cyan": {"#00afaf", "#000000"}, "blue": {"#0060df", "#ffffff"},
	"magenta": {"#d700d7", "#ffffff"}, "purple": {"#8700ff", "#ffffff"}, "grey": {"#808080", "#000000"},
	"gray": {"#808080", "#000000"}, "white": {"#eeeeee", "#000000"},
}

// contextInk is the context badge in col (a name or #RRGGBB; "" a neutral
// one); without colour, reversed.
func contextInk(col string, p colorprofile.Profile) views.Ink {
	s := lipgloss.NewStyle().Bold(true)
	if p <= colorprofile.ASCII {
		return views.NewInk(s.Reverse(true))
	}
	pair, ok := contextColors[col]
	switch {
	case ok:
	case strings.HasPrefix(col, "#"):
		pair = [2]string{col, "#000000"}
		if dark(col) {
			pair[1] = "#ffffff"
		}
	default:
		pair = [2]string{"#585858", "#ffffff"}
	}
	return views.NewInk(s.Background(lipgloss.Color(pair[0])).Foreground(lipgloss.Color(pair[1])))
}

// dark: white text reads better on col (#RGB or #RRGGBB) than black.
func dark(col string) bool {
	hex := strings.TrimPrefix(col, "#")
	if len(hex) == 3 {
		hex = string([]byte{hex[0], hex[0], hex[1], hex[1], hex[2], hex[2]})
	}
	v, err := strconv.ParseUint(hex, 16, 32)
	if err != nil || len(hex) != 6 {
		return true
	}
	r, g, b := float64(v>>16&0xff), float64(v>>8&0xff), float64(v&0xff)
	return 0.299*r+0.587*g+0.114*b < 140
}
