package ui

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/txnscope/txnscope/internal/audit"
	"github.com/txnscope/txnscope/internal/testutil/uitest"
	"github.com/txnscope/txnscope/model"
)

// screens are the states the golden files and the size sweep look at.
var screens = []struct {
	name  string
	setup func(t *testing.T) *harness
}{
	{"list", func(t *testing.T) *harness { return started(t) }},
	{"list-readonly", func(t *testing.T) *harness { return started(t, func(o *Options) { o.ReadOnly = true }) }},
	{"list-filter", func(t *testing.T) *harness {
		h := started(t)
		h.press("f", "/")
		h.typeText("orders")
		return h
	}},
	{"connecting", func(t *testing.T) *harness { return newHarness(t) }},
	{"loading", func(t *testing.T) *harness {
		h, cmd := loading(t, uitest.Snapshot(uitest.T0), 4)
		h.deliver(cmd) // one batch in: the rows on screen first
		return h
	}},
	{"loading-detail", func(t *testing.T) *harness {
		h, _ := loading(t, uitest.Snapshot(uitest.T0), 4)
		h.selectID("orders-enricher-v1-2-41")
		h.press("enter")
		return h
	}},
	{"slow-refresh", slowRefresh},
	{"stale-error", func(t *testing.T) *harness {
		h := started(t)
		h.admin.Fail(errors.New("dial tcp 127.0.0.1:9092: connect: connection refused"))
		h.tick()
		h.tick()
		h.now = h.now.Add(time.Second)
		h.send(clockMsg{})
		return h
	}},
	{"events", func(t *testing.T) *harness {
		h := started(t)
		h.admin.Push(evolved(uitest.T0.Add(2 * time.Second)))
		h.tick()
		h.press("e")
		return h
	}},
	{"detail", func(t *testing.T) *harness {
		h := started(t)
		h.selectID("orders-enricher-v1-2-41")
		h.press("enter", "j")
		return h
	}},
	{"context-cmdline", func(t *testing.T) *harness {
		h := started(t, inProfile(Profile{Name: "staging", Label: "staging eu", Color: "green"}, "staging", "prod-eu"))
		h.press(":")
		h.typeText("ctx pr")
		return h
	}},
	{"dialog-protected", func(t *testing.T) *harness {
		h := started(t, inProfile(Profile{Name: "prod-eu", Label: "PROD eu-west-1", Color: "red", Protected: true}, "staging", "prod-eu"))
		h.selectID("orders-enricher-v1-2-41")
		h.press("a")
		h.typeText("abort")
		h.press("enter")
		return h
	}},
	{"dialog-force-terminate", func(t *testing.T) *harness {
		h := started(t)
		h.selectID("orders-enricher-v1-2-41")
		h.press("a")
		h.typeText("abo")
		return h
	}},
	{"dialog-commit", func(t *testing.T) *harness {
		h := jobsStarted(t, withFlink(failedJob("FAILED"), nil))
		h.selectID("warehouse-loader-1-121")
		h.press("C")
		h.typeText("comm")
		return h
	}},
	{"dialog-resolve", func(t *testing.T) *harness {
		h := jobsStarted(t, withFlink(failedJob("FAILED"), nil))
		h.press("J")
		for range 10 {
			if j, ok := h.jobs().current(); ok && j.ID.Name == "warehouse-loader" {
				break
			}
			h.press("down")
		}
		h.press("C")
		return h
	}},
	{"dialog-abort-partition-refused", func(t *testing.T) *harness {
		h := started(t)
		h.admin.Result = func(a model.Action) model.Result {
			return model.Result{Action: a, At: uitest.T0, Refused: true,
				Err: "refused: producer 4003 no longer has an open transaction on orders-7"}
		}
		h.selectID("orders-enricher-v1-2-41")
		h.press("enter", "G", "x")
		h.typeText("abort")
		h.press("enter")
		return h
	}},
	{"help", func(t *testing.T) *harness {
		h := started(t)
		h.press("?")
		return h
	}},
	{"partitions", func(t *testing.T) *harness {
		h := pinnedLater(t)
		h.press("tab", "tab") // transactions → jobs → partitions
		return h
	}},
	{"partitions-of-group", func(t *testing.T) *harness {
		h := pinnedLater(t)
		h.press("c", "enter")
		return h
	}},
	{"partitions-filter", func(t *testing.T) *harness {
		h := pinnedLater(t)
		h.press("p", "/")
		h.typeText("orders")
		return h
	}},
	{"groups", func(t *testing.T) *harness {
		h := pinnedLater(t)
		h.press("c")
		return h
	}},
	{"partition-detail", func(t *testing.T) *harness {
		h := pinnedLater(t)
		h.press("p")
		h.selectPin("billing", 2)
		h.press("enter")
		return h
	}},
	{"partition-to-transaction", func(t *testing.T) *harness {
		h := pinnedLater(t)
		h.press("p")
		h.selectPin("orders", 7)
		h.press("enter")
		return h
	}},
}

// pinnedLater is the fixture seen twice, 90 s apart: every pin has been
// seen for at least 90 s, except orders-0, whose LSO moved on to a new pin.
func pinnedLater(t *testing.T) *harness {
	t.Helper()
	h := started(t)
	s := uitest.Snapshot(uitest.T0.Add(90 * time.Second))
	for i := range s.Partitions {
		p := &s.Partitions[i]
		if p.Topic == "orders" && p.TopicPartition.Partition == 0 {
			p.LastStableOffset, p.Producers[0].CurrentTxnStartOffset = 1190, 1190
		}
	}
	h.admin.Push(s)
	h.now = uitest.T0.Add(88 * time.Second)
	h.tick()
	return h
}

// evolved is the fixture two seconds later: one commit, one abort at
// timeout, one fence, one new transaction.
func evolved(at time.Time) *model.Snapshot {
	s := uitest.Snapshot(uitest.T0)
	s.TakenAt = at
	for i := range s.Txns {
		t := &s.Txns[i]
		switch t.ID {
		case "orders-enricher-v1-0-41":
			t.State, t.StartUnixMs, t.Partitions = model.CompleteCommit, 0, nil
		case "crashed-job-0-7":
			t.State, t.StartUnixMs, t.Partitions, t.ProducerEpoch = model.CompleteAbort, 0, nil, 1
		case "fenced-job-0-3":
			t.State, t.StartUnixMs, t.Partitions, t.ProducerEpoch = model.CompleteAbort, 0, nil, 4
		case "orders-enricher-v1-3-40":
			t.State, t.StartUnixMs = model.Ongoing, at.Add(-time.Second).UnixMilli()
			t.Partitions = []model.TopicPartition{{Topic: "orders", Partition: 6}}
		}
	}
	return s
}

// fixedAuditPath shows the dialogs' audit log, and the attempt's id, the same
// in every run (the harness writes to a temporary directory); nothing more
// is written.
func fixedAuditPath(h *harness) {
	if h.m.o.Audit != nil {
		h.m.o.Audit = audit.New("/home/oncall/.local/state/txnscope/audit.log")
	}
	if d := h.m.dialog; d != nil {
		for i := range d.batch.Results {
			if d.batch.Results[i].Attempt != "" {
				d.batch.Results[i].Attempt = "9c1f0e77a2d4b6e1" // random in each run
			}
		}
	}
}

// darkFrame is the w×ht frame a 256-colour terminal on a dark background
// receives: the goldens' common setting.
func darkFrame(t *testing.T, h *harness, w, ht int) string {
	t.Helper()
	h.send(tea.ColorProfileMsg{Profile: colorprofile.ANSI256})
	h.send(tea.BackgroundColorMsg{Color: color.Black})
	h.send(tea.WindowSizeMsg{Width: w, Height: ht})
	return pinned(t, h, colorprofile.ANSI256)
}

// pinned renders the frame the way a 256-colour terminal would receive it.
func pinned(t *testing.T, h *harness, p colorprofile.Profile) string {
	t.Helper()
	var b bytes.Buffer
	w := &colorprofile.Writer{Forward: &b, Profile: p}
	if _, err := w.WriteString(h.m.View().Content); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestGolden(t *testing.T) {
	for _, sc := range screens {
		for _, size := range [][2]int{{80, 24}, {160, 48}} {
			t.Run(fmt.Sprintf("%s_%dx%d", sc.name, size[0], size[1]), func(t *testing.T) {
				h := sc.setup(t)
				fixedAuditPath(h)
				golden.RequireEqual(t, darkFrame(t, h, size[0], size[1]))
			})
		}
	}
	t.Run("list-nocolor_80x24", func(t *testing.T) {
		h := started(t) // the harness runs with the ASCII profile NO_COLOR gives
		golden.RequireEqual(t, pinned(t, h, colorprofile.ASCII))
	})
	t.Run("list-light_80x24", func(t *testing.T) {
		h := started(t)
		h.send(tea.ColorProfileMsg{Profile: colorprofile.ANSI256})
		h.send(tea.BackgroundColorMsg{Color: color.White})
		golden.RequireEqual(t, pinned(t, h, colorprofile.ANSI256))
	})
	t.Run("too-small_60x15", func(t *testing.T) {
		h := started(t)
		h.send(tea.WindowSizeMsg{Width: 60, Height: 15})
		golden.RequireEqual(t, pinned(t, h, colorprofile.ANSI256))
	})
}

// TestEveryFrameFitsTheTerminal sweeps sizes for every screen: each frame is
// exactly W lines of H cells, whatever the size.
func TestEveryFrameFitsTheTerminal(t *testing.T) {
	for _, sc := range screens {
		t.Run(sc.name, func(t *testing.T) {
			h := sc.setup(t)
			h.send(tea.ColorProfileMsg{Profile: colorprofile.TrueColor})
			for w := 20; w <= 200; w += 7 {
				for ht := 5; ht <= 60; ht += 5 {
					h.send(tea.WindowSizeMsg{Width: w, Height: ht})
					frame := h.m.View().Content
					lines := strings.Split(frame, "\n")
					if len(lines) != ht {
						t.Fatalf("%d×%d: %d lines", w, ht, len(lines))
					}
					for i, l := range lines {
						if got := ansi.StringWidth(l); got != w {
							t.Fatalf("%d×%d: line %d is %d cells: %q", w, ht, i, got, ansi.Strip(l))
						}
					}
					if (w < minWidth || ht < minHeight) && !strings.Contains(frame, "terminal too small") {
						t.Fatalf("%d×%d: no too-small message", w, ht)
					}
				}
			}
		})
	}
}
