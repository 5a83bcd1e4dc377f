package ui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/txnscope/txnscope/model"
	"github.com/txnscope/txnscope/views"
)

// confirmWord is what the operator types to send an abort; no single key can.
const confirmWord = "abort"

// abortDialog is an abort waiting for confirmation, on its way, or answered.
type abortDialog struct {
	id       int // matches the reply to this dialog
	action   model.Action
	input    input
	hint     string
	warn     string // the target changed in a later refresh
	phase    views.DialogPhase
	result   model.Result
	auditErr string
}

// executedMsg is the answer to an abort, already written to the audit log.
type executedMsg struct {
	id       int
	result   model.Result
	auditErr string
}

// openForceTerminate offers to force-terminate t as the current snapshot shows it.
func (m *Model) openForceTerminate(t model.Txn) {
	switch {
	case m.o.ReadOnly:
		return
	case !t.State.Abortable():
		m.setStatus(statusInfo, fmt.Sprintf("%s is %s: force-terminate needs an Ongoing or PrepareEpochFence transaction", t.ID, t.State))
		return
	case !t.Described:
		m.setStatus(statusInfo, t.ID+" has not been described yet (epoch unknown); wait for the next refresh")
		return
	}
	m.openDialog(model.Action{
		Kind: model.ForceTerminate, TransactionalID: t.ID, Coordinator: t.Coordinator, State: t.State,
		ProducerID: t.ProducerID, ProducerEpoch: t.ProducerEpoch,
	})
}

// openAbortPartition offers to abort the hanging transaction on p.
func (m *Model) openAbortPartition(t model.Txn, p views.DetailPart) {
	if m.o.ReadOnly {
		return
	}
	pr, ok := p.AbortTarget(t.ProducerID)
	switch {
	case !ok:
		m.setStatus(statusInfo, fmt.Sprintf("%s-%d has no hanging transaction: every open one there is listed by its coordinator (use a to force-terminate)", p.Topic, p.Partition))
		return
	case p.Part.Leader < 0:
		m.setStatus(statusError, fmt.Sprintf("%s-%d has no known leader right now; try again after a refresh", p.Topic, p.Partition))
		return
	}
	m.openDialog(model.Action{
		Kind: model.AbortPartition, TopicPartition: p.TopicPartition, Leader: p.Part.Leader,
		ProducerID: pr.ProducerID, ProducerEpoch: pr.ProducerEpoch, CoordinatorEpoch: pr.CoordinatorEpoch,
		StartOffset: pr.CurrentTxnStartOffset,
	})
}

func (m *Model) openDialog(a model.Action) {
	m.dialogs++
	in := input{prompt: "> ", placeholder: "type " + confirmWord, limit: 32, focused: true}
	m.dialog = &abortDialog{id: m.dialogs, action: a, input: in}
	m.dialog.recheck(m)
}

// recheck warns, before the operator confirms, when a newer snapshot shows the
// target changed; Execute would refuse anyway, but better to know now.
func (d *abortDialog) recheck(m *Model) {
	if d.phase != views.DialogConfirm || m.snap == nil {
		return
	}
	var err error
	a := d.action
	if a.Kind == model.ForceTerminate {
		t, ok := m.snap.Txn(a.TransactionalID)
		err = model.CheckForceTerminate(a, t, ok)
	} else {
		p, ok := m.snap.Partition(a.TopicPartition)
		err = model.CheckAbortPartition(a, p, ok, m.byPID[a.ProducerID])
	}
	d.warn = ""
	if err != nil {
		d.warn = "The latest refresh says: " + err.Error() + ". Sending will most likely be refused; esc and look again."
	}
}

func (m *Model) updateDialog(msg tea.Msg) tea.Cmd {
	d := m.dialog
	kp, isKey := msg.(tea.KeyPressMsg)
	switch d.phase {
	case views.DialogSending:
		return nil // the answer is on its way; ctrl+c is handled above
	case views.DialogDone:
		// Nothing is being typed any more, so q quits as everywhere else.
		if isKey && key.Matches(kp, m.keys.Quit) {
			return m.quit()
		}
		if isKey && (key.Matches(kp, m.keys.Cancel) || key.Matches(kp, m.keys.Confirm)) {
			m.dialog = nil
		}
		return nil
	}
	if isKey {
		switch {
		case key.Matches(kp, m.keys.Cancel):
			m.dialog = nil
			m.setStatus(statusInfo, "abort cancelled; nothing was sent")
			return nil
		case key.Matches(kp, m.keys.Confirm):
			if strings.TrimSpace(d.input.Value()) != confirmWord {
				d.hint = "type " + confirmWord + " (exactly) and press enter, or esc to cancel"
				return nil
			}
			d.phase = views.DialogSending
			d.input.Blur()
			return m.execute(d)
		}
	}
	d.input.Update(msg)
	d.hint = ""
	return nil
}

// execute sends the action once; Execute re-reads the target and refuses if
// it changed. The attempt is written to the audit log before the UI hears of it.
func (m *Model) execute(d *abortDialog) tea.Cmd {
	admin, ctx, log, boot, now := m.o.Admin, m.ctx, m.o.Audit, m.o.Bootstrap, m.o.Now
	a, id := d.action, d.id
	return func() tea.Msg {
		r := admin.Execute(ctx, a)
		if r.Action.Kind == "" {
			r.Action = a
		}
		if r.At.IsZero() {
			r.At = now()
		}
		var auditErr string
		if log != nil {
			if err := log.Record(boot, r); err != nil {
				auditErr = err.Error()
			}
		}
		return executedMsg{id: id, result: r, auditErr: auditErr}
	}
}

func (m *Model) executed(msg executedMsg) tea.Cmd {
	r := msg.result
	kind := statusOK
	if !r.OK() {
		kind = statusError
	}
	text := fmt.Sprintf("%s %s: %s", r.Action.Kind, r.Action.Target(), r.Summary())
	if msg.auditErr != "" {
		text += " (audit log not written: " + msg.auditErr + ")"
	}
	m.setStatus(kind, text)
	if d := m.dialog; d != nil && d.id == msg.id {
		d.phase, d.result, d.auditErr = views.DialogDone, r, msg.auditErr
	}
	if m.quitAfterAbort {
		return m.quit()
	}
	return m.refresh()
}

func (m *Model) dialogData() views.DialogData {
	d := m.dialog
	a := d.action
	title := "FORCE-TERMINATE " + a.TransactionalID
	if a.Kind == model.AbortPartition {
		title = fmt.Sprintf("ABORT ON PARTITION %s-%d (producer %d)", a.Topic, a.Partition, a.ProducerID)
	}
	dd := views.DialogData{
		Title: title, Wire: a.Wire(), Consequences: a.Consequences(), Warning: d.warn,
		Input: d.input.View(views.DialogWidth(m.w)-4, m.st), Hint: d.hint, Phase: d.phase,
	}
	if m.o.Audit != nil {
		dd.AuditPath = m.o.Audit.Path()
	}
	if d.phase == views.DialogDone {
		dd.Result, dd.ResultOK, dd.AuditErr = d.result.Summary(), d.result.OK(), d.auditErr
		if d.result.ErrorCode != "" && !strings.Contains(dd.Result, d.result.ErrorCode) {
			dd.Result += " (" + d.result.ErrorCode + ")"
		}
	}
	return dd
}
