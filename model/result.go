package model

import (
	"strings"
	"time"
)

// Recorder is the audit trail of one attempt (audit.Attempt): Sending must
// succeed before request number try, as request describes it (Action.WireTo),
// goes out, and Done records the outcome, whatever it is.
type Recorder interface {
	ID() string
	// Rests is the evidence the next request rests on, as just read
	// again: the lines written from then on carry it, not the plan's.
	Rests(ev CommitEvidence)
	Sending(try int, request string) error
	Done(r Result) error
}

// Watched is a Recorder that keeps what the one who sent the request needs
// of it: the first write the audit log could not take (a batch stops before
// its next action on it, whatever the executor made of it), and the
// evidence the request rested on as read again just before it.
type Watched struct {
	Recorder
	Err  error
	Seen *CommitEvidence
}

func (w *Watched) Rests(ev CommitEvidence) {
	w.Seen = &ev
	w.Recorder.Rests(ev)
}

func (w *Watched) Sending(try int, request string) error {
	return w.note(w.Recorder.Sending(try, request))
}

func (w *Watched) Done(r Result) error { return w.note(w.Recorder.Done(r)) }

func (w *Watched) note(err error) error {
	if err != nil && w.Err == nil {
		w.Err = err
	}
	return err
}

// Result is the outcome of one abort attempt.
type Result struct {
	Action Action
	At     time.Time
	// Attempt joins the audit log's lines of this attempt.
	Attempt string
	// Refused is set when nothing was sent: the re-check, the audit log or
	// a signal stopped it first.
	Refused bool
	// Sent is set once a request went out; Sends counts them (a retry after
	// an answer that said nothing happened is another one), and Request is
	// the last one as sent.
	Sent    bool
	Sends   int
	Request string
	// ErrorCode is the broker's error name when it answered with one.
	ErrorCode string
	// Err is any failure, in words.
	Err string
	// Unknown is set when the request may or may not have taken effect
	// (timeout, dropped connection, a signal while it was in flight).
	Unknown bool
	// After is what a re-read showed once the broker had answered.
	After string
	// AuditErr is set when the attempt's result could not be appended to
	// the audit log.
	AuditErr string
	// JobWide is set when the refusal holds for the whole job (a
	// JobWideError: Flink says the job may run, or the evidence's source
	// went silent or changed): a batch sends nothing more.
	JobWide bool
}

// OK reports a request sent, accepted by the broker, and on record.
func (r Result) OK() bool {
	return r.Sent && r.Err == "" && r.ErrorCode == "" && !r.Unknown && r.AuditErr == ""
}

// Summary is one line for the UI, the command line and the audit log.
func (r Result) Summary() string {
	s := r.outcome()
	if r.After != "" {
		s += "; " + r.After
	}
	if r.AuditErr != "" {
		s += "; the audit log was NOT written: " + r.AuditErr
	}
	return s
}

func (r Result) outcome() string {
	switch {
	case r.Refused:
		return r.Err
	case r.Unknown:
		return "unknown outcome, re-check: " + r.Err
	case strings.HasSuffix(r.ErrorCode, "_AUTHORIZATION_FAILED"):
		return "refused by the broker: " + r.ErrorCode + ": " + r.Err + " (" + r.Action.needs() + ")"
	case r.ErrorCode != "" && r.Err != "":
		return "broker answered " + r.ErrorCode + ": " + r.Err
	case r.ErrorCode != "":
		return "broker answered " + r.ErrorCode
	case r.Err != "":
		return "failed: " + r.Err
	}
	return "sent; the broker accepted it"
}
