package views

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/txnscope/txnscope/model"
)

func jobsFixture(at time.Time) []model.Job {
	open := func(id string, age time.Duration) model.Txn {
		return model.Txn{ID: id, State: model.Ongoing, TimeoutMs: 60000, StartUnixMs: at.Add(-age).UnixMilli(), Described: true}
	}
	done := func(id string) model.Txn {
		return model.Txn{ID: id, State: model.CompleteCommit, TimeoutMs: 60000, Described: true}
	}
	s := &model.Snapshot{TakenAt: at, Txns: []model.Txn{
		open("evil\x1b]0;pwned\x07-0-3", 50*time.Second), done("evil\x1b]0;pwned\x07-0-4"), open("evil\x1b]0;pwned\x07-0-5", time.Second),
		done("loader-0-9"), done("loader-1-9"), done("loader-2-6"), open("loader-2-7", 5*time.Second), done("plain-id"),
	}}
	s.Sort()
	return model.Jobs(s, nil, at)
}

func TestJobsFitAndWriteNamesOut(t *testing.T) {
	at := time.Date(2026, 3, 14, 3, 0, 0, 0, time.UTC)
	jobs := jobsFixture(at)
	if len(jobs) != 3 || len(jobs[0].Lingering) != 1 {
		t.Fatalf("fixture: %d jobs, the first with %d lingering; want 3, the hostile one lingering first", len(jobs), len(jobs[0].Lingering))
	}
	for w := 20; w <= 200; w += 9 {
		for h := 1; h <= 30; h += 4 {
			frames := map[string]string{
				"jobs": Jobs(JobsData{Jobs: jobs, Now: at}, w, h, PlainStyles()),
				"job":  JobDetail(JobDetailData{Job: &jobs[0], Problems: jobs[0].Problems(nil, model.Query{}, at), Now: at}, w, h, PlainStyles()),
				"gone": JobDetail(JobDetailData{Now: at}, w, h, PlainStyles()),
			}
			for name, f := range frames {
				lines := strings.Split(f, "\n")
				if len(lines) != h {
					t.Fatalf("%s %d×%d: %d lines", name, w, h, len(lines))
				}
				for i, l := range lines {
					if ansi.StringWidth(l) != w {
						t.Fatalf("%s %d×%d: line %d is %d cells", name, w, h, i, ansi.StringWidth(l))
					}
				}
				if strings.ContainsAny(f, "\x1b\x07") {
					t.Fatalf("%s %d×%d: the job's name reached the screen raw", name, w, h)
				}
			}
		}
	}
	f := Jobs(JobsData{Jobs: jobs, Now: at}, 160, 10, PlainStyles())
	for _, want := range []string{`evil\x1b]0;pwned\x07`, "1 LINGERING", "3 jobs", "loader", "other"} {
		if !strings.Contains(f, want) {
			t.Errorf("jobs view lacks %q:\n%s", want, f)
		}
	}
	f = JobDetail(JobDetailData{Job: &jobs[0], Problems: jobs[0].Problems(nil, model.Query{}, at), Now: at}, 160, 10, PlainStyles())
	for _, want := range []string{`evil\x1b]0;pwned\x07-0-3`, "1 lingering after a restart", "3 ids", "1 subtask"} {
		if !strings.Contains(f, want) {
			t.Errorf("job view lacks %q:\n%s", want, f)
		}
	}
}

// The jobs list's columns at 160 columns: the slowest subtask's last
// commit, fences and aborts of the last 5 minutes, partitions pinned and
// groups stuck; at 80 the counts give way and the problem stays.
func TestJobColumnsShowTheJobsFigures(t *testing.T) {
	at := time.Date(2026, 3, 14, 3, 0, 0, 0, time.UTC)
	j := model.Job{ID: model.JobID{Family: model.FlinkSink, Name: "loader"}, IDs: 9, NewestCheckpoint: 7, NewestCommitted: 6,
		Units: []model.Unit{{Name: "0"}, {Name: "1"}}, Open: []string{"loader-0-7"}, LastCommit: at.Add(-5 * time.Second),
		SlowestUnit: "1", SlowestCommit: at.Add(-95 * time.Second), Fences5m: 3, Aborts5m: 4,
		Pinned: []model.JobPin{{ID: "loader-0-7"}, {ID: "loader-0-7"}}, StuckGroups: []string{"billing"}}
	jobs := []model.Job{j}
	f := Jobs(JobsData{Jobs: jobs, Now: at, Query: model.Query{CheckpointInterval: time.Second}}, 160, 5, PlainStyles())
	lines := strings.Split(f, "\n")
	header, row := []rune(lines[0]), []rune(lines[1])
	for h, want := range map[string]string{"COMMIT": "5s", "SLOWEST": "1m35s", "FENCE": "3", "ABORTS": "4", "PINNED": "2", "STUCK": "1"} {
		// These columns are right-aligned, their titles too.
		i := strings.Index(string(header), " "+h+" ")
		if i < 0 {
			t.Errorf("no column %s in %q", h, lines[0])
			continue
		}
		end := len([]rune(string(header)[:i])) + 1 + len(h)
		if got := strings.Fields(string(row[:end])); got[len(got)-1] != want {
			t.Errorf("%s: %q, want %s in %q", h, got[len(got)-1], want, lines[1])
		}
	}
	f = Jobs(JobsData{Jobs: jobs, Now: at, Query: model.Query{CheckpointInterval: time.Second}}, 80, 5, PlainStyles())
	if !strings.Contains(f, "PINNED") || !strings.Contains(f, "not committ") || strings.Contains(f, "ABORTS") {
		t.Errorf("at 80 columns:\n%s", f)
	}
}

// The subtasks' marks are the model's rules: !! lingering, ! behind
// (model.Unit.Behind), not a copy of them.
func TestJobDetailMarksTheModelsBehind(t *testing.T) {
	at := time.Date(2026, 3, 14, 3, 0, 0, 0, time.UTC)
	j := model.Job{ID: model.JobID{Family: model.FlinkSink, Name: "loader"}, NewestCommitted: 9,
		Units: []model.Unit{{Name: "0", Subtask: 0, NewestCommitted: 9}, {Name: "1", Subtask: 1, NewestCommitted: 9, Behind: true},
			{Name: "2", Subtask: 2, NewestCommitted: 9, Lingering: []string{"loader-2-3"}}}}
	lines := strings.Split(JobDetail(JobDetailData{Job: &j, Now: at, Cursor: -1}, 100, 8, PlainStyles()), "\n")
	for i, want := range []string{"    0", " !  1", " !! 2"} {
		if !strings.HasPrefix(lines[i+1], want) {
			t.Errorf("subtask line %q, want it to start %q", lines[i+1], want)
		}
	}
}

// A long Flink prefix is shown whole where the terminal has room for it,
// and cut in the middle where it has not.
func TestJobNamesAsWideAsRoomAllows(t *testing.T) {
	at := time.Unix(100_000, 0)
	const long = "clickstream-sessionizer-eu-west-1-v12" // 37 cells
	s := &model.Snapshot{Txns: []model.Txn{{ID: long + "-0-7", State: model.CompleteCommit, Described: true}}}
	jobs := model.Jobs(s, nil, at)
	if f := Jobs(JobsData{Jobs: jobs, Now: at}, 160, 5, PlainStyles()); !strings.Contains(f, long) {
		t.Errorf("at 160 columns the name is cut:\n%s", f)
	}
	if f := Jobs(JobsData{Jobs: jobs, Now: at}, 80, 5, PlainStyles()); strings.Contains(f, long) || !strings.Contains(f, "…") {
		t.Errorf("at 80 columns the name should be cut in the middle:\n%s", f)
	}
}

// The jobs list names a problem without its particulars; the detail has them.
func TestProblemLabel(t *testing.T) {
	for what, want := range map[string]string{
		"3 lingering after a restart":                             "3 lingering after a restart",
		"subtask 2 behind: committed checkpoint 117, the job 120": "subtask 2 behind",
		"prefix looks shared by two jobs (9 takeovers)":           "prefix looks shared by two jobs",
		"not committing: no commit for 1m0s (interval 2s)":        "not committing",
	} {
		if got := problemLabel(model.Problem{What: what}); got != want {
			t.Errorf("problemLabel(%q) = %q, want %q", what, got, want)
		}
	}
}

// A Streams app's units are threads of processes: the process and the
// thread apart, each one's commit cadence where Flink shows checkpoints,
// and the app's cadence in the jobs list's CKPT column; fitted at every
// size, a hostile process id written out.
func TestStreamsThreadsShown(t *testing.T) {
	at := time.Date(2026, 3, 14, 3, 0, 0, 0, time.UTC)
	const a, b = "0b1e5d2a-1c1f-4b7e-9a51-6c2d1b6f0a11", "evil\x1b[2J"
	unit := func(proc, th string, cad time.Duration) model.Unit {
		return model.Unit{Name: proc + "-" + th, Subtask: -1, IDs: 1, NewestCheckpoint: -1, NewestCommitted: -1, Cadence: cad, LastCommit: at.Add(-time.Second)}
	}
	j := model.Job{ID: model.JobID{Family: model.StreamsApp, Name: "billing"}, IDs: 4, Tasks: 4, NewestCheckpoint: -1, NewestCommitted: -1,
		Cadence: 1200 * time.Millisecond, Units: []model.Unit{unit(a, "1", time.Second), unit(a, "2", 1200*time.Millisecond), unit(b, "1", 0), unit(b, "2", 15*time.Second)}}
	f := JobDetail(JobDetailData{Job: &j, Now: at}, 120, 10, PlainStyles())
	for _, want := range []string{"PROCESS", "THREAD", "CADENCE", a, "1.0s", "1.2s", "15s", `evil\x1b[2J`, "4 threads in 2 processes · commits every 1.2s"} {
		if !strings.Contains(f, want) {
			t.Errorf("job view lacks %q:\n%s", want, f)
		}
	}
	for _, not := range []string{"SUBTASK", "CKPT", "LINGER", "subtasks"} {
		if strings.Contains(f, not) {
			t.Errorf("job view says %q of a Streams app:\n%s", not, f)
		}
	}
	list := Jobs(JobsData{Jobs: []model.Job{j}, Now: at}, 160, 5, PlainStyles())
	if !strings.Contains(list, "~1.2s") {
		t.Errorf("jobs list lacks the app's cadence ~1.2s:\n%s", list)
	}
	for w := 20; w <= 200; w += 9 {
		for h := 1; h <= 20; h += 3 {
			f := JobDetail(JobDetailData{Job: &j, Now: at}, w, h, PlainStyles())
			lines := strings.Split(f, "\n")
			if len(lines) != h {
				t.Fatalf("%d×%d: %d lines", w, h, len(lines))
			}
			for i, l := range lines {
				if ansi.StringWidth(l) != w {
					t.Fatalf("%d×%d: line %d is %d cells", w, h, i, ansi.StringWidth(l))
				}
			}
			if strings.ContainsAny(f, "\x1b") {
				t.Fatalf("%d×%d: the process id reached the screen raw", w, h)
			}
		}
	}
}
