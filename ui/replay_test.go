package ui

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/internal/testutil/uitest"
	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// The log of the replay fixture: every transition since 3h12m before T0,
// and before that, back to the day before, each id's last only.
var (
	replayComplete = uitest.T0.Add(-3*time.Hour - 12*time.Minute)
	replayOldest   = uitest.T0.Add(-26 * time.Hour)
)

// replayEvents are what the fixture's log still holds, oldest first.
func replayEvents() []model.Event {
	t0 := uitest.T0
	return []model.Event{
		logEvent(replayOldest, "idle-0", model.Committed, 9100, 0, replayOldest.Add(-300*time.Millisecond), 1),
		logEvent(t0.Add(-5*time.Hour), "orders-enricher-v1-3-40", model.Committed, 4004, 7, t0.Add(-5*time.Hour-time.Second), 3),
		logEvent(t0.Add(-time.Hour), "abort-every-third-0-12", model.Aborted, 5001, 2, t0.Add(-time.Hour-500*time.Millisecond), 4),
		logEvent(t0.Add(-9*time.Minute), "long-runner", model.Began, 7001, 0, time.Time{}, 0),
		logEvent(t0.Add(-20*time.Second), "fenced-job-0-3", model.ForceTerminated, 8001, 3, t0.Add(-41*time.Second), 1),
		logEvent(t0.Add(-5*time.Second), "crashed-job-0-7", model.TimedOut, 6001, 1, t0.Add(-75*time.Second), 1),
		logEvent(t0.Add(-2060*time.Millisecond), "orders-enricher-v1-0-41", model.PreparedCommit, 4001, 3, time.Time{}, 0),
		logEvent(t0.Add(-2*time.Second), "orders-enricher-v1-0-41", model.Committed, 4001, 3, t0.Add(-2080*time.Millisecond), 2),
	}
}

// withReplay is the fixture with the replay's answer set but not asked yet.
func withReplay(t *testing.T) *harness {
	t.Helper()
	h := started(t)
	h.admin.SetReplay(uitest.ReplayReply{Events: replayEvents(), Complete: replayComplete, Oldest: replayOldest})
	return h
}

// hold presses k and returns the command it started, not run yet: a replay
// still reading the log.
func (h *harness) hold(k string) tea.Cmd {
	h.t.Helper()
	_, cmd := h.m.Update(keyMsg(k))
	return cmd
}

// finish runs cmd and takes its messages in, replies of replays too (run
// leaves them out).
func (h *harness) finish(cmd tea.Cmd) {
	h.t.Helper()
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			h.finish(c)
		}
	case replayedMsg:
		h.send(msg)
	default:
		h.run(func() tea.Msg { return msg })
	}
}

// replayed is withReplay after h, the replay read.
func replayed(t *testing.T) *harness {
	h := withReplay(t)
	h.finish(h.hold("h"))
	return h
}

// TestReplayKeyOpensThePane: h opens the events pane, from any view, and
// starts one replay of the whole log, the newest replayLimit events.
func TestReplayKeyOpensThePane(t *testing.T) {
	h := withReplay(t)
	h.press("p") // the partitions view: h brings the transaction list back
	cmd := h.hold("h")
	if cmd == nil || h.m.cur != screenList || !h.m.showEvents {
		t.Fatalf("after h: cmd %v, screen %s, events pane %v", cmd != nil, h.m.cur, h.m.showEvents)
	}
	mustContain(t, h.screen(), "── replay of the coordinators' log ──", "replaying the coordinators' log…",
		"h or esc: back to the session's events")
	h.finish(cmd)
	calls := h.admin.Replays()
	if len(calls) != 1 || !calls[0].Since.IsZero() || calls[0].Limit != replayLimit {
		t.Errorf("replays asked: %+v", calls)
	}
}

// TestReplayShowsTheLogNewestFirst: the events the log holds, newest first,
// under a title that says how far back they are complete, and a line where
// only each id's last is left.
func TestReplayShowsTheLogNewestFirst(t *testing.T) {
	h := replayed(t)
	h.send(sizeMsg(160, 48))
	scr := h.screen()
	mustContain(t, scr,
		"── replay of the coordinators' log · every transition since 23:48:00 (3h12m ago) · before: each id's last only, back to Mar 13 01:00:00 · 8 events ─",
		"02:59:58  committed          orders-enricher-v1-0-41  pid 4001/3  took 80ms",
		"── before 23:48:00: compacted, each id's last transition only",
		"22:00:00  committed          orders-enricher-v1-3-40  pid 4004/7  took 1s",
	)
	if i, j := strings.Index(scr, "02:59:58  committed"), strings.Index(scr, "02:59:57  prepare-commit"); i < 0 || j < i {
		t.Errorf("the newest is not first:\n%s", scr)
	}
	if i, j := strings.Index(scr, "── before 23:48:00"), strings.Index(scr, "02:00:00  aborted"); j < 0 || i < j {
		t.Errorf("the compacted line is not where the complete part ends:\n%s", scr)
	}
	h.send(sizeMsg(80, 24))
	mustContain(t, h.screen(), "── log replay · every transition since 23:48:00 (3h12m ago) · 8 events ─")
}

// TestReplayTitleSaysTheLimit: a replay that hit the limit says it shows the
// newest, not all.
func TestReplayTitleSaysTheLimit(t *testing.T) {
	h := started(t)
	evs := busyCommits("orders-enricher-v1-0-41", replayLimit/4, uitest.T0.Add(-time.Hour))
	h.admin.SetReplay(uitest.ReplayReply{Events: evs, Complete: uitest.T0.Add(-time.Hour), Oldest: uitest.T0.Add(-time.Hour)})
	h.finish(h.hold("h"))
	h.send(sizeMsg(160, 48))
	mustContain(t, h.screen(), "every transition since 02:00:00 (1h00m ago) · 5,000 newest ─")
	mustNotContain(t, h.screen(), "before:", "compacted")
}

// TestReplaySaysWhatItCannotRead: records of the log the replay could not
// read come first in its title, and the line where it stops being complete
// says it may be them.
func TestReplaySaysWhatItCannotRead(t *testing.T) {
	h := started(t)
	h.admin.SetReplay(uitest.ReplayReply{Events: replayEvents(), Complete: replayComplete, Oldest: replayOldest,
		Unread: []model.Unread{{Partition: 3, Kind: model.UnreadCorrupt, Count: 2, FirstOffset: 17, LastOffset: 40, Why: "x"}}})
	h.finish(h.hold("h"))
	h.send(sizeMsg(160, 48))
	mustContain(t, h.screen(),
		"── replay of the coordinators' log · 2 unreadable records · every transition since 23:48:00 (3h12m ago) · before: not all, back to Mar 13 01:00:00 · 8 events ─",
		"── before 23:48:00: not every transition (compacted, or before a record it cannot read)")
	h.send(sizeMsg(80, 24))
	mustContain(t, h.screen(), "── log replay · complete since 23:48:00 (2 unreadable) · 8 events ─")
}

// TestReplayErrorIsOneLine: a log that cannot be read says why in the pane
// and what the replay needs; nothing else changes.
func TestReplayErrorIsOneLine(t *testing.T) {
	h := started(t)
	h.admin.SetReplay(uitest.ReplayReply{Err: errors.New("the cluster has no __transaction_state\nsecond line")})
	h.finish(h.hold("h"))
	scr := h.screen()
	mustContain(t, scr, "  cannot replay: the cluster has no __transaction_state ",
		"the replay reads the coordinators' own log, the topic __transaction_state:", "(the demo's has none)")
	mustNotContain(t, scr, "second line")
	if h.m.poll.err != "" || h.quit {
		t.Errorf("a failed replay touched the rest: poll err %q, quit %v", h.m.poll.err, h.quit)
	}
}

// TestReplayToggleBack: h again, or esc, shows the session's events; e
// hides and shows the pane whatever it shows.
func TestReplayToggleBack(t *testing.T) {
	for _, back := range []string{"h", "esc"} {
		t.Run(back, func(t *testing.T) {
			h := replayed(t)
			if cmd := h.hold(back); cmd != nil {
				t.Errorf("%s started something", back)
			}
			scr := h.screen()
			mustContain(t, scr, "── events · latest first")
			mustNotContain(t, scr, "replay")
			if h.m.replay.got.Events != nil || !h.m.showEvents {
				t.Errorf("after %s: %d replayed events kept, pane shown %v", back, len(h.m.replay.got.Events), h.m.showEvents)
			}
		})
	}
	h := replayed(t)
	h.press("e")
	mustNotContain(t, h.screen(), "replay")
	h.press("e")
	mustContain(t, h.screen(), "── log replay · every transition")
}

// TestReplayEscStillClearsTheFilterAfter: esc leaves the replay first, then
// clears the filter as before.
func TestReplayEscStillClearsTheFilterAfter(t *testing.T) {
	h := replayed(t)
	h.press("/")
	h.typeText("orders")
	h.press("enter", "esc")
	if h.m.replay.on || h.list().query.Text != "orders" {
		t.Fatalf("esc: replay on %v, filter %q", h.m.replay.on, h.list().query.Text)
	}
	h.press("esc")
	if h.list().query.Text != "" {
		t.Errorf("the second esc left the filter %q", h.list().query.Text)
	}
}

// TestReplayStaleResultDropped: a replay still running when the user goes
// back, or starts another, is cancelled and its answer dropped.
func TestReplayStaleResultDropped(t *testing.T) {
	h := withReplay(t)
	h.admin.ReplayBlock = make(chan struct{})
	first := h.hold("h")
	done := make(chan tea.Msg, 1)
	go func() { done <- first() }()
	h.press("h") // back to the session's events
	msg := <-done
	if r, ok := msg.(replayedMsg); !ok || !errors.Is(r.err, context.Canceled) {
		t.Fatalf("the dropped replay was not cancelled: %#v", msg)
	}
	h.admin.ReplayBlock = nil
	second := h.hold("h")
	h.send(msg) // the first one's answer, late
	if !h.m.replay.running {
		t.Fatal("a stale answer ended the running replay")
	}
	h.finish(second)
	mustContain(t, h.screen(), "── log replay · every transition")

	// An answer the user no longer waits for does not bring the pane back.
	stale := h.hold("r")
	h.press("esc")
	h.finish(stale)
	if h.m.replay.on {
		t.Error("an answer after esc brought the replay back")
	}
}

// TestReplayRefreshRereads: r in replay mode refreshes and reads the log
// again; outside it, r only refreshes.
func TestReplayRefreshRereads(t *testing.T) {
	h := replayed(t)
	polls := h.admin.Refreshes()
	h.finish(h.hold("r"))
	if n := len(h.admin.Replays()); n != 2 || h.admin.Refreshes() != polls+1 {
		t.Errorf("r: %d replays, %d refreshes (was %d)", n, h.admin.Refreshes(), polls)
	}
	h.press("h")
	h.finish(h.hold("r"))
	if n := len(h.admin.Replays()); n != 2 {
		t.Errorf("r outside the replay read the log: %d replays", n)
	}
}

// TestReplayQuitWhileRunning: q cancels a replay in flight, and its answer,
// arriving after, changes nothing.
func TestReplayQuitWhileRunning(t *testing.T) {
	h := withReplay(t)
	h.admin.ReplayBlock = make(chan struct{})
	cmd := h.hold("h")
	done := make(chan tea.Msg, 1)
	go func() { done <- cmd() }()
	h.press("q")
	if !h.quit {
		t.Fatal("q did not quit")
	}
	select {
	case msg := <-done:
		h.send(msg)
	case <-time.After(5 * time.Second):
		t.Fatal("quitting did not cancel the replay")
	}
	if h.m.replay.running || h.m.replay.err != "" {
		t.Errorf("after quit: running %v, err %q", h.m.replay.running, h.m.replay.err)
	}
}

// replayScreens are the goldens of the replay: running, read, failed.
var replayScreens = []struct {
	name  string
	setup func(t *testing.T) *harness
}{
	{"replay-running", func(t *testing.T) *harness {
		h := withReplay(t)
		h.hold("h")
		return h
	}},
	{"replay-shown", replayed},
	{"replay-error", func(t *testing.T) *harness {
		h := started(t)
		h.admin.SetReplay(uitest.ReplayReply{Err: errors.New("the cluster has no __transaction_state")})
		h.finish(h.hold("h"))
		return h
	}},
}

// TestReplayGolden: the frames of the replay; every size in between fits
// the terminal.
func TestReplayGolden(t *testing.T) {
	goldenAndFit(t, replayScreens)
}

// TestReplayOnKfakeSaysItNeedsTheLog: the demo's cluster (kfake) has no
// coordinators' log; the real client's replay says so in the pane, and what
// the replay needs.
func TestReplayOnKfakeSaysItNeedsTheLog(t *testing.T) {
	_, boot := kafkatest.NewCluster(t)
	admin, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: boot, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(admin.Close)
	h := newHarness(t, func(o *Options) { o.Admin = admin })
	h.send(sizeMsg(120, 40))
	h.finish(h.hold("h"))
	mustContain(t, h.screen(), "cannot replay: the cluster has no __transaction_state",
		"the replay reads the coordinators' own log, the topic __transaction_state:", "(the demo's has none)")
}

// TestReplayKeyIsTextInAFilter: h typed into the filter is a letter.
func TestReplayKeyIsTextInAFilter(t *testing.T) {
	h := withReplay(t)
	h.press("/")
	if cmd := h.hold("h"); cmd != nil || h.m.replay.on {
		t.Fatalf("h in the filter started a replay")
	}
	h.press("enter")
	if h.list().query.Text != "h" || len(h.admin.Replays()) != 0 {
		t.Errorf("filter %q, %d replays", h.list().query.Text, len(h.admin.Replays()))
	}
}
