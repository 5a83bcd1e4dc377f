package ui

import (
	"fmt"

	"github.com/txnscope/txnscope/model"
)

// A commit, and a job's resolution, are planned by model.Reading on the
// latest reading of Flink's JobManagers and retained checkpoints
// (Options.Flink), with the history the jobs view has; a fresh one
// (Options.ReadFlink) is read just before every request.

// reading is what the screens show now, for planning.
func (m *Model) reading() model.Reading {
	return model.Reading{Snap: m.data.snap, Flink: m.data.flink, Pins: m.data.pins, History: m.hist, Now: m.now}
}

// noEvidence is why the UI offers no commit without --flink or
// --flink-checkpoints.
const noEvidence = "commit needs --flink URL or --flink-checkpoints PREFIX=DIR: only Flink's checkpoints say a transaction's records are to be kept"

// flinkNotReady says why a commit or resolve cannot be planned yet ("" when
// it can).
func (m *Model) flinkNotReady() string {
	switch {
	case m.o.ReadFlink == nil:
		return noEvidence
	case m.data.flink == nil:
		return "Flink's JobManagers and checkpoints have not been read yet; try again in a moment"
	}
	return ""
}

// commit offers to commit t: the commit Flink's committer never sent.
func (m *Model) commit(t model.Txn) {
	if m.o.ReadOnly || m.data.snap == nil {
		return
	}
	if why := m.flinkNotReady(); why != "" {
		m.setStatus(statusInfo, why)
		return
	}
	a, err := m.reading().PlanCommit(t.ID, false, m.o.ReadFlink)
	if err != nil {
		m.setStatus(statusInfo, err.Error())
		return
	}
	m.openDialog("", model.Single(a), nil, "")
}

// resolveJob offers to resolve j: commit its checkpointed transactions,
// force-terminate the ones whose checkpoint never completed.
func (m *Model) resolveJob(j *model.Job) {
	if m.o.ReadOnly || m.data.snap == nil {
		return
	}
	if why := m.flinkNotReady(); why != "" {
		m.setStatus(statusInfo, "resolve: "+why)
		return
	}
	steps, err := m.reading().PlanResolve(j.ID, m.o.ReadFlink)
	if err != nil {
		m.setStatus(statusInfo, "resolve: "+err.Error())
		return
	}
	b, left := model.ResolveBatch(steps)
	if len(b.Actions) == 0 {
		m.setStatus(statusInfo, fmt.Sprintf("resolve %s: nothing txnscope can judge: %s", j.ID.Name, left[0]))
		return
	}
	m.openDialog("job "+j.ID.Name, b, left, "")
}
