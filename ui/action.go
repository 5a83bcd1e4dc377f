package ui

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/txnscope/txnscope/model"
	"github.com/txnscope/txnscope/views"
)

// actionDialog is what the operator confirms at once, waiting, on its way or
// answered: one action (force-terminate, abort on a partition, commit) or
// several (a job's lingering ids, a job's resolution). Either way the
// actions go one at a time through the one executor, each re-read just
// before its own request and recorded before it goes out.
type actionDialog struct {
	id      int // matches the replies to this dialog
	of      string
	batch   model.Batch
	skipped []string          // ids left out, with why
	notice  string            // why it takes the longer confirmation, what it loses
	changed map[string]string // what a later refresh says changed, by target
	input   input
	hint    string
	phase   views.DialogPhase
}

// sentMsg is the answer to one action of a dialog, already in the audit
// log; auditErr is what the log could not take of it.
type sentMsg struct {
	id       int
	result   model.Result
	auditErr error
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
	m.openDialog("", model.Single(a), nil, m.verdictNotice(t.ID))
}

// verdictNotice is what Flink's checkpoints say aborting id loses ("" when
// there is nothing to say it from: no --flink, --flink-checkpoints, or no
// verdict).
func (m *Model) verdictNotice(id string) string {
	if m.data.flink == nil || m.data.snap == nil {
		return ""
	}
	job, _ := m.reading().Job(model.JobOf(id).Job)
	for _, v := range job.OpenVerdicts {
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
	m.openDialog("", model.Single(a), nil, notice)
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
	m.openDialog(of, b, skipped, "")
}

// openDialog opens the confirmation of b (what a batch is of, for the
// title; the ids left out, with why), once the audit log is known to be
// writable: an action that could not be recorded is never offered.
func (m *Model) openDialog(of string, b model.Batch, skipped []string, notice string) {
	if m.o.Audit == nil {
		m.setStatus(statusError, "no audit log: aborts are not available")
		return
	}
	if err := m.o.Audit.Open(); err != nil {
		m.setStatus(statusError, "cannot abort: "+err.Error())
		return
	}
	m.dialogs++
	if m.o.Profile.Protected {
		b.Protected = m.o.Profile.Name
	}
	in := input{prompt: "> ", placeholder: "type " + b.ConfirmWord(), limit: 32 + len(b.Protected), focused: true}
	m.dialog = &actionDialog{id: m.dialogs, of: of, batch: b, skipped: skipped, notice: notice, input: in}
	m.dialog.recheck(m)
}

// recheck marks, before the operator confirms, the actions a newer snapshot
// shows changed (replaced by a newer transaction, committed, fenced…): the
// executor would refuse them anyway, but better to know now.
func (d *actionDialog) recheck(m *Model) {
	if d.phase != views.DialogConfirm || m.data.snap == nil {
		return
	}
	d.changed = map[string]string{}
	for _, a := range d.batch.Actions {
		var err error
		if a.Kind == model.AbortPartition {
			p, ok := m.data.snap.Partition(a.TopicPartition)
			err = model.CheckAbortPartition(a, p, ok, m.data.byPID[a.ProducerID], m.now)
		} else {
			t, ok := m.data.snap.Txn(a.TransactionalID)
			err = model.SameTransaction(a, t, ok)
		}
		if err != nil {
			d.changed[a.Target()] = err.Error()
		}
	}
}

func (m *Model) updateDialog(msg tea.Msg) tea.Cmd {
	d := m.dialog
	kp, isKey := msg.(tea.KeyPressMsg)
	switch d.phase {
	case views.DialogSending:
		switch {
		case isKey && key.Matches(kp, m.keys.Quit):
			return m.forceQuit()
		case isKey && key.Matches(kp, m.keys.Cancel) && !d.batch.One:
			d.batch.Stop("stopped by the operator (esc)")
		}
		return nil
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
			m.setStatus(statusInfo, d.verb()+" cancelled; nothing was sent")
			return nil
		case key.Matches(kp, m.keys.Confirm):
			if !d.batch.Confirms(d.input.Value()) {
				d.hint = "type " + d.batch.ConfirmWord() + " (exactly) and press enter, or esc to cancel"
				return nil
			}
			if !views.ActionDialogFits(m.w, m.bodyHeight()) {
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

// sendNext hands the dialog's next action, alone, to the one executor: it
// re-reads the target just before every request and writes the attempt to
// the audit log before it goes out; its answer comes back (sent) before the
// next action goes. m.running lets the program wait for it on exit.
func (m *Model) sendNext(d *actionDialog) tea.Cmd {
	a, ok := d.batch.Next()
	if !ok {
		return nil
	}
	admin, ctx, log, boot, id := m.o.Admin, m.ctx, m.o.Audit, m.o.Bootstrap, d.id
	m.running.Add(1)
	return func() tea.Msg {
		defer m.running.Done()
		rec := &model.Watched{Recorder: log.Begin(boot, a)}
		r := admin.Execute(ctx, a, rec)
		return sentMsg{id: id, result: r, auditErr: rec.Err}
	}
}

func (m *Model) sent(msg sentMsg) tea.Cmd {
	d := m.dialog
	if d == nil || d.id != msg.id {
		// Its dialog is gone: the answer is in the audit log; say it.
		m.setResult(msg.result.OK(), resultLine(msg.result))
		return m.refresh()
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
	if d.batch.One {
		m.setResult(msg.result.OK(), resultLine(msg.result))
	} else {
		t := d.batch.Tally()
		m.setResult(t.OK(), d.verb()+" "+d.of+": "+t.String())
	}
	if m.quitAfterAbort {
		return m.quit()
	}
	return m.refresh()
}

func resultLine(r model.Result) string {
	return fmt.Sprintf("%s %s: %s", r.Action.Kind, r.Action.Target(), r.Summary())
}

func (m *Model) setResult(ok bool, s string) {
	kind := statusOK
	if !ok {
		kind = statusError
	}
	m.setStatus(kind, s)
}

// verb is what the dialog does, for the status line.
func (d *actionDialog) verb() string {
	switch {
	case d.batch.Resolve:
		return "resolve"
	case d.batch.One && d.batch.Actions[0].Kind == model.Commit:
		return "commit"
	case d.batch.One:
		return "abort"
	}
	return "force-terminate"
}

// sending reports an action in flight.
func (m *Model) sending() bool { return m.dialog != nil && m.dialog.phase == views.DialogSending }

func (m *Model) dialogData() views.ActionDialogData {
	d := m.dialog
	dd := views.ActionDialogData{
		Of: d.of, Skipped: d.skipped, Notice: d.notice, Word: d.batch.ConfirmWord(),
		Input: d.input.View(views.DialogWidth(m.w)-4, m.st), Hint: d.hint, Phase: d.phase, AuditPath: m.o.Audit.Path(),
		AuditFailed: d.batch.AuditFailed,
	}
	if d.batch.One {
		m.oneData(d, &dd)
	} else {
		m.batchData(d, &dd)
	}
	return dd
}

// oneData is the dialog of a single action: what identifies it, the request
// itself, and what it came to.
func (m *Model) oneData(d *actionDialog, dd *views.ActionDialogData) {
	a := d.batch.Actions[0]
	dd.Title = "FORCE-TERMINATE " + a.TransactionalID
	switch a.Kind {
	case model.Commit:
		dd.Title = "COMMIT " + a.TransactionalID
	case model.AbortPartition:
		dd.Title = fmt.Sprintf("ABORT ON PARTITION %s-%d (producer %d)", a.Topic, a.Partition, a.ProducerID)
	}
	dd.Facts, dd.Wire, dd.Consequences = a.Facts(m.now, m.loc), a.Wire(), a.Consequences()
	dd.Reverified = a.Kind == model.Commit && !a.Unverified
	if why, ok := d.changed[a.Target()]; ok && d.phase == views.DialogConfirm {
		dd.Warning = "The latest refresh says: " + why + ". Sending will be refused; esc and look again."
	}
	if d.phase == views.DialogDone && len(d.batch.Results) > 0 {
		r := d.batch.Results[0]
		dd.Result, dd.ResultOK, dd.Attempt = r.Summary(), r.OK(), r.Attempt
		if r.ErrorCode != "" && !strings.Contains(dd.Result, r.ErrorCode) {
			dd.Result += " (" + r.ErrorCode + ")"
		}
	}
}

// batchData is the dialog of several actions: a row each, what is sent to
// each, and the progress or the tally.
func (m *Model) batchData(d *actionDialog, dd *views.ActionDialogData) {
	n := len(d.batch.Actions)
	dd.Title = fmt.Sprintf("FORCE-TERMINATE %d LINGERING TRANSACTION%s", n, plural(n))
	dd.Consequences = model.BatchConsequences()
	dd.Wire = "InitProducerId(transactional.id <id>, producer id -1, epoch -1, transaction timeout <its timeout>)"
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
			dd.Progress += " so far " + t.Answered()
		}
		if d.batch.Stopped != "" {
			dd.Progress = fmt.Sprintf("sending %d of %d: stopping after the one in flight; %d will not be sent", k+1, n, n-k-1)
			dd.Stopped = d.batch.Stopped
		}
	case views.DialogDone:
		dd.Progress, dd.ResultOK = t.String(), t.OK()
		if t.Unsent > 0 {
			dd.Stopped = d.batch.Stopped
		}
		// What went wrong first: the operator reads those lines.
		slices.SortStableFunc(dd.Rows, func(a, b views.BatchRow) int { return boolOrder(b.Bad) - boolOrder(a.Bad) })
	}
}

func (m *Model) batchRow(d *actionDialog, i int, a model.Action) views.BatchRow {
	r := views.BatchRow{ID: a.TransactionalID, ProducerID: a.ProducerID, Epoch: a.ProducerEpoch,
		Age: m.now.Sub(a.Start), Timeout: time.Duration(a.TimeoutMs) * time.Millisecond}
	switch o := d.batch.Outcome(i); {
	case d.phase == views.DialogSending && i == len(d.batch.Results):
		r.Status = "sending…"
	case d.phase == views.DialogConfirm:
		if why, ok := d.changed[a.Target()]; ok {
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

// jobTitle is what a job's ids are called in the dialog and the status.
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
