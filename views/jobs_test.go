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
