package ui

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"github.com/txnscope/txnscope/internal/audit"
	"github.com/txnscope/txnscope/internal/testutil/uitest"
)

// harness drives a Model the way the Bubble Tea runtime would, but
// synchronously: commands run in the test goroutine and their messages go
// straight back into Update; timers are recorded instead of started.
type harness struct {
	t     testing.TB
	m     *Model
	admin *uitest.Admin
	now   time.Time
	ticks []scheduled
	quit  bool
}

type scheduled struct {
	d   time.Duration
	msg tea.Msg
}

func newHarness(t testing.TB, opts ...func(*Options)) *harness {
	t.Helper()
	h := &harness{t: t, admin: &uitest.Admin{}, now: uitest.T0}
	o := Options{Admin: h.admin, Bootstrap: "127.0.0.1:9092", Refresh: 2 * time.Second, Now: func() time.Time { return h.now },
		Audit: audit.New(filepath.Join(t.TempDir(), "audit.log"))}
	for _, f := range opts {
		f(&o)
	}
	h.m = New(o)
	h.m.loc = time.UTC
	h.m.schedule = func(d time.Duration, msg tea.Msg) tea.Cmd {
		h.ticks = append(h.ticks, scheduled{d, msg})
		return nil
	}
	h.send(tea.ColorProfileMsg{Profile: colorprofile.ASCII})
	h.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	return h
}

// started is a harness that has shown the fixture snapshot once.
func started(t *testing.T, opts ...func(*Options)) *harness {
	t.Helper()
	h := newHarness(t, opts...)
	h.admin.Push(uitest.Snapshot(uitest.T0))
	h.run(h.m.Init())
	if h.m.data.snap == nil {
		t.Fatal("the first refresh did not arrive")
	}
	return h
}

func (h *harness) send(msg tea.Msg) {
	h.t.Helper()
	_, cmd := h.m.Update(msg)
	h.run(cmd)
}

func (h *harness) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			h.run(c)
		}
	case tea.QuitMsg:
		h.quit = true
	case refreshedMsg, sentMsg, describedMsg:
		h.send(msg)
	}
}

// The screens, for tests that look at their state.
func (h *harness) list() *listScreen        { return h.m.screens[screenList].(*listScreen) }
func (h *harness) parts() *partitionsScreen { return h.m.screens[screenPartitions].(*partitionsScreen) }
func (h *harness) detail() *detailScreen    { return h.m.screens[screenDetail].(*detailScreen) }

// press sends keys by name: "j", "enter", "ctrl+c", "pgdown" ...
func (h *harness) press(keys ...string) {
	h.t.Helper()
	for _, k := range keys {
		h.send(keyMsg(k))
	}
}

// typeText types s one character at a time.
func (h *harness) typeText(s string) {
	h.t.Helper()
	for _, r := range s {
		h.send(keyMsg(string(r)))
	}
}

func keyMsg(k string) tea.KeyPressMsg {
	named := map[string]rune{
		"enter": tea.KeyEnter, "esc": tea.KeyEscape, "up": tea.KeyUp, "down": tea.KeyDown,
		"pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown, "home": tea.KeyHome, "end": tea.KeyEnd,
		"backspace": tea.KeyBackspace, "tab": tea.KeyTab,
	}
	if c, ok := named[k]; ok {
		return tea.KeyPressMsg{Code: c}
	}
	if rest, ok := strings.CutPrefix(k, "ctrl+"); ok {
		return tea.KeyPressMsg{Code: []rune(rest)[0], Mod: tea.ModCtrl}
	}
	if k == "space" {
		return tea.KeyPressMsg{Code: ' ', Text: " "}
	}
	return tea.KeyPressMsg{Code: []rune(k)[0], Text: k}
}

// screen is the current frame as plain text.
func (h *harness) screen() string { return ansi.Strip(h.m.View().Content) }

// tick fires the pending poll timer, as if its interval had passed.
func (h *harness) tick() {
	h.t.Helper()
	for i := len(h.ticks) - 1; i >= 0; i-- {
		if tm, ok := h.ticks[i].msg.(tickMsg); ok {
			h.now = h.now.Add(h.ticks[i].d)
			h.send(tm)
			return
		}
	}
	h.t.Fatal("no poll tick scheduled")
}

// lastTick is the most recently scheduled poll timer.
func (h *harness) lastTick() (scheduled, bool) {
	for i := len(h.ticks) - 1; i >= 0; i-- {
		if _, ok := h.ticks[i].msg.(tickMsg); ok {
			return h.ticks[i], true
		}
	}
	return scheduled{}, false
}

func (h *harness) selectedID() string {
	t, _ := h.list().current()
	return t.ID
}

// selectID moves the list cursor onto id.
func (h *harness) selectID(id string) {
	h.t.Helper()
	h.press("g")
	for i := 0; i < len(h.list().win.rows); i++ {
		if h.selectedID() == id {
			return
		}
		h.press("j")
	}
	h.t.Fatalf("%s is not in the list", id)
}

// selectPin moves the partitions view's cursor onto topic-partition.
func (h *harness) selectPin(topic string, partition int32) {
	h.t.Helper()
	h.press("g")
	for i := 0; i < len(h.parts().win.rows); i++ {
		if p, ok := h.parts().current(); ok && p.Topic == topic && p.TopicPartition.Partition == partition {
			return
		}
		h.press("j")
	}
	h.t.Fatalf("%s-%d is not in the partitions view", topic, partition)
}

func mustContain(t *testing.T, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("screen lacks %q:\n%s", sub, s)
		}
	}
}

func mustNotContain(t *testing.T, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			t.Errorf("screen should not show %q:\n%s", sub, s)
		}
	}
}
