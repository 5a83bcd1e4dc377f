package ui

import (
	"errors"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/txnscope/txnscope/model"
	"github.com/txnscope/txnscope/views"
)

// abortDialog is an abort waiting for confirmation, on its way, or answered.
type abortDialog struct {
	id     int // matches the reply to this dialog
	action model.Action
	input  input
	hint   string
	notice string // why this abort needs the longer confirmation
	warn   string // the target changed in a later refresh
	phase  views.DialogPhase
	result model.Result
}

// executedMsg is the answer to an abort, already in the audit log.
type executedMsg struct {
	id     int
	result model.Result
}

// forceTerminate offers to force-terminate t as the current snapshot shows it.
func (m *Model) forceTerminate(t model.Txn) {
	if m.o.ReadOnly {
		return
	}
	a, err := model.PlanForceTerminate(t)
	if err != nil {
		m.setStatus(statusInfo, err.Error())
		return
	}
	m.openDialog(a, m.verdictNotice(t.ID))
}

// verdictNotice is what Flink's checkpoints say aborting id loses ("" when
// there is nothing to say it from: no --flink, --flink-checkpoints, or no
// verdict).
func (m *Model) verdictNotice(id string) string {
	if m.data.flink == nil || m.data.snap == nil {
		return ""
	}
	for _, v := range m.jobOf(id).OpenVerdicts {
		if v.ID != id {
			continue
		}
		basis := " It rests on " + v.Basis.String() + "."
		switch v.Kind {
		case model.Checkpointed:
			return fmt.Sprintf("Checkpointed: %s. Aborting loses records Flink counts as delivered; C commits them here, or restoring the job from checkpoint %d does.",
				v.Evidence, v.CompletedIn) + basis
		case model.NotCheckpointed:
			return fmt.Sprintf("Not checkpointed: %s. Aborting loses nothing Flink counts as delivered.", v.Evidence) + basis
		default:
			return "Whether its checkpoint completed is not known: " + v.Evidence + "."
		}
	}
	return ""
}

// abortPartition offers to abort the hanging transaction on p; t is the
// transaction whose producer is preferred when it is one of the orphans.
func (m *Model) abortPartition(t model.Txn, p model.TxnPartition) {
	if m.o.ReadOnly || m.data.snap == nil {
		return
	}
	pr, ok := p.AbortTarget(t.ProducerID)
	if !ok {
		m.setStatus(statusInfo, fmt.Sprintf("%s-%d has no hanging transaction: every open one there is listed by its coordinator (use a to force-terminate)", p.Topic, p.Partition))
		return
	}
	a, err := model.PlanAbortPartition(p.Part, pr, m.data.snap.MaxTimeout(), m.now)
	notice := ""
	switch {
	case errors.Is(err, model.ErrNotIdle):
		// Offered, but only with the longer phrase: the operator sets the
		// rule aside knowingly, and it is on record that they did.
		a.IdleWaived = true
		notice = strings.TrimPrefix(err.Error(), model.ErrNotIdle.Error()+": ") + ". Type " + a.ConfirmWord() + " to send it regardless."
	case err != nil:
		m.setStatus(statusInfo, err.Error())
		return
	}
	m.openDialog(a, notice)
}

// openDialog opens the confirmation of a, once the audit log is known to be
// writable: an abort that could not be recorded is never offered.
func (m *Model) openDialog(a model.Action, notice string) {
	if m.o.Audit == nil {
		m.setStatus(statusError, "no audit log: aborts are not available")
		return
	}
	if err := m.o.Audit.Open(); err != nil {
		m.setStatus(statusError, "cannot abort: "+err.Error())
		return
	}
	m.dialogs++
	in := input{prompt: "> ", placeholder: "type " + a.ConfirmWord(), limit: 32, focused: true}
	m.dialog = &abortDialog{id: m.dialogs, action: a, input: in, notice: notice}
	m.dialog.recheck(m)
}

// recheck warns, before the operator confirms, when a newer snapshot shows the
// target changed (replaced by a newer transaction, committed, fenced…):
// Execute would refuse anyway, but better to know now.
func (d *abortDialog) recheck(m *Model) {
	if d.phase != views.DialogConfirm || m.data.snap == nil {
		return
	}
	var err error
	a := d.action
	switch a.Kind {
	case model.ForceTerminate:
		t, ok := m.data.snap.Txn(a.TransactionalID)
		err = model.CheckForceTerminate(a, t, ok)
	case model.Commit:
		t, ok := m.data.snap.Txn(a.TransactionalID)
		err = model.CheckCommit(a, t, ok)
	default:
		p, ok := m.data.snap.Partition(a.TopicPartition)
		err = model.CheckAbortPartition(a, p, ok, m.data.byPID[a.ProducerID], m.now)
	}
	d.warn = ""
	if err != nil {
		d.warn = "The latest refresh says: " + err.Error() + ". Sending will be refused; esc and look again."
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
			m.setStatus(statusInfo, cancelled(d.action))
			return nil
		case key.Matches(kp, m.keys.Confirm):
			word := d.action.ConfirmWord()
			if strings.TrimSpace(d.input.Value()) != word {
				d.hint = "type " + word + " (exactly) and press enter, or esc to cancel"
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

// execute hands the action to the one executor: it re-reads the target just
// before every request and writes the attempt to the audit log before it
// goes out. m.running lets the program wait for the result line on exit.
func (m *Model) execute(d *abortDialog) tea.Cmd {
	admin, ctx, log, boot := m.o.Admin, m.ctx, m.o.Audit, m.o.Bootstrap
	a, id := d.action, d.id
	m.running.Add(1)
	return func() tea.Msg {
		defer m.running.Done()
		return executedMsg{id: id, result: admin.Execute(ctx, a, log.Begin(boot, a))}
	}
}

func (m *Model) executed(msg executedMsg) tea.Cmd {
	r := msg.result
	kind := statusOK
	if !r.OK() {
		kind = statusError
	}
	m.setStatus(kind, fmt.Sprintf("%s %s: %s", r.Action.Kind, r.Action.Target(), r.Summary()))
	if d := m.dialog; d != nil && d.id == msg.id {
		d.phase, d.result = views.DialogDone, r
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
	switch a.Kind {
	case model.Commit:
		title = "COMMIT " + a.TransactionalID
	case model.AbortPartition:
		title = fmt.Sprintf("ABORT ON PARTITION %s-%d (producer %d)", a.Topic, a.Partition, a.ProducerID)
	}
	dd := views.DialogData{
		Title: title, Facts: a.Facts(m.now, m.loc), Wire: a.Wire(), Consequences: a.Consequences(),
		Notice: d.notice, Warning: d.warn, Word: a.ConfirmWord(),
		Input: d.input.View(views.DialogWidth(m.w)-4, m.st), Hint: d.hint, Phase: d.phase, AuditPath: m.o.Audit.Path(),
		Reverified: a.Kind == model.Commit && !a.Unverified,
	}
	if d.phase == views.DialogDone {
		dd.Result, dd.ResultOK, dd.Attempt = d.result.Summary(), d.result.OK(), d.result.Attempt
		dd.AuditFailed = d.result.AuditErr != ""
		if d.result.ErrorCode != "" && !strings.Contains(dd.Result, d.result.ErrorCode) {
			dd.Result += " (" + d.result.ErrorCode + ")"
		}
	}
	return dd
}

func cancelled(a model.Action) string {
	if a.Kind == model.Commit {
		return "commit cancelled; nothing was sent"
	}
	return "abort cancelled; nothing was sent"
}
