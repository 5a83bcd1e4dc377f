package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/txnscope/txnscope/internal/escape"
	"github.com/txnscope/txnscope/internal/testutil/uitest"
	"github.com/txnscope/txnscope/model"
)

// Hostile ids: any producer picks its transactional.id, and Kafka takes any
// string (integration/escape_test.go checks a real broker does).
const (
	idTitle   = "job-\x1b]0;pwned\x07-0-1"                    // sets the window title
	idClear   = "\x1b[2J\x1b[H-wipe-0-1"                      // clears the screen
	idColour  = "\x1b[31mred\x1b[0m-0-1"                      // paints
	idForged  = "ok-0-1\r\nfenced-job-0-3  PrepareEpochFence" // forges a row
	idBidi    = "rtl-\u202e1-0-gnp.exe"                       // reverses what follows
	idWide    = "注文処理-決済-0-1"                                 // two cells a character
	idCombine = "e\u0301te\u0301-0-1"                         // combining accents
	topicBad  = "evil\x1b[2J\r\ntopic"
	groupBad  = "grp\x1b]0;owned\x07"
)

// hostileSnapshot is a cluster whose ids, topics, groups and errors try to
// act on the terminal or forge rows.
func hostileSnapshot(at time.Time) *model.Snapshot {
	tp := func(topic string, p int32) []model.TopicPartition {
		return []model.TopicPartition{{Topic: topic, Partition: p}}
	}
	open := func(id string, pid int64, age time.Duration, parts []model.TopicPartition) model.Txn {
		return model.Txn{ID: id, State: model.Ongoing, ProducerID: pid, ProducerEpoch: 1, Coordinator: 1,
			TimeoutMs: 60000, StartUnixMs: at.Add(-age).UnixMilli(), Partitions: parts, Described: true}
	}
	s := &model.Snapshot{
		TakenAt: at, Bootstrap: "127.0.0.1:9092", Brokers: 1, BrokerMaxTimeoutMs: 900000,
		Txns: []model.Txn{
			open("orders-enricher-v1-0-41", 4001, 12*time.Second, tp("orders", 0)),
			open(idTitle, 9901, 50*time.Second, tp(topicBad, 0)),
			open(idClear, 9902, 40*time.Second, tp("orders", 1)),
			open(idColour, 9903, 30*time.Second, tp("orders", 2)),
			open(idForged, 9904, 20*time.Second, tp("orders", 3)),
			open(idBidi, 9905, 10*time.Second, tp("orders", 4)),
			open(idWide, 9906, 5*time.Second, tp("orders", 5)),
			open(idCombine, 9907, 3*time.Second, tp("orders", 6)),
			{ID: "err\x1b[2J-0-1", State: model.Ongoing, ProducerID: 9908, Coordinator: 1,
				Err: "NOT_COORDINATOR: \x1b]0;from the broker\x07\r\nforged line"},
		},
		Partitions: []model.Partition{
			{TopicPartition: tp(topicBad, 0)[0], Leader: 1, HighWatermark: 50, LastStableOffset: 10,
				Producers: []model.Producer{{ProducerID: 9901, ProducerEpoch: 1, LastWriteMs: model.WriteMs(at.Add(-time.Second)), CurrentTxnStartOffset: 10}}},
		},
		GroupCommits: []model.GroupCommit{
			{Group: groupBad, State: "Stable\x1b[5m", TopicPartition: tp(topicBad, 0)[0], Offset: 10},
		},
	}
	s.Sort()
	return s
}

func hostile(t *testing.T) *harness {
	t.Helper()
	h := newHarness(t)
	h.admin.Push(hostileSnapshot(uitest.T0))
	h.run(h.m.Init())
	if h.m.data.snap == nil {
		t.Fatal("the first refresh did not arrive")
	}
	return h
}

var hostileScreens = []struct {
	name  string
	setup func(t *testing.T) *harness
}{
	{"list", hostile},
	{"detail", func(t *testing.T) *harness {
		h := hostile(t)
		h.selectID(idTitle)
		h.press("enter")
		return h
	}},
	{"detail-error", func(t *testing.T) *harness {
		h := hostile(t)
		h.selectID("err\x1b[2J-0-1")
		h.press("enter")
		return h
	}},
	{"partitions", func(t *testing.T) *harness {
		h := hostile(t)
		h.press("p")
		return h
	}},
	{"groups", func(t *testing.T) *harness {
		h := hostile(t)
		h.press("c")
		return h
	}},
	{"partitions-of-group", func(t *testing.T) *harness {
		h := hostile(t)
		h.press("c", "enter")
		return h
	}},
	{"dialog-force-terminate", func(t *testing.T) *harness {
		h := hostile(t)
		fixedAuditPath(h)
		h.selectID(idTitle)
		h.press("a")
		return h
	}},
	{"status", func(t *testing.T) *harness {
		h := hostile(t)
		h.selectID(idForged)
		h.press("enter", "esc")
		h.m.setStatus(statusError, "refused: "+idForged+" changed")
		return h
	}},
}

// TestHostileGolden: ids, topics, groups and errors that carry escape
// sequences, CR/LF, bidi overrides, wide and combining characters show
// written out, each id on one row with its state, producer and age, every
// line exactly the terminal's width.
func TestHostileGolden(t *testing.T) {
	for _, sc := range hostileScreens {
		for _, size := range [][2]int{{80, 24}, {120, 30}, {160, 48}} {
			t.Run(fmt.Sprintf("%s_%dx%d", sc.name, size[0], size[1]), func(t *testing.T) {
				h := sc.setup(t)
				frame := darkFrame(t, h, size[0], size[1])
				checkFrame(t, frame, size[0], size[1])
				golden.RequireEqual(t, frame)
			})
		}
	}
}

// TestHostileRows: at every size, each hostile id is one row holding its
// own state, producer id/epoch and age.
func TestHostileRows(t *testing.T) {
	h := hostile(t)
	want := map[int64]string{9901: "50s", 9902: "40s", 9903: "30s", 9904: "20s", 9905: "10s", 9906: "5s", 9907: "3s"}
	for w := minWidth; w <= 200; w += 11 {
		h.send(tea.WindowSizeMsg{Width: w, Height: 24})
		frame := pinned(t, h, colorprofile.ASCII)
		checkFrame(t, frame, w, 24)
		lines := strings.Split(ansi.Strip(frame), "\n")
		for pid, age := range want {
			var rows []string
			for _, l := range lines {
				if strings.Contains(l, fmt.Sprintf(" %d/1 ", pid)) {
					rows = append(rows, l)
				}
			}
			if len(rows) != 1 || !strings.Contains(rows[0], " Ongoing ") || !strings.Contains(rows[0], " "+age+" ") {
				t.Errorf("%d wide: producer %d shows on %d rows, want one with Ongoing and %s:\n%s", w, pid, len(rows), age, strings.Join(rows, "\n"))
			}
		}
		for _, l := range lines {
			if strings.Contains(l, "fenced-job") && !strings.Contains(l, " 9904/1 ") {
				t.Errorf("%d wide: a forged row: %q", w, l)
			}
		}
	}
}

// checkFrame: exactly w×h, and nothing but txnscope's own SGR sequences: no
// other escape, no control character, no bidi override.
func checkFrame(t *testing.T, frame string, w, h int) {
	t.Helper()
	lines := strings.Split(frame, "\n")
	if len(lines) != h {
		t.Fatalf("%d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if got := ansi.StringWidth(l); got != w {
			t.Errorf("line %d is %d cells, want %d: %q", i, got, w, ansi.Strip(l))
		}
		if bad := controlIn(l); bad != "" {
			t.Errorf("line %d carries %s: %q", i, bad, l)
		}
	}
}

// controlIn names the first thing in a rendered line that is not text or an
// SGR sequence.
func controlIn(l string) string {
	for i := 0; i < len(l); {
		if l[i] == 0x1b {
			j := i + 1
			if j < len(l) && l[j] == '[' {
				j++
				for j < len(l) && (l[j] >= '0' && l[j] <= '9' || l[j] == ';' || l[j] == ':') {
					j++
				}
				if j < len(l) && l[j] == 'm' {
					i = j + 1
					continue
				}
			}
			return fmt.Sprintf("a non-SGR escape at byte %d", i)
		}
		r, size := utf8.DecodeRuneInString(l[i:])
		if r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' {
			return fmt.Sprintf("%U at byte %d", r, i)
		}
		i += size
	}
	return ""
}

// TestCursorWithoutColour: TERM=dumb or no TERM at all gives the NoTTY
// profile, which strips every attribute, reverse video included; NO_COLOR
// gives ASCII. In both the selected row of every list-like screen still
// shows, marked >.
func TestCursorWithoutColour(t *testing.T) {
	for _, sc := range []struct {
		name, row string
		setup     func(t *testing.T) *harness
	}{
		{"list", "orders-enricher-v1-2-41", func(t *testing.T) *harness {
			h := started(t)
			h.selectID("orders-enricher-v1-2-41")
			return h
		}},
		{"detail", "orders-5", func(t *testing.T) *harness {
			h := started(t)
			h.selectID("orders-enricher-v1-2-41")
			h.press("enter", "j")
			return h
		}},
		{"partitions", "orders-7", func(t *testing.T) *harness {
			h := pinnedLater(t)
			h.press("p")
			h.selectPin("orders", 7)
			return h
		}},
		{"groups", "orders-analytics", func(t *testing.T) *harness {
			h := pinnedLater(t)
			h.press("c", "j")
			return h
		}},
	} {
		for _, p := range []colorprofile.Profile{colorprofile.NoTTY, colorprofile.ASCII} {
			t.Run(fmt.Sprintf("%s-%s_80x24", sc.name, p), func(t *testing.T) {
				h := sc.setup(t)
				h.send(tea.ColorProfileMsg{Profile: p})
				frame := pinned(t, h, p)
				var marked []string
				for _, l := range strings.Split(ansi.Strip(frame), "\n") {
					if strings.HasPrefix(l, ">") {
						marked = append(marked, l)
					}
				}
				if len(marked) != 1 || !strings.Contains(marked[0], " "+sc.row+" ") {
					t.Errorf("rows marked >: %q, want the one of %s", marked, sc.row)
				}
				if p == colorprofile.NoTTY {
					golden.RequireEqual(t, frame)
				}
			})
		}
	}
}

// TestHostileFramesFit sweeps sizes for every hostile screen, as
// TestEveryFrameFitsTheTerminal does for the others.
func TestHostileFramesFit(t *testing.T) {
	for _, sc := range hostileScreens {
		t.Run(sc.name, func(t *testing.T) {
			h := sc.setup(t)
			h.send(tea.ColorProfileMsg{Profile: colorprofile.TrueColor})
			for w := 20; w <= 200; w += 9 {
				for ht := 5; ht <= 60; ht += 11 {
					h.send(tea.WindowSizeMsg{Width: w, Height: ht})
					checkFrame(t, h.m.View().Content, w, ht)
				}
			}
		})
	}
}

// TestDialogRequestEscapedOnce: the abort dialog's request line shows a
// hostile id escaped once, as its title and facts do: ESC as \x1b, BEL as
// \x07 (not Go's \a), a quote in the id as \", never \\x1b.
func TestDialogRequestEscapedOnce(t *testing.T) {
	for _, id := range []string{idTitle, idClear, "q\"uote\x07-\xff-0-1"} {
		h := hostile(t)
		h.admin.Push(hostileSnapshot(uitest.T0)) // the next refresh, should one come
		h.m.data.snap.Txns = append(h.m.data.snap.Txns, model.Txn{ID: "q\"uote\x07-\xff-0-1", State: model.Ongoing, ProducerID: 9920,
			ProducerEpoch: 1, Coordinator: 1, TimeoutMs: 60000, StartUnixMs: uitest.T0.Add(-time.Second).UnixMilli(), Described: true})
		h.m.data.snap.Sort()
		h.send(tea.WindowSizeMsg{Width: 200, Height: 50})
		h.selectID(id)
		h.press("a")
		s := h.screen()
		want := `InitProducerId(transactional.id "` + strings.ReplaceAll(escape.Text(id), `"`, `\"`) + `", producer id -1`
		if !strings.Contains(s, want) || strings.Contains(s, `\\x`) {
			t.Errorf("the request line of %q does not show %s:\n%s", id, want, s)
		}
		if !strings.Contains(s, escape.Text(id)) {
			t.Errorf("the facts do not show %s:\n%s", escape.Text(id), s)
		}
	}
}

// TestHugeIDsFit: Kafka takes ids of any length; ids of 16 and 32 KB, full
// of escape sequences, still make one row each and frames of exactly the
// terminal's size, in the list, the detail and the abort dialog, whose
// confirmation stays on screen.
func TestHugeIDsFit(t *testing.T) {
	huge16 := "h16-" + strings.Repeat("\x1b[2J\xff-", 16<<10/7)
	huge32 := "h32-" + strings.Repeat("\r\n\u202e", 32<<10/6)
	setup := func(t *testing.T) *harness {
		h := newHarness(t)
		s := hostileSnapshot(uitest.T0)
		for i, id := range []string{huge16, huge32} {
			s.Txns = append(s.Txns, model.Txn{ID: id, State: model.Ongoing, ProducerID: int64(9950 + i), ProducerEpoch: 1, Coordinator: 1,
				TimeoutMs: 60000, StartUnixMs: uitest.T0.Add(-time.Minute).UnixMilli(), Described: true,
				Partitions: []model.TopicPartition{{Topic: "orders", Partition: 7}}})
		}
		s.Sort()
		h.admin.Push(s)
		h.run(h.m.Init())
		return h
	}
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		h := setup(t)
		h.send(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		checkFrame(t, h.m.View().Content, size[0], size[1])
		if got := len(h.list().win.rows); got != 11 {
			t.Errorf("%dx%d: %d rows, want 11 (one per id)", size[0], size[1], got)
		}
		for _, id := range []string{huge16, huge32} {
			h.selectID(id)
			h.press("enter")
			checkFrame(t, h.m.View().Content, size[0], size[1])
			h.press("esc", "a")
			frame := h.m.View().Content
			checkFrame(t, frame, size[0], size[1])
			mustContain(t, ansi.Strip(frame), "Type abort")
			h.press("esc")
		}
	}
}
