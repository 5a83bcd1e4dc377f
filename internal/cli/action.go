package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/charmbracelet/x/term"

	"github.com/txnscope/txnscope/internal/audit"
	"github.com/txnscope/txnscope/internal/escape"
	"github.com/txnscope/txnscope/internal/jsonout"
	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// errNotConfirmed: the operator did not type the word; nothing was sent.
var errNotConfirmed = errors.New("not confirmed; nothing sent")

// recheckEvery is how often the prompt re-reads the target while the
// operator reads and types, to warn before they confirm a replaced one.
var recheckEvery = 2 * time.Second

// actionJSON is the -o json result of abort, force-terminate and commit.
type actionJSON struct {
	Action        model.ActionKind `json:"action"`
	Target        string           `json:"target"`
	TargetBase64  string           `json:"target_base64,omitempty"` // the id's exact bytes when it is not UTF-8
	ProducerID    int64            `json:"producer_id"`
	ProducerEpoch int16            `json:"producer_epoch"`
	Request       string           `json:"request"`
	Attempt       string           `json:"attempt"`
	Sends         int              `json:"sends"`
	Sent          bool             `json:"sent"`
	Refused       bool             `json:"refused"`
	Unknown       bool             `json:"unknown"`
	OK            bool             `json:"ok"`
	ErrorCode     string           `json:"error_code,omitempty"`
	Result        string           `json:"result"`
	AuditLog      string           `json:"audit_log"`
	AuditError    string           `json:"audit_error,omitempty"`
	// A commit's: its verdict and what it rests on, as read again just
	// before the request (the plan's, when none was sent), and whether it
	// rests on the operator's word alone.
	Verdict     string             `json:"verdict,omitempty"`
	CompletedIn int64              `json:"completed_in,omitempty"`
	Evidence    string             `json:"evidence,omitempty"`
	RestsOn     *jsonout.BasisJSON `json:"rests_on,omitempty"`
	Unverified  bool               `json:"unverified,omitempty"`
}

// withVerdict is doc with a commit's verdict, v, added.
func (doc actionJSON) withVerdict(a model.Action, v model.Verdict) actionJSON {
	if a.Kind != model.Commit {
		return doc
	}
	b := jsonout.ExportBasis(v.Basis)
	doc.Verdict, doc.CompletedIn, doc.Evidence, doc.RestsOn, doc.Unverified = string(v.Kind), v.CompletedIn, v.Evidence, &b, a.Unverified
	return doc
}

// planner reads the cluster for what c asks to change.
type planner func(ctx context.Context, cl *kafkaadmin.Client, c config) (model.Action, error)

// runAction opens the audit log, plans the abort or force-terminate from what
// the cluster says now, asks for confirmation unless --yes, then lets the
// executor re-check, record and send it, exactly as the TUI does.
func runAction(ctx context.Context, cl *kafkaadmin.Client, c config, o out, std Stdio, plan planner) error {
	log := audit.New(c.auditLog).InContext(c.ctx.name)
	if err := log.Open(); err != nil {
		return refused(o, c, nil, log.Path(), fmt.Errorf("%s refused, nothing sent: %w", c.cmd, err))
	}
	defer log.Close()
	a, err := plan(ctx, cl, c)
	if err != nil {
		// The model's refusals say "refused:" themselves: once is enough.
		return refused(o, c, nil, log.Path(), fmt.Errorf("%s refused: %s", c.cmd, trimRefusedText(err.Error())))
	}
	if !c.one.yes {
		ok, err := confirm(ctx, std.In, std.Err, cl.Recheck, a, c.confirmPhrase(a.ConfirmWord()), log.Path())
		if err != nil {
			return refused(o, c, &a, log.Path(), err)
		}
		if !ok {
			return refused(o, c, &a, log.Path(), errNotConfirmed)
		}
	}
	rec := &model.Watched{Recorder: log.Begin(strings.Join(c.bootstrap, ","), a)}
	r := cl.Execute(ctx, a, rec)
	verdict := a.Verdict
	if rec.Seen != nil {
		verdict = rec.Seen.Verdict
	}
	request := a.Wire()
	if r.Request != "" {
		request = r.Request // where it went, should the coordinator have moved
	}
	var printErr error
	if o.json {
		printErr = o.emit(actionJSON{Action: a.Kind, Target: a.Target(), TargetBase64: jsonout.Base64(a.Target()), ProducerID: a.ProducerID, ProducerEpoch: a.ProducerEpoch,
			Request: request, Attempt: r.Attempt, Sends: r.Sends, Sent: r.Sent, Refused: r.Refused, Unknown: r.Unknown, OK: r.OK(),
			ErrorCode: r.ErrorCode, Result: r.Summary(), AuditLog: log.Path(), AuditError: r.AuditErr}.withVerdict(a, verdict), nil, nil)
	} else if r.OK() {
		// The request Go-quotes the id: Requote escapes it once, as the target before it.
		_, printErr = fmt.Fprintf(o.w, "%s: %s\n", escape.Text(fmt.Sprintf("%s %s: %s", a.Kind, a.Target(), r.Summary())), escape.Requote(request))
	}
	switch {
	case printErr != nil:
		return printErr
	case !r.OK():
		return fmt.Errorf("%s %s: %s", a.Kind, a.Target(), r.Summary())
	}
	return nil
}

// refused returns err, having first printed, under -o json, the document
// a script reads from every abort: one that says nothing was sent and why.
// planned is nil when the cluster was not read yet or refused the plan: the
// document then names what the flags asked for, and no request.
func refused(o out, c config, planned *model.Action, auditPath string, err error) error {
	if !o.json {
		return err
	}
	if c.cmd == cmdResolve {
		doc := resolveJSON{Job: c.one.job, Steps: []resolveStep{}, Result: err.Error(), AuditLog: auditPath}
		if perr := o.emit(doc, nil, nil); perr != nil {
			return errors.Join(err, perr)
		}
		return err
	}
	a, request := asked(c), ""
	if planned != nil {
		a, request = *planned, planned.Wire()
	}
	doc := actionJSON{Action: a.Kind, Target: a.Target(), TargetBase64: jsonout.Base64(a.Target()), ProducerID: a.ProducerID, ProducerEpoch: a.ProducerEpoch,
		Request: request, Refused: true, Result: err.Error(), AuditLog: auditPath}
	if planned != nil {
		doc = doc.withVerdict(a, a.Verdict)
	}
	if perr := o.emit(doc, nil, nil); perr != nil {
		return errors.Join(err, perr)
	}
	return err
}

// asked is the action the command's flags name, before the cluster said more.
func asked(c config) model.Action {
	if c.cmd == cmdCommit {
		return model.Action{Kind: model.Commit, TransactionalID: c.one.transactionalID, ProducerID: -1, ProducerEpoch: -1}
	}
	if c.cmd == cmdForceTerminate {
		return model.Action{Kind: model.ForceTerminate, TransactionalID: c.one.transactionalID, ProducerID: -1, ProducerEpoch: -1}
	}
	a := model.Action{Kind: model.AbortPartition, ProducerID: c.one.producerID, ProducerEpoch: c.one.producerEpoch}
	a.Topic, a.Partition = c.one.topic, c.one.partition
	return a
}

// readsTerminal reports whether r is a terminal someone can type on.
func readsTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

// confirm shows the transaction, exactly what will be sent and its
// consequences on w, and reports whether the operator typed the confirmation
// word. While they read and type, the target is re-read every recheckEvery and
// a warning printed as soon as it is no longer the transaction shown. A
// signal while waiting cancels.
func confirm(ctx context.Context, in io.Reader, w io.Writer, recheck func(context.Context, model.Action) error, a model.Action, word, auditPath string) (bool, error) {
	if _, err := io.WriteString(w, promptText(a, word, time.Now(), auditPath)); err != nil {
		return false, err
	}
	answer := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(in).ReadString('\n')
		answer <- line
	}()
	tick := time.NewTicker(recheckEvery)
	defer tick.Stop()
	warned := ""
	for {
		select {
		case line := <-answer:
			return strings.TrimSpace(line) == word, nil
		case <-ctx.Done():
			fmt.Fprintln(w)
			return false, errNotConfirmed
		case <-tick.C:
			err := recheck(ctx, a)
			if err == nil || err.Error() == warned || ctx.Err() != nil {
				continue
			}
			warned = err.Error()
			fmt.Fprintf(w, "\n! %s\n! Typing %s now will be refused; press enter to cancel and look again.\n%s",
				escape.Text(warned), word, typeLine(word))
		}
	}
}

// promptText is the one-shot confirmation: the same facts, request and
// consequences as the TUI's dialog. Each line is escaped on its own, so an id
// holding a line break or an escape sequence stays on its line, visibly.
func promptText(a model.Action, word string, now time.Time, auditPath string) string {
	var lines []string
	add := func(format string, args ...any) { lines = append(lines, escape.Text(fmt.Sprintf(format, args...))) }
	switch a.Kind {
	case model.ForceTerminate:
		add("Force-terminate %s", a.TransactionalID)
	case model.Commit:
		add("Commit %s", a.TransactionalID)
	default:
		add("Abort the open transaction of producer %d on %s-%d", a.ProducerID, a.Topic, a.Partition)
	}
	for _, f := range a.Facts(now, time.Local) {
		add("  %s", f)
	}
	if a.Kind == model.AbortPartition && a.IdleWaived {
		add("  The idle rule is set aside (--max-transaction-timeout 0): its transaction may still be live.")
	}
	lines = append(lines, "Sends "+escape.Requote(a.Wire())+".") // its id escaped once, as in the facts
	for _, c := range a.Consequences() {
		add("  - %s", c)
	}
	if a.Kind == model.Commit && !a.Unverified {
		add("Just before sending, it is re-read and refused unless it is this very transaction, and its checkpoint evidence is read again and must still say checkpointed; each request is written to %s before it goes out.", auditPath)
	} else {
		add("Just before sending, it is re-read and refused unless it is this very transaction; each request is written to %s before it goes out.", auditPath)
	}
	return strings.Join(lines, "\n") + "\n" + typeLine(word)
}

func typeLine(word string) string {
	return fmt.Sprintf("Type %s and press enter to send it (anything else cancels): ", word)
}
