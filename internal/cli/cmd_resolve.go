package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/txnscope/txnscope/internal/audit"
	"github.com/txnscope/txnscope/internal/escape"
	"github.com/txnscope/txnscope/internal/jsonout"
	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// resolve ends a stopped Flink job's open transactions as Flink would have:
// it commits the ones whose checkpoint completed and force-terminates the
// ones whose checkpoint never did; it leaves open, and names, the ones it
// cannot judge. One confirmation for the plan; each transaction is then
// re-checked, audited and sent on its own, exactly as commit and
// force-terminate do.
const cmdResolve command = "resolve"

func checkResolve(c *config, _ func(string) bool) error {
	if strings.TrimSpace(c.one.job) == "" {
		return usagef("resolve needs --job PREFIX: the transactional-id prefix of the Flink job")
	}
	if len(c.flink.Clients) == 0 && len(c.flink.Retained) == 0 {
		return usagef("resolve needs --flink URL or --flink-checkpoints PREFIX=DIR: only the job's checkpoints say which transactions to commit")
	}
	return nil
}

// resolveJSON is resolve's -o json document.
type resolveJSON struct {
	Job      string        `json:"job"`
	Steps    []resolveStep `json:"steps"`
	OK       bool          `json:"ok"`
	Result   string        `json:"result"`
	AuditLog string        `json:"audit_log"`
}

// resolveStep is one transaction of the job: what was decided, and what
// became of it.
type resolveStep struct {
	TransactionalID       string `json:"transactional_id"`
	TransactionalIDBase64 string `json:"transactional_id_base64,omitempty"`
	Verdict               string `json:"verdict"`
	CompletedIn           int64  `json:"completed_in,omitempty"`
	Evidence              string `json:"evidence,omitempty"`
	// RestsOn names the Flink job and the checkpoint directory the
	// verdict rests on: the plan's, or the re-check's once one was read.
	RestsOn jsonout.BasisJSON `json:"rests_on"`
	// Action is commit or force-terminate; "" when it was left open, and
	// LeftOpen says why (or NotSent, once the batch stopped).
	Action    string `json:"action,omitempty"`
	LeftOpen  string `json:"left_open,omitempty"`
	Request   string `json:"request,omitempty"`
	Attempt   string `json:"attempt,omitempty"`
	NotSent   string `json:"not_sent,omitempty"`
	Sends     int    `json:"sends"`
	Refused   bool   `json:"refused"`
	Unknown   bool   `json:"unknown"`
	OK        bool   `json:"ok"`
	ErrorCode string `json:"error_code,omitempty"`
	Result    string `json:"result,omitempty"`
}

func runResolve(ctx context.Context, cl *kafkaadmin.Client, c config, o out, std Stdio) error {
	log := audit.New(c.auditLog).InContext(c.ctx.name)
	doc := resolveJSON{Job: c.one.job, Steps: []resolveStep{}, AuditLog: log.Path()}
	fail := func(err error) error {
		if o.json {
			doc.Result = err.Error()
			return errors.Join(err, o.emit(doc, nil, nil))
		}
		return err
	}
	if err := log.Open(); err != nil {
		return fail(fmt.Errorf("resolve refused, nothing sent: %w", err))
	}
	defer log.Close()
	steps, err := planResolve(ctx, cl, c)
	if err != nil {
		return fail(fmt.Errorf("resolve refused: %s", trimRefusedText(err.Error())))
	}
	if !c.one.yes {
		ok, err := confirmResolve(ctx, std.In, std.Err, c.one.job, steps, c.confirmPhrase("resolve"), log.Path())
		switch {
		case err != nil:
			return fail(err)
		case !ok:
			return fail(errNotConfirmed)
		}
	}
	// Commits first: they are what a dead job still owes its consumers.
	// The batch sends them one at a time and stops where the TUI's does:
	// a refusal that holds for the whole job, an audit log that failed, a
	// signal.
	batch, _ := model.ResolveBatch(steps)
	boot := strings.Join(c.bootstrap, ",")
	var bad []string
	emit := func(st resolveStep) error {
		doc.Steps = append(doc.Steps, st)
		if o.json {
			return nil
		}
		_, err := fmt.Fprintln(o.w, escape.Text(stepLine(st)))
		return err
	}
	for _, a := range batch.Actions {
		st := planned(stepOf(steps, a.TransactionalID))
		st.Action = string(a.Kind)
		if _, ok := batch.Next(); !ok {
			st.NotSent = "not sent: " + batch.Stopped
			bad = append(bad, fmt.Sprintf("%s %s not sent", a.Kind, a.TransactionalID))
			if err := emit(st); err != nil {
				return err
			}
			continue
		}
		rec := &model.Watched{Recorder: log.Begin(boot, a)}
		r := cl.Execute(ctx, a, rec)
		batch.Add(r, rec.Err)
		if ctx.Err() != nil {
			batch.Stop("txnscope is ending (signal)")
		}
		if rec.Seen != nil {
			v := rec.Seen.Verdict
			st.Verdict, st.CompletedIn, st.Evidence, st.RestsOn = string(v.Kind), v.CompletedIn, v.Evidence, jsonout.ExportBasis(v.Basis)
		}
		st.Request, st.Attempt, st.Sends = r.Request, r.Attempt, r.Sends
		st.Refused, st.Unknown, st.OK, st.ErrorCode, st.Result = r.Refused, r.Unknown, r.OK(), r.ErrorCode, r.Summary()
		if !r.OK() {
			bad = append(bad, fmt.Sprintf("%s %s not done", a.Kind, a.TransactionalID))
		}
		if err := emit(st); err != nil {
			return err
		}
	}
	for _, s := range steps {
		if s.Action == nil {
			bad = append(bad, s.Txn.ID+" left open")
			if err := emit(planned(s)); err != nil {
				return err
			}
		}
	}
	doc.OK = len(bad) == 0
	doc.Result = fmt.Sprintf("%d of %d transactions of %s resolved", len(steps)-len(bad), len(steps), c.one.job)
	if o.json {
		if err := o.emit(doc, nil, nil); err != nil {
			return err
		}
	}
	if !doc.OK {
		return fmt.Errorf("resolve %s: %s: %s", c.one.job, doc.Result, strings.Join(bad, "; "))
	}
	return nil
}

// planned is s's line as planned: its verdict, and why it is left open.
func planned(s model.ResolveStep) resolveStep {
	return resolveStep{TransactionalID: s.Txn.ID, TransactionalIDBase64: jsonout.Base64(s.Txn.ID), Verdict: string(s.Verdict.Kind),
		CompletedIn: s.Verdict.CompletedIn, Evidence: s.Verdict.Evidence, RestsOn: jsonout.ExportBasis(s.Verdict.Basis), LeftOpen: s.Why}
}

// stepOf is the step of id.
func stepOf(steps []model.ResolveStep, id string) model.ResolveStep {
	for _, s := range steps {
		if s.Txn.ID == id {
			return s
		}
	}
	return model.ResolveStep{}
}

// planResolve reads the cluster and the job's checkpoints once and plans
// each open transaction of the job.
func planResolve(ctx context.Context, cl *kafkaadmin.Client, c config) ([]model.ResolveStep, error) {
	r, err := reading(ctx, cl, c)
	if err != nil {
		return nil, err
	}
	return r.PlanResolve(model.JobID{Family: model.FlinkSink, Name: c.one.job}, flinkReader(c))
}

func trimRefusedText(s string) string { return strings.TrimPrefix(s, "refused: ") }

// stepLine is one transaction's line of the plan or of the outcome.
func stepLine(st resolveStep) string {
	v := st.Verdict
	if st.CompletedIn > 0 {
		v += fmt.Sprintf(" in %d", st.CompletedIn)
	}
	switch {
	case st.Action == "":
		return fmt.Sprintf("left open      %s (%s): %s", st.TransactionalID, v, st.LeftOpen)
	case st.NotSent != "":
		return fmt.Sprintf("%-14s %s (%s): %s", st.Action, st.TransactionalID, v, st.NotSent)
	case st.Result == "":
		return fmt.Sprintf("%-14s %s (%s): %s", st.Action, st.TransactionalID, v, st.Evidence)
	}
	return fmt.Sprintf("%-14s %s (%s): %s", st.Action, st.TransactionalID, v, st.Result)
}

// confirmResolve shows the plan on w and reports whether the operator typed
// resolve. Each transaction is re-checked when its turn comes, so a plan
// gone stale while they read is refused one transaction at a time.
func confirmResolve(ctx context.Context, in io.Reader, w io.Writer, job string, steps []model.ResolveStep, word, auditPath string) (bool, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "Resolve the open transactions of Flink job %s:\n", escape.Text(job))
	var bases []string
	for _, s := range steps {
		if basis := s.Verdict.Basis.String(); !slices.Contains(bases, basis) {
			bases = append(bases, basis)
		}
	}
	for _, basis := range bases {
		b.WriteString("  rests on: " + escape.Text(basis) + "\n")
	}
	for _, s := range steps {
		st := resolveStep{TransactionalID: s.Txn.ID, Verdict: string(s.Verdict.Kind), CompletedIn: s.Verdict.CompletedIn, Evidence: s.Verdict.Evidence, LeftOpen: s.Why}
		if s.Action != nil {
			st.Action = string(s.Action.Kind)
		}
		b.WriteString("  " + escape.Text(stepLine(st)) + "\n")
	}
	b.WriteString("  - commit: read_committed consumers see its records; Flink counts them as delivered, a restore from that checkpoint finds them committed.\n")
	b.WriteString("  - force-terminate: its records are discarded; a restored job replays them from its last completed checkpoint.\n")
	fmt.Fprintf(&b, "Each is re-read just before its request and refused unless it is the very transaction listed (a commit's checkpoint evidence is read again too); each request is written to %s before it goes out.\n",
		escape.Text(auditPath))
	b.WriteString("Type " + word + " and press enter to send them (anything else cancels): ")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return false, err
	}
	answer := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(in).ReadString('\n')
		answer <- line
	}()
	select {
	case line := <-answer:
		return strings.TrimSpace(line) == word, nil
	case <-ctx.Done():
		fmt.Fprintln(w)
		return false, errNotConfirmed
	}
}
