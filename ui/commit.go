package ui

import (
	"context"
	"fmt"

	"github.com/txnscope/txnscope/model"
)

// A commit, and a job's resolution, rest on the latest reading of Flink's
// JobManagers and retained checkpoints (Options.Flink) when planned, and on
// a fresh one (Options.ReadFlink) just before every request.

// jobOf is the job id belongs to, as the jobs view groups it with the
// latest reading of Flink (a bare Job of that id when none is grouped).
func (m *Model) jobOf(id string) model.Job {
	want := model.JobOf(id).Job
	g := model.Group(m.data.snap, m.data.pins)
	g.Flink = m.data.flink
	for _, j := range g.Jobs(m.hist, m.now) {
		if j.ID == want {
			return j
		}
	}
	return model.Job{ID: want}
}

// commitEvidence is what the latest reading says of t, and its job.
func (m *Model) commitEvidence(t model.Txn) (model.Job, model.CommitEvidence) {
	job := m.jobOf(t.ID)
	return job, model.CommitEvidenceOf(m.data.flink, job, t)
}

// reverify reads job's evidence afresh for every request.
func (m *Model) reverify(job model.Job) model.Reverify {
	read := m.o.ReadFlink
	return func(ctx context.Context, fresh model.Txn) (model.CommitEvidence, error) {
		return model.CommitEvidenceOf(read(ctx), job, fresh), nil
	}
}

// noEvidence is why the UI offers no commit without --flink or
// --flink-checkpoints.
const noEvidence = "commit needs --flink URL or --flink-checkpoints PREFIX=DIR: only Flink's checkpoints say a transaction's records are to be kept"

// commit offers to commit t: the commit Flink's committer never sent.
func (m *Model) commit(t model.Txn) {
	switch {
	case m.o.ReadOnly || m.data.snap == nil:
		return
	case m.o.ReadFlink == nil:
		m.setStatus(statusInfo, noEvidence)
		return
	case m.data.flink == nil:
		m.setStatus(statusInfo, "Flink's JobManagers and checkpoints have not been read yet; try again in a moment")
		return
	}
	job, ev := m.commitEvidence(t)
	a, err := model.PlanCommit(t, ev, false)
	if err != nil {
		m.setStatus(statusInfo, err.Error())
		return
	}
	a.Reverify = m.reverify(job)
	m.openDialog(a, "")
}

// resolveJob offers to resolve j: commit its checkpointed transactions,
// force-terminate the ones whose checkpoint never completed.
func (m *Model) resolveJob(j *model.Job) {
	switch {
	case m.o.ReadOnly || m.data.snap == nil:
		return
	case m.o.ReadFlink == nil:
		m.setStatus(statusInfo, "resolve: "+noEvidence)
		return
	case m.data.flink == nil:
		m.setStatus(statusInfo, "Flink's JobManagers and checkpoints have not been read yet; try again in a moment")
		return
	}
	job := *j
	steps, err := model.PlanResolve(job, m.data.snap.Txns, func(t model.Txn) model.CommitEvidence {
		return model.CommitEvidenceOf(m.data.flink, job, t)
	})
	if err != nil {
		m.setStatus(statusInfo, "resolve: "+err.Error())
		return
	}
	// Each step rests on its verdict: asked again before its request,
	// the aborts' as well as the commits'.
	for i := range steps {
		if a := steps[i].Action; a != nil {
			a.Reverify = m.reverify(job)
		}
	}
	b, left := model.ResolveBatch(steps)
	if len(b.Actions) == 0 {
		m.setStatus(statusInfo, fmt.Sprintf("resolve %s: nothing txnscope can judge: %s", job.ID.Name, left[0]))
		return
	}
	m.openBatch("job "+job.ID.Name, b, left)
}
