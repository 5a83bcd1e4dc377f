package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/txnscope/txnscope/internal/jsonout"
	"github.com/txnscope/txnscope/internal/testutil/uitest"
	"github.com/txnscope/txnscope/model"
)

// logEvent is what the coordinators' log says happened to id at at.
func logEvent(at time.Time, id string, k model.EventKind, pid int64, epoch int16, begun time.Time, parts int32) model.Event {
	return model.Event{At: at, ID: id, Kind: k, ProducerID: pid, ProducerEpoch: epoch, Logged: true, Begun: begun, Parts: parts}
}

// fromLog is the fixture at at with the coordinators' log as its source,
// bringing evs.
func fromLog(at time.Time, evs ...model.Event) *model.Snapshot {
	s := uitest.Snapshot(uitest.T0)
	s.TakenAt = at
	s.Source = model.Source{Log: true, Since: uitest.T0.Add(-6 * time.Hour)}
	s.Events = evs
	return s
}

// busyCommits are n whole transactions of a producer faster than the
// refresh: began, partitions added, prepare-commit, committed, every 100 ms.
func busyCommits(id string, n int, from time.Time) []model.Event {
	var evs []model.Event
	for i := range n {
		b := from.Add(time.Duration(i) * 100 * time.Millisecond)
		evs = append(evs,
			logEvent(b, id, model.Began, 4001, 3, time.Time{}, 0),
			logEvent(b.Add(10*time.Millisecond), id, model.Added, 4001, 3, time.Time{}, 0),
			logEvent(b.Add(60*time.Millisecond), id, model.PreparedCommit, 4001, 3, time.Time{}, 0),
			logEvent(b.Add(80*time.Millisecond), id, model.Committed, 4001, 3, b, 2))
	}
	return evs
}

// withLogHistory is the fixture, then a refresh from the log: 20 commits of
// orders-enricher-v1-0-41 in 2 s, an abort at timeout, a force-terminate,
// and an abort by its producer followed by a new transaction.
func withLogHistory(t *testing.T) *harness {
	t.Helper()
	h := started(t)
	at := uitest.T0.Add(2 * time.Second)
	evs := busyCommits("orders-enricher-v1-0-41", 20, uitest.T0)
	evs = append(evs,
		logEvent(at.Add(-900*time.Millisecond), "crashed-job-0-7", model.TimedOut, 6001, 1, uitest.T0.Add(-70*time.Second), 1),
		logEvent(at.Add(-800*time.Millisecond), "fenced-job-0-3", model.ForceTerminated, 8001, 3, uitest.T0.Add(-20*time.Second), 1),
		logEvent(at.Add(-700*time.Millisecond), "abort-every-third-0-12", model.Aborted, 5001, 2, at.Add(-1200*time.Millisecond), 4),
		logEvent(at.Add(-600*time.Millisecond), "abort-every-third-0-12", model.Began, 5001, 2, time.Time{}, 0),
	)
	h.admin.Push(fromLog(at, evs...))
	h.tick()
	return h
}

// TestLogHistoryCountsEveryCommit: twenty commits in one refresh are twenty
// in the detail and in the JSON, with the coordinator's times.
func TestLogHistoryCountsEveryCommit(t *testing.T) {
	h := withLogHistory(t)
	const id = "orders-enricher-v1-0-41"
	st := h.m.hist.Stats(id)
	if st.Commits != 20 || st.Aborts != 0 || len(st.Finished()) != model.RecentTxns {
		t.Fatalf("stats = %d/%d, %d finished", st.Commits, st.Aborts, len(st.Finished()))
	}
	j := jsonout.ExportTxn(mustTxn(t, h, id), h.m.hist, h.m.data.snap, model.Query{}, h.now)
	if j.CommitsSeen != 20 || j.Commits5m != 20 || j.Commits60m != 20 || j.AbortsSeen != 0 || len(j.RecentTransactions) != model.RecentTxns {
		t.Errorf("json = %+v", j)
	}
	h.send(sizeMsg(160, 48))
	h.selectID(id)
	h.press("enter")
	scr := h.screen()
	mustContain(t, scr, "TRANSACTIONS · from the coordinator log",
		"20 commits · 0 aborts since 03:00 · last 5 min 20/0 · last 60 min 20/0",
		"03:00:01  03:00:01     80ms  committed", // the last one: began at 1.9 s, ended 80 ms later
	)
	if n := strings.Count(scr, "80ms  committed"); n != model.RecentTxns {
		t.Errorf("%d finished transactions shown, want %d:\n%s", n, model.RecentTxns, scr)
	}
	// The steps inside each transaction stay out of the id's recent events.
	mustNotContain(t, scr, "prepare-commit", "partitions added")
}

func mustTxn(t *testing.T, h *harness, id string) *model.Txn {
	t.Helper()
	tx, ok := h.m.data.snap.Txn(id)
	if !ok {
		t.Fatalf("%s not in the snapshot", id)
	}
	return &tx
}

// TestLogAbortThenBeginIsNoFence: an abort the log reports, followed by a
// new transaction of the same producer, shows as an abort by its producer.
func TestLogAbortThenBeginIsNoFence(t *testing.T) {
	h := withLogHistory(t)
	const id = "abort-every-third-0-12"
	st := h.m.hist.Stats(id)
	if st.Last != model.Aborted || st.Aborts != 2 { // the baseline's abort, then the log's
		t.Errorf("stats = %+v", st)
	}
	h.press("e")
	scr := h.screen()
	mustContain(t, scr, "aborted            abort-every-third-0-12  pid 5001/2  took 500ms")
	h.selectID(id)
	h.press("enter")
	h.send(sizeMsg(160, 48))
	scr = h.screen()
	mustContain(t, scr, "aborted by producer")
	mustNotContain(t, scr, "fenced")
}

// TestLogNamesWhoAborted: a timeout and a force-terminate are told apart.
func TestLogNamesWhoAborted(t *testing.T) {
	h := withLogHistory(t)
	if got := h.m.hist.Stats("crashed-job-0-7").Last; got != model.TimedOut {
		t.Errorf("crashed-job-0-7 last = %s", got)
	}
	if got := h.m.hist.Stats("fenced-job-0-3").Last; got != model.ForceTerminated {
		t.Errorf("fenced-job-0-3 last = %s", got)
	}
	h.send(sizeMsg(160, 48))
	h.press("e")
	mustContain(t, h.screen(), "force-terminated   fenced-job-0-3  pid 8001/3  took 21.2s",
		"aborted at timeout crashed-job-0-7  pid 6001/1  took 1m11s")
}

// TestLogEventsAreNeverDiffed: with the log as the source, a snapshot whose
// states would diff into events brings only the log's events, also on the
// refresh that switches from polls to the log.
func TestLogEventsAreNeverDiffed(t *testing.T) {
	h := started(t)
	s := evolved(uitest.T0.Add(2 * time.Second)) // a Diff would see a commit, a timeout, a fence, a begin
	s.Source = model.Source{Log: true}
	h.admin.Push(s)
	h.tick()
	if n := h.m.hist.Len(); n != 0 {
		t.Errorf("%d events recorded, want none: %v", n, h.m.hist.Latest(n))
	}
	// Back to polls (READ revoked): the Diff again.
	p := evolved(uitest.T0.Add(4 * time.Second))
	p.Source = model.Source{Why: "no READ on __transaction_state"}
	h.admin.Push(p)
	h.tick()
	h.admin.Push(uitest.Snapshot(uitest.T0.Add(6 * time.Second)))
	h.tick()
	if h.m.hist.Len() == 0 {
		t.Error("polls recorded no events")
	}
}

// TestFirstLogSnapshotIsABaseline: the events of the first snapshot are not
// counted on top of the outcomes its states show.
func TestFirstLogSnapshotIsABaseline(t *testing.T) {
	h := newHarness(t)
	h.admin.Push(fromLog(uitest.T0, busyCommits("orders-enricher-v1-3-40", 3, uitest.T0.Add(-time.Second))...))
	h.run(h.m.Init())
	if st := h.m.hist.Stats("orders-enricher-v1-3-40"); st.Commits != 1 || h.m.hist.Len() != 0 {
		t.Errorf("stats %+v, %d events", st, h.m.hist.Len())
	}
}

// TestHeaderSaysWhereHistoryComesFrom: the log, or polls and why.
func TestHeaderSaysWhereHistoryComesFrom(t *testing.T) {
	h := withLogHistory(t)
	h.send(sizeMsg(160, 48))
	mustContain(t, firstLine(h), "· history: coordinator log")

	p := uitest.Snapshot(uitest.T0.Add(4 * time.Second))
	p.Source = model.Source{Why: "no READ on __transaction_state"}
	h.admin.Push(p)
	h.tick()
	mustContain(t, firstLine(h), "· history: polls · no READ on __transaction_state")
	h.send(sizeMsg(80, 24))
	mustContain(t, firstLine(h), "· polls ")
	h.selectID("idle-0")
	h.press("enter")
	h.send(sizeMsg(120, 40))
	mustContain(t, h.screen(), "TRANSACTIONS · from polls: no READ on __transaction_state")
}

func firstLine(h *harness) string {
	l, _, _ := strings.Cut(h.screen(), "\n")
	return l
}

func sizeMsg(w, h int) tea.WindowSizeMsg { return tea.WindowSizeMsg{Width: w, Height: h} }

// historyScreens are the goldens of where the history comes from.
var historyScreens = []struct {
	name  string
	setup func(t *testing.T) *harness
}{
	{"detail-log", func(t *testing.T) *harness {
		h := withLogHistory(t)
		h.selectID("orders-enricher-v1-0-41")
		h.press("enter")
		return h
	}},
	{"detail-log-aborts", func(t *testing.T) *harness {
		h := withLogHistory(t)
		h.selectID("abort-every-third-0-12")
		h.press("enter")
		return h
	}},
	{"events-log", func(t *testing.T) *harness {
		h := withLogHistory(t)
		h.press("e")
		return h
	}},
	{"list-log", withLogHistory},
	{"list-polls-denied", func(t *testing.T) *harness {
		h := newHarness(t)
		s := uitest.Snapshot(uitest.T0)
		s.Source = model.Source{Why: "no READ on __transaction_state"}
		h.admin.Push(s)
		h.run(h.m.Init())
		return h
	}},
}

// TestHistoryGolden: the frames of the log's history and of the header in
// both modes; every size in between fits the terminal.
func TestHistoryGolden(t *testing.T) {
	goldenAndFit(t, historyScreens)
}

// goldenAndFit checks each screen's golden frames at 80×24 and 160×48, and
// that every size in between fits the terminal.
func goldenAndFit(t *testing.T, list []struct {
	name  string
	setup func(t *testing.T) *harness
}) {
	for _, sc := range list {
		for _, size := range [][2]int{{80, 24}, {160, 48}} {
			t.Run(fmt.Sprintf("%s_%dx%d", sc.name, size[0], size[1]), func(t *testing.T) {
				h := sc.setup(t)
				golden.RequireEqual(t, darkFrame(t, h, size[0], size[1]))
			})
		}
		t.Run(sc.name+"_sizes", func(t *testing.T) {
			h := sc.setup(t)
			for w := minWidth; w <= 200; w += 7 {
				for ht := minHeight; ht <= 60; ht += 9 {
					h.send(sizeMsg(w, ht))
					lines := strings.Split(h.m.View().Content, "\n")
					if len(lines) != ht {
						t.Fatalf("%d×%d: %d lines", w, ht, len(lines))
					}
					for i, l := range lines {
						if got := ansi.StringWidth(l); got != w {
							t.Fatalf("%d×%d: line %d is %d cells: %q", w, ht, i, got, ansi.Strip(l))
						}
					}
				}
			}
		})
	}
}
