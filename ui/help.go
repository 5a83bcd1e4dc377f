package ui

import (
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/txnscope/txnscope/model"
	"github.com/txnscope/txnscope/views"
)

// The help (?) covers the body of whatever screen is on view, which stays
// where it was underneath; its keys come from the keymap itself.

// updateHelp takes the keys while the help is open: only closing, quitting
// and scrolling it act, never a key of the screen under it.
func (m *Model) updateHelp(msg tea.KeyPressMsg) tea.Cmd {
	k := m.keys
	h := m.bodyHeight()
	switch {
	case key.Matches(msg, k.Help, k.Back):
		m.showHelp, m.helpTop = false, 0
		return nil
	case key.Matches(msg, k.Quit):
		return m.quit()
	case key.Matches(msg, k.Up):
		m.helpTop--
	case key.Matches(msg, k.Down):
		m.helpTop++
	case key.Matches(msg, k.PageUp):
		m.helpTop -= h - 1
	case key.Matches(msg, k.PageDown):
		m.helpTop += h - 1
	case key.Matches(msg, k.Home):
		m.helpTop = 0
	case key.Matches(msg, k.End):
		m.helpTop = len(m.helpLines(m.w))
	}
	m.helpTop = views.HelpTop(len(m.helpLines(m.w)), m.helpTop, h)
	return nil
}

func (m *Model) helpLines(w int) []string {
	return views.HelpLines(m.keys.groups(), helpNotes(m.o.ReadOnly), w, m.st)
}

func (m *Model) helpView(w, h int) string {
	return views.Help(m.helpLines(w), m.helpTop, w, h, m.st)
}

func helpNotes(readOnly bool) []string {
	notes := []string{
		"Sort: " + model.SortRatio.String() + " (default, most urgent first) → age → id → state.",
		"Rows marked ! are past half their transaction.timeout.ms, !! past 90%; ? could not be described; " +
			"H! holds a hanging transaction on some partition.",
		"Partitions (p): every partition whose last stable offset is below its high watermark, pinned longest first. " +
			"H! hanging (no coordinator will end it: abort it on the partition), !! consumer groups stuck at its LSO, " +
			"! no open transaction holds it. enter opens the transaction holding it.",
		fmt.Sprintf("Groups (c): consumer groups whose committed offset is at a pinned LSO (or up to %d offsets below); "+
			"enter shows the partitions blocking one.", model.StuckSlack),
	}
	if readOnly {
		notes = append(notes, "Read-only: the abort, commit and resolve keys are not available in this session.")
	} else {
		notes = append(notes, "Aborts open a dialog that shows the transaction's start time: type abort and press enter to send; esc cancels. "+
			"Just before sending, the target is re-read and the abort refused if it is not the very transaction shown; "+
			"every request is written to the audit log before it goes out.")
		notes = append(notes, "C commits a transaction whose Flink checkpoint completed (--flink or --flink-checkpoints say so), "+
			"and on the jobs view resolves a dead job: commits those, force-terminates the rest; type commit (or resolve N).")
	}
	return notes
}
