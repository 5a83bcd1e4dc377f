package ui

import (
	"strconv"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/txnscope/txnscope/internal/escape"
	"github.com/txnscope/txnscope/model"
	"github.com/txnscope/txnscope/views"
)

const (
	screenJobs screenID = "jobs"
	screenJob  screenID = "job"
)

// jobsScreen is the jobs view: the snapshot's ids grouped into jobs by their
// names. The grouping, a pass over every id, is worked out with the
// refresh's other data, off the UI goroutine, while the jobs view or a job
// is on view (jobsOn); the UI goroutine adds the history's figures, which
// it alone may read, once per refresh, for a look-up per job and subtask.
// Taking in a refresh costs nothing more while neither is on view; the
// first time one is, the grouping is done here, once.
type jobsScreen struct {
	listBase
	e        *shared
	list     *listScreen
	sub      *jobScreen
	jobs     []model.Job
	stale    bool
	selected model.JobID // the cursor follows it across refreshes
}

func newJobsScreen(e *shared, list *listScreen) *jobsScreen {
	s := &jobsScreen{e: e, list: list, stale: true}
	s.sub = &jobScreen{e: e, jobs: s}
	return s
}

func (s *jobsScreen) reload() { s.stale = true }

func (s *jobsScreen) sync() {
	if cur := s.e.host.current(); cur == screenJobs || cur == screenJob {
		s.fresh()
	}
	s.win.clamp(s.e.host.listRows())
}

// fresh regroups the jobs if a refresh came in since they were grouped.
func (s *jobsScreen) fresh() {
	if !s.stale || s.e.data.snap == nil {
		return
	}
	s.stale = false
	g := s.e.data.jobs
	if g == nil {
		g = model.Group(s.e.data.snap, s.e.data.pins)
		g.Flink = s.e.data.flink
		s.e.data.jobs = g // the refreshes bring their own while the view is on
	}
	s.jobs = g.Jobs(s.e.hist, s.e.now)
	s.showAll(len(s.jobs), func(i int) bool { return s.jobs[i].ID == s.selected }, s.e.host.listRows())
}

// jobsOn reports whether the jobs view or a job is on view, so that a
// refresh starting now groups the jobs too.
func (m *Model) jobsOn() bool {
	return m.cur == screenJobs || m.cur == screenJob
}

// job is the job called id, if the latest grouping has it.
func (s *jobsScreen) job(id model.JobID) (*model.Job, bool) {
	for i := range s.jobs {
		if s.jobs[i].ID == id {
			return &s.jobs[i], true
		}
	}
	return nil, false
}

func (s *jobsScreen) current() (*model.Job, bool) {
	if s.win.cursor < 0 || s.win.cursor >= len(s.jobs) {
		return nil, false
	}
	return &s.jobs[s.win.cursor], true
}

func (s *jobsScreen) update(msg tea.Msg) tea.Cmd {
	k := s.e.keys
	kp, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	s.fresh()
	if s.handle(k, msg, s.e.host.listRows(), nil, s.cursorMoved) {
		return nil
	}
	switch {
	case key.Matches(kp, k.Open):
		if j, ok := s.current(); ok {
			s.selected = j.ID
			s.sub.open()
		}
	case key.Matches(kp, k.Abort):
		s.forceTerminateJob()
	case key.Matches(kp, k.Commit):
		if j, ok := s.current(); ok {
			s.e.host.resolveJob(j)
		}
	case key.Matches(kp, k.Back):
		s.e.host.show(screenList)
	}
	return nil
}

func (s *jobsScreen) cursorMoved() {
	if j, ok := s.current(); ok {
		s.selected = j.ID
	}
}

func (s *jobsScreen) keys() []key.Binding {
	k := s.e.keys
	open := "subtasks"
	if j, ok := s.current(); ok && j.ID.Family == model.StreamsApp {
		open = "threads" // a Streams app's units
	}
	return []key.Binding{short(k.Open, open), short(k.Abort, "end lingering"), short(k.Back, "back"), short(k.NextView, "partitions"), k.Help, k.Quit}
}

func (s *jobsScreen) query() model.Query {
	return model.Query{CheckpointInterval: s.e.o.CheckpointInterval, Loc: s.e.loc}
}

func (s *jobsScreen) view(w, h int) string {
	e := s.e
	d := views.JobsData{Jobs: s.jobs, Cursor: s.win.cursor, Top: s.win.top, Now: e.now, Snap: e.data.snap, Query: s.query()}
	switch {
	case e.data.snap == nil:
		d.Empty = "waiting for the first refresh…"
	default:
		d.Empty = "no transactional ids on this cluster"
	}
	return views.Jobs(d, w, h, e.st)
}

// jobScreen is one job: a row per subtask. It shows whichever job the jobs
// view's cursor was on when it was opened, as the latest grouping has it.
type jobScreen struct {
	listBase
	e    *shared
	jobs *jobsScreen
	unit string // the subtask under the cursor; the cursor follows it
	// width is the width last drawn at: the problems' why and way out wrap
	// to it, which decides how many subtask rows fit.
	width int
}

// open shows the job the jobs view's cursor is on, from its first subtask.
func (s *jobScreen) open() {
	s.unit, s.win.cursor, s.win.top = "", 0, 0
	s.e.host.show(screenJob)
}

func (s *jobScreen) home() screenID { return screenJobs }
func (s *jobScreen) reload()        {}

func (s *jobScreen) sync() {
	if s.e.host.current() == screenJob {
		s.jobs.fresh()
	}
	var units []model.Unit
	if j, ok := s.jobs.job(s.jobs.selected); ok {
		units = j.Units
	}
	s.showAll(len(units), func(i int) bool { return units[i].Name == s.unit }, s.visible())
}

// visible is how many subtask rows fit under what the job's problems take.
func (s *jobScreen) visible() int {
	return views.JobDetailRows(s.problems(), s.width, s.e.host.bodyHeight())
}

func (s *jobScreen) problems() []model.Problem {
	j, ok := s.jobs.job(s.jobs.selected)
	if !ok {
		return nil
	}
	return j.Problems(s.e.data.snap, s.jobs.query(), s.e.now)
}

func (s *jobScreen) current() (*model.Job, *model.Unit, bool) {
	j, ok := s.jobs.job(s.jobs.selected)
	if !ok || s.win.cursor < 0 || s.win.cursor >= len(j.Units) {
		return nil, nil, false
	}
	return j, &j.Units[s.win.cursor], true
}

func (s *jobScreen) update(msg tea.Msg) tea.Cmd {
	k := s.e.keys
	kp, ok := msg.(tea.KeyPressMsg)
	if s.handle(k, msg, s.visible(), nil, s.cursorMoved) || !ok {
		return nil
	}
	switch {
	case key.Matches(kp, k.Open):
		if j, u, ok := s.current(); ok && len(u.Open) > 0 {
			s.openIDs(j, u)
		}
	case key.Matches(kp, k.Abort):
		s.forceTerminateUnit()
	case key.Matches(kp, k.Back):
		s.e.host.show(screenJobs)
	}
	return nil
}

func (s *jobScreen) cursorMoved() {
	if _, u, ok := s.current(); ok {
		s.unit = u.Name
	}
}

// openIDs shows a subtask's ids in the transaction list, through the list's
// own filter. The filter is shown as typed text, which never passes
// through the escaping the cluster's strings do: a prefix a terminal could
// act on is left to the user to type.
func (s *jobScreen) openIDs(j *model.Job, u *model.Unit) {
	prefix := j.ID.Name + "-" + u.Name
	if j.ID.Family == model.FlinkSink {
		prefix = j.ID.Name + "-" + strconv.Itoa(u.Subtask) + "-"
	}
	if escape.Text(prefix) != prefix {
		s.e.host.setStatus(statusError, "the ids hold characters the filter cannot show; filter with / instead")
		return
	}
	l := s.jobs.list
	l.query.Text = prefix
	l.moved, l.win.cursor, l.win.top = false, 0, 0
	l.recompute()
	s.e.host.show(screenList)
}

func (s *jobScreen) keys() []key.Binding {
	k := s.e.keys
	if j, ok := s.jobs.job(s.jobs.selected); ok && j.ID.Family == model.StreamsApp {
		// Nothing of a Streams app lingers: its threads' ids are reused, not left behind.
		return []key.Binding{short(k.Open, "its ids"), short(k.Back, "jobs"), short(k.NextView, "partitions"), k.Help, k.Quit}
	}
	return []key.Binding{short(k.Open, "its ids"), short(k.Abort, "end lingering"), short(k.Back, "jobs"), short(k.NextView, "partitions"), k.Help, k.Quit}
}

func (s *jobScreen) view(w, h int) string {
	s.width = w
	j, _ := s.jobs.job(s.jobs.selected)
	d := views.JobDetailData{Job: j, Problems: s.problems(), Cursor: s.win.cursor, Top: s.win.top, Now: s.e.now}
	return views.JobDetail(d, w, h, s.e.st)
}
