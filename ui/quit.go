package ui

import (
	"time"

	tea "charm.land/bubbletea/v2"
)

// Wait blocks until every abort sent has its result in the audit log, or
// timeout passes; it reports whether they all did. The program calls it after
// the UI ended, so that a signal cannot cut a result line short.
func (m *Model) Wait(timeout time.Duration) bool {
	done := make(chan struct{})
	go func() {
		m.running.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(timeout):
		return false
	}
}

// quit stops everything in flight and leaves.
func (m *Model) quit() tea.Cmd {
	m.cancel()
	return tea.Quit
}

// forceQuit is ctrl+c: it leaves at once, unless an abort is on its way, whose
// answer must reach the audit log first; a second ctrl+c leaves regardless.
func (m *Model) forceQuit() tea.Cmd {
	if m.sending() && !m.quitAfterAbort {
		m.quitAfterAbort = true
		rest := ""
		if b := &m.dialog.batch; len(b.Results)+1 < len(b.Actions) {
			b.Stop("stopped: txnscope is quitting")
			rest = ", the rest unsent"
		}
		m.setStatus(statusError, "an abort is in flight: quitting once its answer is logged"+rest+" (ctrl+c again quits now)")
		return nil
	}
	return m.quit()
}
