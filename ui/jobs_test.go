package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/txnscope/txnscope/internal/testutil/uitest"
	"github.com/txnscope/txnscope/model"
)

// The jobs view's states join the goldens and the size sweep (golden_test.go).
func init() {
	screens = append(screens,
		struct {
			name  string
			setup func(t *testing.T) *harness
		}{"jobs", func(t *testing.T) *harness {
			h := jobsStarted(t)
			h.press("J")
			return h
		}},
		struct {
			name  string
			setup func(t *testing.T) *harness
		}{"job-subtasks", func(t *testing.T) *harness {
			h := jobsStarted(t)
			h.press("J", "enter", "j")
			return h
		}},
	)
}

// jobsSnapshot is the fixture with jobs in it: warehouse-loader crashed
// and restarted (subtask 0 left two transactions open on checkpoints older
// than its newest committed one, the first pinning orders-3 where the
// group billing-etl waits) and its subtask 2 is three checkpoints behind;
// orders-enricher-v1 has committed checkpoint 40 on every subtask;
// clicks-app is a Kafka Streams application.
func jobsSnapshot(at time.Time) *model.Snapshot {
	s := uitest.Snapshot(at)
	open := func(id string, pid int64, age time.Duration) model.Txn {
		return model.Txn{ID: id, State: model.Ongoing, ProducerID: pid, ProducerEpoch: 1, Coordinator: 1,
			TimeoutMs: 60000, StartUnixMs: at.Add(-age).UnixMilli(), Described: true}
	}
	done := func(id string, pid int64) model.Txn {
		return model.Txn{ID: id, State: model.CompleteCommit, ProducerID: pid, ProducerEpoch: 1, Coordinator: 1,
			TimeoutMs: 60000, Described: true}
	}
	s.Txns = append(s.Txns,
		done("orders-enricher-v1-0-40", 4101), done("orders-enricher-v1-1-40", 4102), done("orders-enricher-v1-2-40", 4103),
		open("warehouse-loader-0-118", 3001, 45*time.Second), open("warehouse-loader-0-119", 3002, 40*time.Second),
		done("warehouse-loader-0-120", 3003), open("warehouse-loader-0-121", 3004, 5*time.Second),
		done("warehouse-loader-1-120", 3011), open("warehouse-loader-1-121", 3012, 5*time.Second),
		done("warehouse-loader-2-117", 3021), open("warehouse-loader-2-118", 3022, 30*time.Second),
		done("clicks-app-0_1", 2001), open("clicks-app-1_0", 2002, 3*time.Second),
	)
	// warehouse-loader-0-118 takes orders-3's pin over from
	// orders-enricher-v1-1-41: the fixture's counts stay.
	tp := model.TopicPartition{Topic: "orders", Partition: 3}
	for i := range s.Txns {
		if s.Txns[i].ID == "warehouse-loader-0-118" {
			s.Txns[i].Partitions = []model.TopicPartition{tp}
		}
	}
	for i := range s.Partitions {
		if s.Partitions[i].TopicPartition == tp {
			s.Partitions[i].Producers = []model.Producer{{ProducerID: 3001, ProducerEpoch: 1, LastSequence: 9,
				LastWriteMs: model.WriteMs(at.Add(-45 * time.Second)), CoordinatorEpoch: 1, CurrentTxnStartOffset: s.Partitions[i].LastStableOffset}}
			s.GroupCommits = append(s.GroupCommits, model.GroupCommit{Group: "billing-etl", State: "Stable", TopicPartition: tp,
				Offset: s.Partitions[i].LastStableOffset})
		}
	}
	model.SortGroupCommits(s.GroupCommits)
	s.Sort()
	return s
}

// jobsStarted has shown jobsSnapshot, taken 20 s before the refresh
// brought it: its commits are 20 s old.
func jobsStarted(t *testing.T, opts ...func(*Options)) *harness {
	t.Helper()
	h := newHarness(t, opts...)
	h.now = uitest.T0.Add(20 * time.Second)
	h.admin.Push(jobsSnapshot(uitest.T0))
	h.run(h.m.Init())
	if h.m.data.snap == nil {
		t.Fatal("the first refresh did not arrive")
	}
	return h
}

func (h *harness) jobs() *jobsScreen { return h.m.screens[screenJobs].(*jobsScreen) }

func (h *harness) jobNames() []string {
	var out []string
	for _, j := range h.jobs().jobs {
		out = append(out, string(j.ID.Family)+":"+j.ID.Name)
	}
	return out
}

func TestJKeyShowsJobsMostUrgentFirst(t *testing.T) {
	h := jobsStarted(t)
	if h.jobs().jobs != nil {
		t.Error("the jobs were grouped before the jobs view was shown: the refresh paid for a view nobody looked at")
	}
	h.press("J")
	if h.m.cur != screenJobs {
		t.Fatalf("J: screen %v, want jobs", h.m.cur)
	}
	names := h.jobNames()
	if len(names) == 0 || names[0] != "flink:warehouse-loader" {
		t.Fatalf("jobs %v, want warehouse-loader (lingering) first", names)
	}
	h.send(tea.WindowSizeMsg{Width: 160, Height: 48})
	mustContain(t, h.screen(), "flink   warehouse-loader", "orders-enricher-v1", "streams clicks-app", "other",
		"2 lingering after a restart", "2 LINGERING", "jobs")
}

// The grouping, a pass over every id, comes with the refresh (off the UI
// goroutine) while the jobs view is on, and only then; the UI goroutine
// adds the history to it.
func TestJobsAreGroupedWithTheRefreshWhileOnView(t *testing.T) {
	h := jobsStarted(t)
	if h.m.data.jobs != nil {
		t.Fatal("a refresh grouped the jobs while the transactions were on view")
	}
	h.press("J") // the first time, here
	first := h.m.data.jobs
	if first == nil || len(h.jobs().jobs) == 0 {
		t.Fatal("J did not group the jobs")
	}
	h.admin.Push(jobsSnapshot(uitest.T0.Add(22 * time.Second)))
	h.tick()
	if h.m.data.jobs == nil || h.m.data.jobs == first {
		t.Fatal("the refresh did not bring its own grouping while the jobs view was on")
	}
	h.press("enter")
	h.admin.Push(jobsSnapshot(uitest.T0.Add(24 * time.Second)))
	h.tick()
	if h.m.data.jobs == nil {
		t.Error("the refresh did not group the jobs while a job was on view")
	}
	h.press("esc", "esc")
	h.admin.Push(jobsSnapshot(uitest.T0.Add(26 * time.Second)))
	h.tick()
	if h.m.data.jobs != nil {
		t.Error("the refresh grouped the jobs after the view was left")
	}
}

func TestJobsCursorFollowsItsJobAcrossRefreshes(t *testing.T) {
	h := jobsStarted(t)
	h.press("J", "j")
	want := h.jobNames()[1]
	h.admin.Push(jobsSnapshot(uitest.T0.Add(22 * time.Second)))
	h.tick()
	if j, ok := h.jobs().current(); !ok || string(j.ID.Family)+":"+j.ID.Name != want {
		t.Errorf("after a refresh the cursor is on %v, want %s", j, want)
	}
	h.press("G")
	if h.jobs().win.cursor != len(h.jobs().jobs)-1 {
		t.Errorf("G: cursor %d of %d jobs", h.jobs().win.cursor, len(h.jobs().jobs))
	}
}

func TestEnterOpensAJobsSubtasksAndEscComesBack(t *testing.T) {
	h := jobsStarted(t)
	h.send(tea.WindowSizeMsg{Width: 160, Height: 48})
	h.press("J", "enter")
	if h.m.cur != screenJob {
		t.Fatalf("enter on a job: screen %v, want its subtasks", h.m.cur)
	}
	mustContain(t, h.screen(), "job flink warehouse-loader · 8 ids", "1 partition pinned · 1 group stuck · 3 subtasks",
		"warehouse-loader-0-118, warehouse-loader-0-119", "subtask 2 behind: committed checkpoint 117, the job 120",
		"why: open for over 30s, longer than the job's live transactions last", "hold the LSO of orders-3), where read_committed group billing-etl waits",
		"or force-terminate them")
	h.press("tab")
	if h.m.cur != screenPartitions {
		t.Errorf("tab from a job: screen %v, want partitions (the view after jobs)", h.m.cur)
	}
	h.press("J", "enter", "esc")
	if h.m.cur != screenJobs {
		t.Fatalf("esc from a job: screen %v, want jobs", h.m.cur)
	}
	h.press("esc")
	if h.m.cur != screenList {
		t.Errorf("esc from jobs: screen %v, want transactions", h.m.cur)
	}
}

func TestEnterOnASubtaskListsItsIDs(t *testing.T) {
	h := jobsStarted(t)
	h.press("J", "enter", "enter")
	if h.m.cur != screenList || h.list().query.Text != "warehouse-loader-0-" {
		t.Fatalf("enter on subtask 0: screen %v filter %q, want the list filtered to warehouse-loader-0-", h.m.cur, h.list().query.Text)
	}
	var ids []string
	for _, i := range h.list().win.rows {
		ids = append(ids, h.m.data.snap.Txns[i].ID)
	}
	if strings.Join(ids, " ") == "" || strings.Count(strings.Join(ids, " "), "warehouse-loader-0-") != len(ids) {
		t.Errorf("list rows %v, want only subtask 0's ids", ids)
	}
	mustContain(t, h.screen(), "/warehouse-loader-0-")
}

// A job's name is a producer's choice: it reaches the screen written out,
// and never into the list's filter, which shows it as typed.
func TestHostileJobNamesAreWrittenOut(t *testing.T) {
	h := newHarness(t)
	s := jobsSnapshot(uitest.T0)
	s.Txns = append(s.Txns,
		model.Txn{ID: idTitle, State: model.Ongoing, ProducerID: 9901, TimeoutMs: 60000, Described: true,
			StartUnixMs: uitest.T0.Add(-50 * time.Second).UnixMilli()},
		model.Txn{ID: "job-\x1b]0;pwned\x07-0-0", State: model.CompleteCommit, ProducerID: 9902, TimeoutMs: 60000, Described: true})
	s.Sort()
	h.admin.Push(s)
	h.run(h.m.Init())
	h.send(tea.WindowSizeMsg{Width: 160, Height: 48})
	h.press("J")
	raw := h.m.View().Content
	if strings.Contains(raw, "\x1b]0;") || strings.Contains(raw, "\x07") {
		t.Fatalf("the jobs view wrote the id's escape sequence out raw")
	}
	mustContain(t, h.screen(), `job-\x1b]0;pwned\x07`)
	h.selectJob("flink", "job-\x1b]0;pwned\x07")
	h.press("enter", "enter")
	if h.m.cur != screenJob || h.list().query.Text != "" {
		t.Errorf("enter on the hostile job's subtask: screen %v, filter %q; want to stay, filter untouched", h.m.cur, h.list().query.Text)
	}
	if strings.Contains(h.m.View().Content, "\x1b]0;") {
		t.Errorf("the job's subtasks wrote the id's escape sequence out raw")
	}
}

func (h *harness) selectJob(family model.Family, name string) {
	h.t.Helper()
	h.press("g")
	for range h.jobs().jobs {
		if j, ok := h.jobs().current(); ok && j.ID.Family == family && j.ID.Name == name {
			return
		}
		h.press("j")
	}
	h.t.Fatalf("job %s %q is not in the jobs view", family, name)
}

// BenchmarkRefreshTakeInJobsView is BenchmarkRefreshTakeIn with the jobs
// view on screen: the grouping (model.Jobs, with the history) joins every
// refresh on the UI goroutine.
func BenchmarkRefreshTakeInJobsView(b *testing.B) {
	h, a := steady(b, 100_000)
	h.send(keyMsg("J"))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		next := uitest.FlinkNext(a.next, h.now.Add(2*time.Second))
		b.StartTimer()
		takeIn(h, a, next)
	}
	if len(h.jobs().jobs) == 0 {
		b.Fatal("the jobs were not grouped")
	}
}

// flinkJobs is uitest.Flink's n ids renamed into jobs Flink jobs of 4
// subtasks each, the way BenchmarkJobs (model) names them.
func flinkJobs(n, jobs int, at time.Time) *model.Snapshot {
	s := uitest.Flink(n, at)
	for i := range s.Txns {
		s.Txns[i].ID = fmt.Sprintf("job%02d-sink-%d-%d", i%jobs, (i/jobs)%4, 1000+i/(4*jobs))
	}
	s.Sort()
	return s
}

// BenchmarkRefreshTakeInJobs is taking in a refresh of 100,000 ids of 50
// Flink jobs with the jobs view on screen, as takeIn does: the refresh's
// own goroutine and the UI goroutine in a row (ns/op), and the UI
// goroutine's share alone (ui-ms/op), which is what a key waits behind.
//
//	go test -run '^$' -bench BenchmarkRefreshTakeIn -count 6 ./ui/
func BenchmarkRefreshTakeInJobs(b *testing.B) {
	h := newHarness(b)
	a := &nextAdmin{Admin: h.admin}
	h.m.o.Admin = a
	a.next = flinkJobs(100_000, 50, uitest.T0)
	h.run(h.m.Init())
	h.send(keyMsg("J"))
	for range 2 {
		takeIn(h, a, uitest.FlinkNext(a.next, h.now.Add(2*time.Second)))
	}
	var ui time.Duration
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		next := uitest.FlinkNext(a.next, h.now.Add(2*time.Second))
		b.StartTimer()
		h.now, a.next, h.m.poll.busy = next.TakenAt, next, false
		msg := h.m.refresh()()
		start := time.Now()
		h.m.Update(msg)
		ui += time.Since(start)
	}
	b.ReportMetric(float64(ui.Nanoseconds())/float64(b.N)/1e6, "ui-ms/op")
	if len(h.jobs().jobs) != 50 {
		b.Fatalf("%d jobs grouped, want 50", len(h.jobs().jobs))
	}
}

// With --flink, a job's subtasks say what Flink says of it (its state and
// latest completed checkpoint), the timeout rule takes Flink's interval,
// and a JobManager that does not answer is a header note, not an error.
func TestFlinkBesideTheJob(t *testing.T) {
	view := &model.FlinkView{At: uitest.T0, Sources: []string{"http://jm-a:8081", "http://jm-b:8081"},
		Errs: []string{"", "http://jm-b:8081: GET /jobs/overview: connection refused"},
		Jobs: []model.FlinkJob{{Source: "http://jm-a:8081", ID: "0123456789abcdef0123456789abcdef", Name: "load warehouse-loader \x1b[31m", State: "RESTARTING",
			IntervalMs: 10_000, Latest: &model.FlinkCheckpoint{ID: 120, Status: "COMPLETED", TriggerMs: uitest.T0.Add(-4 * time.Second).UnixMilli(),
				AckMs: uitest.T0.Add(-3 * time.Second).UnixMilli()}}}}
	h := jobsStarted(t, func(o *Options) { o.Flink = func() *model.FlinkView { return view } })
	h.send(tea.WindowSizeMsg{Width: 160, Height: 48})
	h.press("J", "enter")
	scr := h.screen()
	mustContain(t, scr, "Flink RESTARTING · checkpoint 120 23s ago", "flink: http://jm-b:8081: GET /jobs/overview: connection refused")
	mustNotContain(t, scr, "\x1b[31m")
	j, _ := h.jobs().job(h.jobs().selected)
	if j == nil || j.Flink == nil || j.Flink.Job.Name != view.Jobs[0].Name {
		t.Errorf("warehouse-loader's Flink job: %+v", j)
	}
}

// The force-terminate dialog says what Flink's checkpoints make of the
// transaction: aborting one whose checkpoint completed loses its records.
func TestForceTerminateSaysWhatItLoses(t *testing.T) {
	view := failedJob("FAILED")
	h := jobsStarted(t, func(o *Options) { o.Flink = func() *model.FlinkView { return view } })
	h.send(tea.WindowSizeMsg{Width: 120, Height: 40})
	for _, c := range []struct{ id, want string }{
		{"warehouse-loader-1-121", "Checkpointed: inferred: Flink (http://jm:8081) says checkpoint 121 completed. Aborting loses records Flink counts as delivered"},
		{"warehouse-loader-0-118", "Not checkpointed: inferred: it began before the job restored from checkpoint 117: checkpoint 118 is not in the restored state"},
	} {
		tx, ok := h.m.data.snap.Txn(c.id)
		if !ok {
			t.Fatalf("no %s", c.id)
		}
		h.m.forceTerminate(tx)
		if h.m.dialog == nil || h.m.dialog.notice == "" || !strings.HasPrefix(h.m.dialog.notice, c.want) {
			t.Errorf("%s: notice %q, want %q", c.id, h.m.dialog.notice, c.want)
		}
		mustContain(t, strings.Join(strings.Fields(h.screen()), " "), strings.Join(strings.Fields(c.want)[:2], " "))
		h.press("esc")
	}
}

// A Streams app's units are threads or tasks, not subtasks, and nothing of
// it lingers: the hints say so.
func TestStreamsAppKeyHints(t *testing.T) {
	h := jobsStarted(t)
	h.send(tea.WindowSizeMsg{Width: 160, Height: 48})
	h.press("J")
	mustContain(t, h.screen(), "enter subtasks", "a end lingering")
	for range 10 {
		if strings.Contains(h.screen(), "enter threads") {
			break
		}
		h.press("j")
	}
	mustContain(t, h.screen(), "enter threads")
	h.press("enter")
	screen := h.screen()
	mustContain(t, screen, "job streams clicks-app", "PROCESS", "THREAD", "CADENCE", "2 tasks", "enter its ids")
	if strings.Contains(screen, "end lingering") || strings.Contains(screen, "SUBTASK") {
		t.Errorf("a Streams app's detail offers to end lingering transactions or shows subtasks:\n%s", screen)
	}
}
