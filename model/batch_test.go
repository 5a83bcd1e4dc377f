package model

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestBatchConfirmWordStatesTheCount(t *testing.T) {
	for _, c := range []struct {
		n     int
		typed string
		want  bool
	}{
		{3, "abort 3", true},
		{3, "  abort 3 ", true},
		{7, "abort 7", true},
		{1, "abort 1", true},
		{3, "abort", false},
		{3, "abort 2", false},
		{3, "abort 4", false},
		{3, "abort 03", false},
		{3, "abort  3", false},
		{3, "Abort 3", false},
		{3, "ABORT 3", false},
		{3, "abort3", false},
		{3, "3", false},
		{3, "abort 3 now", false},
		{3, "abort anyway", false},
		{12, "abort 1", false},
		{12, "abort 12", true},
		{0, "abort 0", false}, // nothing to send is never confirmed
	} {
		b := Batch{Actions: make([]Action, c.n)}
		if got := b.Confirms(c.typed); got != c.want {
			t.Errorf("%d actions, typed %q: confirms %v, want %v", c.n, c.typed, got, c.want)
		}
		if w := BatchConfirmWord(c.n); c.n > 0 && w != "abort "+strconv.Itoa(c.n) {
			t.Errorf("BatchConfirmWord(%d) = %q", c.n, w)
		}
	}
}

func TestPlanBatchLeavesOutWhatCannotBePlanned(t *testing.T) {
	now := time.Date(2026, 3, 14, 3, 0, 0, 0, time.UTC)
	open := func(id string) Txn {
		return Txn{ID: id, State: Ongoing, ProducerID: 1, Described: true, StartUnixMs: now.Add(-time.Minute).UnixMilli()}
	}
	s := &Snapshot{Txns: []Txn{
		open("job-0-1"), open("job-1-1"),
		{ID: "job-2-1", State: Ongoing, ProducerID: 3}, // not described yet
		{ID: "job-3-1", State: CompleteCommit, ProducerID: 4, Described: true},
	}}
	s.Sort()
	b, skipped := PlanBatch(s, []string{"job-0-1", "job-1-1", "job-2-1", "job-3-1", "job-4-1"})
	if len(b.Actions) != 2 || b.Actions[0].TransactionalID != "job-0-1" || b.Actions[1].TransactionalID != "job-1-1" {
		t.Fatalf("planned %+v, want job-0-1 and job-1-1", b.Actions)
	}
	if len(skipped) != 3 || !strings.Contains(skipped[0], "not been described") || !strings.Contains(skipped[2], "job-4-1 is no longer listed") {
		t.Errorf("skipped %q", skipped)
	}
	if b.ConfirmWord() != "abort 2" {
		t.Errorf("confirm word %q, want abort 2", b.ConfirmWord())
	}
}

func TestBatchGoesOnPastRefusalsAndStopsAtTheAuditLog(t *testing.T) {
	ok := Result{Sent: true, Sends: 1}
	refused := Result{Refused: true, Err: "refused: this is a newer transaction"}
	unknown := Result{Sent: true, Unknown: true, Err: "timeout"}
	unrecorded := Result{Sent: true, Sends: 1, AuditErr: "audit log: no space left on device"}
	auditRefused := Result{Refused: true, Err: "refused: audit log: no space; nothing sent"}
	for _, c := range []struct {
		name    string
		results []Result
		errs    []error
		stop    string // Stop called after the results
		tally   string
		over    bool
		stopped string
	}{
		{"all ok", []Result{ok, ok, ok}, nil, "", "3 force-terminated", true, ""},
		{"a refusal does not stop the rest", []Result{ok, refused, ok}, nil, "", "2 force-terminated, 1 refused", true, ""},
		{"an unknown outcome does not stop the rest", []Result{unknown, ok}, nil, "", "1 force-terminated, 1 unknown, 1 waiting", false, ""},
		{"a result the log would not take stops it", []Result{ok, unrecorded}, nil, "", "1 force-terminated, 1 failed, 1 not sent", true, "the audit log failed"},
		{"a record that failed before sending stops it", []Result{ok, auditRefused}, []error{nil, errors.New("audit log: no space")}, "", "1 force-terminated, 1 refused, 1 not sent", true, "nothing more is sent unrecorded"},
		{"stopped by the operator", []Result{ok}, nil, "stopped by the operator", "1 force-terminated, 2 not sent", true, "stopped by the operator"},
		{"nothing yet", nil, nil, "", "3 waiting", false, ""},
	} {
		b := Batch{Actions: make([]Action, 3)}
		for i, r := range c.results {
			if _, ok := b.Next(); !ok {
				t.Fatalf("%s: Next refused result %d", c.name, i)
			}
			var err error
			if i < len(c.errs) {
				err = c.errs[i]
			}
			b.Add(r, err)
		}
		if c.stop != "" {
			b.Stop(c.stop)
		}
		if got := b.Tally().String(); got != c.tally {
			t.Errorf("%s: tally %q, want %q", c.name, got, c.tally)
		}
		if b.Over() != c.over {
			t.Errorf("%s: over %v, want %v", c.name, b.Over(), c.over)
		}
		if _, more := b.Next(); more == c.over {
			t.Errorf("%s: Next says more %v with over %v", c.name, more, c.over)
		}
		if !strings.Contains(b.Stopped, c.stopped) || (c.stopped == "") != (b.Stopped == "") {
			t.Errorf("%s: stopped %q, want %q", c.name, b.Stopped, c.stopped)
		}
	}
}

func TestTallyOK(t *testing.T) {
	for _, c := range []struct {
		t    Tally
		want bool
	}{
		{Tally{Terminated: 3}, true},
		{Tally{Terminated: 2, Refused: 1}, false},
		{Tally{Terminated: 2, Unsent: 1}, false},
		{Tally{Terminated: 2, Unknown: 1}, false},
		{Tally{}, false},
	} {
		if c.t.OK() != c.want {
			t.Errorf("%+v OK %v", c.t, !c.want)
		}
	}
}
