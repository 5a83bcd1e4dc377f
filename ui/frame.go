package ui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/txnscope/txnscope/internal/escape"
	"github.com/txnscope/txnscope/views"
)

// View draws the whole screen, exactly the terminal's size.
func (m *Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.WindowTitle = "txnscope · " + m.o.Bootstrap
	if m.o.Profile.Name != "" {
		v.WindowTitle = "txnscope · " + escape.Text(m.label()) + " · " + m.o.Bootstrap
	}
	return v
}

// fits reports whether the screens are on show: the terminal's size is known
// and holds the layout. Keys act only then (see key).
func (m *Model) fits() bool { return m.w >= minWidth && m.h >= minHeight }

func (m *Model) restyle() {
	m.st = newStyles(m.isDark, m.profile)
	m.st.Context = contextInk(m.o.Profile.Color, m.profile)
}

func (m *Model) headerData() views.HeaderData {
	return views.HeaderData{Context: m.label(), Protected: m.o.Profile.Protected, Bootstrap: m.o.Bootstrap, ReadOnly: m.o.ReadOnly, Sum: m.data.sum, Conn: m.conn(), Now: m.now,
		Pins: m.data.pinSum, Warning: m.o.Warning, Flink: views.FlinkNote(m.data.flink)}
}

// render stacks header, body and footer. The body is the screen on view (the
// events pane under the list), or the help over it; the abort dialog lies on
// top of either.
func (m *Model) render() string {
	w, h, st := m.w, m.h, m.st
	if w <= 0 || h <= 0 {
		return ""
	}
	if !m.fits() {
		return views.TooSmall(w, h, minWidth, minHeight, st)
	}
	bodyH := m.bodyHeight()
	s := m.screens[m.cur]
	var body string
	keys := s.keys()
	if m.showHelp {
		body, keys = m.helpView(w, bodyH), m.keys.helpShort()
	} else {
		eh := m.eventsHeight(bodyH)
		body = s.view(w, bodyH-eh)
		if eh > 0 {
			body += "\n" + m.eventsView(w, eh)
		}
	}
	if m.dialog != nil {
		body = views.Overlay(body, views.ActionDialog(m.dialogData(), w, bodyH, st), w, bodyH, st)
		keys = m.keys.dialogShort(m.dialog.phase, m.dialog.batch.One)
	}
	// Status texts quote ids, topics and the brokers' errors as they came;
	// they are written out here, once, on their way to the screen.
	status := escape.Text(m.status)
	switch m.statusKind {
	case statusOK:
		status = st.Good.Render(status)
	case statusError:
		status = st.Error.Render(status)
	default:
		status = st.Text.Render(status)
	}
	footer := views.Footer(status, keys, w, st)
	if m.cmd != nil {
		footer = m.cmdlineView(w, st)
	}
	return views.Stack(views.Header(m.headerData(), w, st), body, footer)
}

// label is the context's name in the header ("" without one).
func (m *Model) label() string {
	if m.o.Profile.Label != "" {
		return m.o.Profile.Label
	}
	return m.o.Profile.Name
}
