package ui

import (
	"fmt"
	"slices"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/txnscope/txnscope/model"
	"github.com/txnscope/txnscope/views"
)

// batchDialog is the force-terminate of several ids (a job's lingering
// transactions) confirmed once: the ids then go one at a time, each through
// the same executor as a single abort, each re-read just before its own
// request and recorded before it goes out.
type batchDialog struct {
	id      int // matches the replies to this dialog
	of      string
	batch   model.Batch
	skipped []string
	changed map[string]string // what a later refresh says changed, by id
	input   input
	hint    string
	phase   views.DialogPhase
}

// batchSentMsg is the answer to one id of a batch, already in the audit
// log; auditErr is what the log could not take of it.
type batchSentMsg struct {
	id       int
	result   model.Result
	auditErr error
}

// watched is an audit record that remembers its first failure, so that a
// batch stops before its next id whatever the executor made of it.
type watched struct {
	model.Recorder
	err error
}

func (w *watched) Sending(try int, request string) error {
	return w.note(w.Recorder.Sending(try, request))
}
func (w *watched) Done(r model.Result) error { return w.note(w.Recorder.Done(r)) }

func (w *watched) note(err error) error {
	if err != nil && w.err == nil {
		w.err = err
	}
	return err
}

// forceTerminateAll offers to force-terminate ids (what names them, for the
// title: the job, or one of its subtasks) as the current snapshot shows them.
func (m *Model) forceTerminateAll(of string, ids []string) {
	if m.o.ReadOnly || m.data.snap == nil {
		return
	}
	if len(ids) == 0 {
		m.setStatus(statusInfo, "no lingering transactions in "+of+": nothing to force-terminate")
		return
	}
	b, skipped := model.PlanBatch(m.data.snap, ids)
	if len(b.Actions) == 0 {
		m.setStatus(statusInfo, "nothing to force-terminate: "+skipped[0])
		return
	}
	m.openBatch(of, b, skipped)
}

// openBatch opens the confirmation of b (what it is of, for the title; the
// ids left out, with why), once the audit log is known to be writable.
func (m *Model) openBatch(of string, b model.Batch, skipped []string) {
	if m.o.Audit == nil {
		m.setStatus(statusError, "no audit log: aborts are not available")
		return
	}
	if err := m.o.Audit.Open(); err != nil {
		m.setStatus(statusError, "cannot abort: "+err.Error())
		return
	}
	m.dialogs++
	in := input{prompt: "> ", placeholder: "type " + b.ConfirmWord(), limit: 32, focused: true}
	m.bulk = &batchDialog{id: m.dialogs, of: of, batch: b, skipped: skipped, input: in}
	m.bulk.recheck(m)
}

// recheck marks, before the operator confirms, the ids a newer snapshot
// shows changed: the executor would refuse them anyway.
func (d *batchDialog) recheck(m *Model) {
	if d.phase != views.DialogConfirm || m.data.snap == nil {
		return
	}
	d.changed = map[string]string{}
	for _, a := range d.batch.Actions {
		t, ok := m.data.snap.Txn(a.TransactionalID)
		check := model.CheckForceTerminate
		if a.Kind == model.Commit {
			check = model.CheckCommit
		}
		if err := check(a, t, ok); err != nil {
			d.changed[a.TransactionalID] = err.Error()
		}
	}
}

func (m *Model) updateBatch(msg tea.Msg) tea.Cmd {
	d := m.bulk
	kp, isKey := msg.(tea.KeyPressMsg)
	switch d.phase {
	case views.DialogSending:
		switch {
		case isKey && key.Matches(kp, m.keys.Quit):
			return m.forceQuit()
		case isKey && key.Matches(kp, m.keys.Cancel):
			d.batch.Stop("stopped by the operator (esc)")
		}
		return nil
	case views.DialogDone:
		if isKey && key.Matches(kp, m.keys.Quit) {
			return m.quit()
		}
		if isKey && (key.Matches(kp, m.keys.Cancel) || key.Matches(kp, m.keys.Confirm)) {
			m.bulk = nil
		}
		return nil
	}
	if isKey {
		switch {
		case key.Matches(kp, m.keys.Cancel):
			m.bulk = nil
			m.setStatus(statusInfo, d.verb()+" cancelled; nothing was sent")
			return nil
		case key.Matches(kp, m.keys.Confirm):
			if !d.batch.Confirms(d.input.Value()) {
				d.hint = "type " + d.batch.ConfirmWord() + " (exactly) and press enter, or esc to cancel"
				return nil
			}
			if !views.BatchDialogFits(m.w, m.bodyHeight()) {
				d.hint = "the terminal is too small to show what would be sent"
				return nil
			}
			d.phase = views.DialogSending
			d.input.Blur()
			return m.sendNext(d)
		}
	}
	d.input.Update(msg)
	d.hint = ""
	return nil
}

// sendNext sends the batch's next id, alone: its answer, in the audit log,
// comes back before the one after it goes (batchSent). m.running lets the
// program wait for it on exit.
func (m *Model) sendNext(d *batchDialog) tea.Cmd {
	a, ok := d.batch.Next()
	if !ok {
		return nil
	}
	admin, ctx, log, boot, id := m.o.Admin, m.ctx, m.o.Audit, m.o.Bootstrap, d.id
	m.running.Add(1)
	return func() tea.Msg {
		defer m.running.Done()
		rec := &watched{Recorder: log.Begin(boot, a)}
		r := admin.Execute(ctx, a, rec)
		return batchSentMsg{id: id, result: r, auditErr: rec.err}
	}
}

func (m *Model) batchSent(msg batchSentMsg) tea.Cmd {
	d := m.bulk
	if d == nil || d.id != msg.id {
		return nil
	}
	d.batch.Add(msg.result, msg.auditErr)
	switch {
	case m.quitAfterAbort:
		d.batch.Stop("stopped: txnscope is quitting")
	case m.ctx.Err() != nil:
		// A signal (SIGTERM, SIGHUP, SIGINT) ends the program: its quit may
		// come after this answer, and nothing more may go out meanwhile.
		d.batch.Stop("stopped: txnscope is ending (signal)")
	}
	if !d.batch.Over() {
		return m.sendNext(d)
	}
	d.phase = views.DialogDone
	t := d.batch.Tally()
	kind := statusOK
	if !t.OK() {
		kind = statusError
	}
	m.setStatus(kind, d.verb()+" "+d.of+": "+t.String())
	if m.quitAfterAbort {
		return m.quit()
	}
	return m.refresh()
}

// verb is what the batch does, for the status line.
func (d *batchDialog) verb() string {
	if d.batch.Resolve {
		return "resolve"
	}
	return "force-terminate"
}

// sendingBatch reports a batch with an id in flight.
func (m *Model) sendingBatch() bool { return m.bulk != nil && m.bulk.phase == views.DialogSending }

func (m *Model) batchData() views.BatchDialogData {
	d := m.bulk
	n := len(d.batch.Actions)
	dd := views.BatchDialogData{
		Title: fmt.Sprintf("FORCE-TERMINATE %d LINGERING TRANSACTION%s", n, plural(n)), Of: d.of,
		Skipped: d.skipped, Consequences: model.BatchConsequences(), Word: d.batch.ConfirmWord(),
		Input: d.input.View(views.DialogWidth(m.w)-4, m.st), Hint: d.hint, Phase: d.phase, AuditPath: m.o.Audit.Path(),
		Wire: "InitProducerId(transactional.id <id>, producer id -1, epoch -1, transaction timeout <its timeout>)",
	}
	if d.batch.Resolve {
		commits := 0
		for _, a := range d.batch.Actions {
			if a.Kind == model.Commit {
				commits++
			}
		}
		dd.Title = fmt.Sprintf("RESOLVE: COMMIT %d, FORCE-TERMINATE %d", commits, n-commits)
		for _, a := range d.batch.Actions {
			if b := a.Verdict.Basis.String(); !slices.Contains(dd.RestsOn, b) {
				dd.RestsOn = append(dd.RestsOn, b)
			}
		}
		dd.Consequences = model.ResolveConsequences()
		dd.Wire = "EndTxn(COMMIT, transactional.id <id>, its own producer id and epoch) for a checkpointed one; " +
			"InitProducerId(transactional.id <id>, producer id -1, epoch -1, transaction timeout <its timeout>) for the others"
	}
	for i, a := range d.batch.Actions {
		dd.Rows = append(dd.Rows, m.batchRow(d, i, a))
	}
	t := d.batch.Tally()
	switch d.phase {
	case views.DialogConfirm:
		if c := len(d.changed); c > 0 {
			dd.Warning = fmt.Sprintf("The latest refresh says %d of the %d changed since shown (marked): sending those will be refused; "+
				"esc and look again, or send the rest.", c, n)
		}
	case views.DialogSending:
		k := len(d.batch.Results)
		dd.Progress = fmt.Sprintf("sending %d of %d, one at a time…", k+1, n)
		if k > 0 {
			dd.Progress += " so far " + d.batch.Tally().Answered()
		}
		if d.batch.Stopped != "" {
			dd.Progress = fmt.Sprintf("sending %d of %d: stopping after the one in flight; %d will not be sent", k+1, n, n-k-1)
			dd.Stopped = d.batch.Stopped
		}
	case views.DialogDone:
		dd.Progress, dd.ProgressOK, dd.AuditFailed = t.String(), t.OK(), d.batch.AuditFailed
		if t.Unsent > 0 {
			dd.Stopped = d.batch.Stopped
		}
		// What went wrong first: the operator reads those lines.
		slices.SortStableFunc(dd.Rows, func(a, b views.BatchRow) int { return boolOrder(b.Bad) - boolOrder(a.Bad) })
	}
	return dd
}

func (m *Model) batchRow(d *batchDialog, i int, a model.Action) views.BatchRow {
	r := views.BatchRow{ID: a.TransactionalID, ProducerID: a.ProducerID, Epoch: a.ProducerEpoch,
		Age: m.now.Sub(a.Start), Timeout: time.Duration(a.TimeoutMs) * time.Millisecond}
	switch o := d.batch.Outcome(i); {
	case d.phase == views.DialogSending && i == len(d.batch.Results):
		r.Status = "sending…"
	case d.phase == views.DialogConfirm:
		if why, ok := d.changed[a.TransactionalID]; ok {
			r.Status, r.Bad, r.Reason = "changed", true, why
		} else if d.batch.Resolve {
			r.Status = "abort"
			if a.Verdict.Evidence != "" {
				r.Reason = "not checkpointed: " + a.Verdict.Evidence
			}
			if a.Kind == model.Commit {
				r.Status, r.Reason = "commit", "checkpointed: "+a.Verdict.Evidence
			}
		}
	case o == model.BatchWaiting:
	case o == model.BatchTerminated || o == model.BatchCommitted:
		r.Status = "ok"
		if d.batch.Resolve {
			r.Status = string(o)
		}
	default:
		r.Status, r.Bad = string(o), true
		if i < len(d.batch.Results) {
			r.Reason = d.batch.Results[i].Summary()
		}
	}
	return r
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "S"
}

func boolOrder(b bool) int {
	if b {
		return 1
	}
	return 0
}

// jobTitle is what a job's ids are called in the batch dialog and the status.
func jobTitle(j *model.Job) string {
	if j.ID.Family == model.OtherFamily {
		return "the ids of no recognised job"
	}
	return fmt.Sprintf("job %s (%s)", j.ID.Name, j.ID.Family)
}

// forceTerminateJob is a on the jobs view: the job's lingering ids.
func (s *jobsScreen) forceTerminateJob() {
	if j, ok := s.current(); ok {
		s.e.host.forceTerminateAll(jobTitle(j), slices.Clone(j.Lingering))
	}
}

// forceTerminateUnit is a on a job's subtasks: that subtask's lingering ids
// (the jobs view's a takes the whole job's).
func (s *jobScreen) forceTerminateUnit() {
	j, u, ok := s.current()
	if !ok {
		return
	}
	of := jobTitle(j) + ", subtask " + u.Name
	if len(u.Lingering) == 0 && len(j.Lingering) > 0 {
		s.e.host.setStatus(statusInfo, fmt.Sprintf("subtask %s has no lingering transactions; a on the jobs view force-terminates the job's %d",
			u.Name, len(j.Lingering)))
		return
	}
	s.e.host.forceTerminateAll(of, slices.Clone(u.Lingering))
}

// batchShort is the footer under a batch dialog.
func (k keyMap) batchShort(phase views.DialogPhase) []key.Binding {
	if phase != views.DialogSending {
		return k.dialogShort(phase)
	}
	stop, quit := k.Cancel, k.ForceQuit
	stop.SetHelp("esc", "stop after this one")
	quit.SetHelp("ctrl+c/q", "quit after this one")
	return []key.Binding{stop, quit}
}
