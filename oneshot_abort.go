package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/charmbracelet/x/term"

	"github.com/txnscope/txnscope/audit"
	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// confirmWord is what the operator types, as in the TUI's dialog.
const confirmWord = "abort"

// errNotConfirmed: the operator did not type the word; nothing was sent.
var errNotConfirmed = errors.New("not confirmed; nothing sent")

// actionJSON is the -o json result of abort and force-terminate.
type actionJSON struct {
	Action        model.ActionKind `json:"action"`
	Target        string           `json:"target"`
	ProducerID    int64            `json:"producer_id"`
	ProducerEpoch int16            `json:"producer_epoch"`
	Request       string           `json:"request"`
	Sent          bool             `json:"sent"`
	Refused       bool             `json:"refused"`
	Unknown       bool             `json:"unknown"`
	OK            bool             `json:"ok"`
	ErrorCode     string           `json:"error_code,omitempty"`
	Result        string           `json:"result"`
	AuditLog      string           `json:"audit_log"`
}

// runAction plans the abort or force-terminate from what the cluster says now,
// asks for confirmation unless --yes, then lets kafkaadmin re-check and send it,
// and records the attempt in the audit log like the TUI does.
func runAction(ctx context.Context, cl *kafkaadmin.Client, c config, stdin io.Reader, stderr io.Writer, o out) error {
	var (
		a   model.Action
		err error
	)
	if c.cmd == cmdForceTerminate {
		a, err = cl.PlanForceTerminate(ctx, c.one.transactionalID)
	} else {
		s := kafkaadmin.AbortSpec{TopicPartition: model.TopicPartition{Topic: c.one.topic, Partition: c.one.partition},
			StartOffset: c.one.startOffset, ProducerID: c.one.producerID, ProducerEpoch: c.one.producerEpoch,
			CoordinatorEpoch: c.one.coordinatorEpoch}
		a, err = cl.PlanAbort(ctx, s)
	}
	if err != nil {
		return fmt.Errorf("%s refused: %w", c.cmd, err)
	}
	log := audit.Open(c.auditLog)
	if !c.one.yes {
		ok, err := confirm(ctx, stdin, stderr, a, log.Path())
		if err != nil {
			return err
		}
		if !ok {
			return errNotConfirmed
		}
	}

	r := cl.Execute(ctx, a)
	auditErr := log.Record(strings.Join(c.bootstrap, ","), r)

	var printErr error
	if o.json {
		printErr = o.emit(actionJSON{Action: a.Kind, Target: a.Target(), ProducerID: a.ProducerID, ProducerEpoch: a.ProducerEpoch,
			Request: a.Wire(), Sent: r.Sent, Refused: r.Refused, Unknown: r.Unknown, OK: r.OK(), ErrorCode: r.ErrorCode,
			Result: r.Summary(), AuditLog: log.Path()}, nil, nil)
	} else if r.OK() {
		_, printErr = fmt.Fprintf(o.w, "%s %s: %s: %s\n", a.Kind, a.Target(), r.Summary(), a.Wire())
	}
	switch {
	case printErr != nil:
		return printErr
	case !r.OK():
		return fmt.Errorf("%s %s: %s", a.Kind, a.Target(), r.Summary())
	case auditErr != nil:
		return fmt.Errorf("%s %s was sent, but the audit log was not written: %w", a.Kind, a.Target(), auditErr)
	}
	return nil
}

// readsTerminal reports whether r is a terminal someone can type on.
func readsTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

// confirm shows exactly what will be sent and its consequences on w, and
// reports whether the operator typed the confirmation word. A signal while
// waiting cancels.
func confirm(ctx context.Context, in io.Reader, w io.Writer, a model.Action, auditPath string) (bool, error) {
	var b strings.Builder
	switch a.Kind {
	case model.ForceTerminate:
		fmt.Fprintf(&b, "Force-terminate %s (%s, producer id %d, epoch %d).\n", a.TransactionalID, a.State, a.ProducerID, a.ProducerEpoch)
	default:
		fmt.Fprintf(&b, "Abort the open transaction of producer %d (epoch %d) starting at offset %d on %s-%d.\n",
			a.ProducerID, a.ProducerEpoch, a.StartOffset, a.Topic, a.Partition)
	}
	fmt.Fprintf(&b, "Sends %s.\n", a.Wire())
	for _, line := range a.Consequences() {
		fmt.Fprintf(&b, "  - %s\n", line)
	}
	fmt.Fprintf(&b, "It is re-checked just before sending and refused if it changed; the attempt is appended to %s.\n", auditPath)
	fmt.Fprintf(&b, "Type %s and press enter to send it (anything else cancels): ", confirmWord)
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
		return strings.TrimSpace(line) == confirmWord, nil
	case <-ctx.Done():
		fmt.Fprintln(w)
		return false, errNotConfirmed
	}
}
