package ui

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/txnscope/txnscope/internal/testutil/uitest"
	"github.com/txnscope/txnscope/model"
)

// failedJob is what a JobManager says of warehouse-loader after it failed:
// checkpoint 121 completed, the run restored from 117 thirty seconds
// before the fixture's snapshot.
func failedJob(state string) *model.FlinkView {
	return &model.FlinkView{At: uitest.T0, Sources: []string{"http://jm:8081"}, Errs: []string{""},
		Jobs: []model.FlinkJob{{Source: "http://jm:8081", ID: "0123456789abcdef0123456789abcdef", Name: "warehouse-loader", State: state,
			StartMs: uitest.T0.Add(-time.Hour).UnixMilli(), Latest: cp(121, -5*time.Second),
			Restored: &model.FlinkCheckpoint{ID: 117, RestoreMs: uitest.T0.Add(-30 * time.Second).UnixMilli()},
			History:  []model.FlinkCheckpoint{*cp(121, -5*time.Second), *cp(120, -15*time.Second), *cp(117, -45*time.Second)}}}}
}

// cp is checkpoint id, triggered at T0+at and completed a second later.
func cp(id int64, at time.Duration) *model.FlinkCheckpoint {
	return &model.FlinkCheckpoint{ID: id, Status: "COMPLETED", TriggerMs: uitest.T0.Add(at).UnixMilli(), AckMs: uitest.T0.Add(at + time.Second).UnixMilli()}
}

// withFlink makes the harness read view, latest and afresh; reads counts
// the fresh reads.
func withFlink(view *model.FlinkView, reads *int) func(*Options) {
	return func(o *Options) {
		o.Flink = func() *model.FlinkView { return view }
		o.ReadFlink = func(context.Context) *model.FlinkView {
			if reads != nil {
				*reads++
			}
			return view
		}
	}
}

func (h *harness) commitOn(id string) {
	h.t.Helper()
	tx, ok := h.m.data.snap.Txn(id)
	if !ok {
		h.t.Fatalf("no %s", id)
	}
	h.m.commit(tx)
}

func TestCommitFlow(t *testing.T) {
	reads := 0
	h := jobsStarted(t, withFlink(failedJob("FAILED"), &reads))
	h.send(tea.WindowSizeMsg{Width: 120, Height: 40})
	h.selectID("warehouse-loader-1-121")
	h.press("C")
	if h.m.dialog == nil || h.m.dialog.batch.Actions[0].Kind != model.Commit {
		t.Fatalf("C did not open the commit dialog: %s", h.screen())
	}
	scr := strings.Join(strings.Fields(h.screen()), " ")
	mustContain(t, scr, "COMMIT warehouse-loader-1-121", "verdict checkpointed: inferred: Flink (http://jm:8081) says checkpoint 121",
		"EndTxn(COMMIT", "type commit")
	h.typeText("abort")
	h.press("enter")
	if len(h.admin.Executed()) != 0 {
		t.Fatal("abort confirmed a commit")
	}
	h.press("backspace", "backspace", "backspace", "backspace", "backspace")
	h.typeText("commit")
	h.press("enter")
	ex := h.admin.Executed()
	if len(ex) != 1 || ex[0].Kind != model.Commit || ex[0].TransactionalID != "warehouse-loader-1-121" || ex[0].Reverify == nil {
		t.Fatalf("executed %+v", ex)
	}
	// The executor asks again before it sends: a fresh read, not the one
	// the dialog showed.
	before := reads
	tx, _ := h.m.data.snap.Txn("warehouse-loader-1-121")
	ev, err := ex[0].Reverify(context.Background(), tx)
	if err != nil || ev.Verdict.Kind != model.Checkpointed || reads != before+1 {
		t.Errorf("reverify: %+v %v (reads %d→%d)", ev, err, before, reads)
	}
}

func TestCommitRefused(t *testing.T) {
	for _, c := range []struct {
		name, id string
		view     *model.FlinkView
		want     string
	}{
		{"not checkpointed", "warehouse-loader-0-118", failedJob("FAILED"), "is not checkpointed (inferred: it began before the job restored from checkpoint 117"},
		{"the job runs", "warehouse-loader-1-121", failedJob("RUNNING"), "its own committer commits warehouse-loader-1-121 once it can"},
		// SUSPENDED is a JobManager that lost its leadership: the job recovers.
		{"the job is suspended", "warehouse-loader-1-121", failedJob("SUSPENDED"), "SUSPENDED may run again (only FAILED, CANCELED and FINISHED are over)"},
		{"no Flink", "warehouse-loader-1-121", nil, "commit needs --flink URL or --flink-checkpoints"},
	} {
		t.Run(c.name, func(t *testing.T) {
			opt := withFlink(c.view, nil)
			if c.view == nil {
				opt = func(*Options) {}
			}
			h := jobsStarted(t, opt)
			h.send(tea.WindowSizeMsg{Width: 200, Height: 40})
			h.commitOn(c.id)
			if h.m.dialog != nil {
				t.Fatal("a commit txnscope cannot stand behind opened a dialog")
			}
			mustContain(t, h.screen(), c.want)
		})
	}
}

func TestCommitKeyAbsentReadOnly(t *testing.T) {
	h := jobsStarted(t, withFlink(failedJob("FAILED"), nil), func(o *Options) { o.ReadOnly = true })
	h.selectID("warehouse-loader-1-121")
	h.press("C")
	if h.m.dialog != nil {
		t.Fatal("C opened a dialog under --read-only")
	}
}

// C on the jobs view resolves the job: one confirmation, then its
// checkpointed transactions committed first, the rest force-terminated,
// one at a time.
func TestResolveJob(t *testing.T) {
	h := jobsStarted(t, withFlink(failedJob("FAILED"), nil))
	h.send(tea.WindowSizeMsg{Width: 160, Height: 48})
	h.press("J")
	for i := 0; i < 10; i++ {
		if j, ok := h.jobs().current(); ok && j.ID.Name == "warehouse-loader" {
			break
		}
		h.press("down")
	}
	h.press("C")
	if h.m.dialog == nil || !h.m.dialog.batch.Resolve {
		t.Fatalf("C on the job did not open the resolve dialog: %s", h.screen())
	}
	scr := strings.Join(strings.Fields(h.screen()), " ")
	mustContain(t, scr, "RESOLVE: COMMIT 3, FORCE-TERMINATE 2", "type resolve 5")
	h.typeText("abort 5")
	h.press("enter")
	if len(h.admin.Executed()) != 0 {
		t.Fatal("abort 5 confirmed a resolve")
	}
	for range len("abort 5") {
		h.press("backspace")
	}
	h.typeText("resolve 5")
	h.press("enter")
	var got []string
	for _, a := range h.admin.Executed() {
		got = append(got, string(a.Kind)+" "+a.TransactionalID)
	}
	want := "commit warehouse-loader-0-121, commit warehouse-loader-1-121, commit warehouse-loader-2-118, " +
		"force-terminate warehouse-loader-0-118, force-terminate warehouse-loader-0-119"
	if strings.Join(got, ", ") != want {
		t.Errorf("sent %v\nwant %s", got, want)
	}
	mustContain(t, h.screen(), "resolve job warehouse-loader: 3 committed, 2 force-terminated")
}

func TestResolveRefusedWhileTheJobRuns(t *testing.T) {
	h := jobsStarted(t, withFlink(failedJob("RESTARTING"), nil))
	h.send(tea.WindowSizeMsg{Width: 200, Height: 48})
	h.press("J")
	for i := 0; i < 10; i++ {
		if j, ok := h.jobs().current(); ok && j.ID.Name == "warehouse-loader" {
			break
		}
		h.press("down")
	}
	h.press("C")
	if h.m.dialog != nil {
		t.Fatal("resolve offered on a job Flink says is restarting")
	}
	mustContain(t, h.screen(), `Flink job "warehouse-loader" (0123456789abcdef0123456789abcdef, RESTARTING) at http://jm:8081: the job runs`)
}

// The TUI's commit rests on the JobManager's answer when it was planned and
// asks it again before the request: a JobManager that answers 500 then (one
// failing over), with the same retained directory still there, refuses the
// commit for the whole job; the directory does not speak for it.
func TestCommitRefusedWhenTheJobManagerFallsSilent(t *testing.T) {
	view := failedJob("FAILED")
	dir := "/chk/" + view.Jobs[0].ID
	view.Retained = map[string]model.RetainedDir{"warehouse-loader": {Dir: "/chk", Jobs: []model.RetainedJob{{Dir: dir, JobID: view.Jobs[0].ID,
		Checkpoints: []model.RetainedCheckpoint{{N: 121, Committables: []model.Committable{{ID: "warehouse-loader-1-121", ProducerID: 3012, Epoch: 1}}}}}}}}
	var reads int
	silent := *view
	silent.Jobs, silent.Errs = nil, []string{"http://jm:8081: GET /jobs/overview: 500 Internal Server Error"}
	h := jobsStarted(t, func(o *Options) {
		o.Flink = func() *model.FlinkView { return view }
		o.ReadFlink = func(context.Context) *model.FlinkView {
			reads++
			return &silent
		}
	})
	h.send(tea.WindowSizeMsg{Width: 120, Height: 40})
	h.commitOn("warehouse-loader-1-121")
	if h.m.dialog == nil {
		t.Fatalf("no commit dialog: %s", h.screen())
	}
	a := h.m.dialog.batch.Actions[0]
	if a.Verdict.Basis.Dir != dir || a.Verdict.Basis.FlinkJobID != view.Jobs[0].ID {
		t.Fatalf("the plan rests on %s", a.Verdict.Basis)
	}
	tx, _ := h.m.data.snap.Txn("warehouse-loader-1-121")
	ev, err := a.Reverify(context.Background(), tx)
	if err != nil || reads != 1 {
		t.Fatalf("reverify: %v, %d reads", err, reads)
	}
	err = model.CheckCommitEvidence(a, ev)
	var jw *model.JobWideError
	if !errors.As(err, &jw) || !strings.Contains(err.Error(), "the JobManager at http://jm:8081 did not answer (GET /jobs/overview: 500 Internal Server Error)") {
		t.Errorf("%v, want the commit refused for the whole job: the JobManager did not answer", err)
	}
}
