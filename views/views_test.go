package views

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"

	"github.com/txnscope/txnscope/internal/testutil/uitest"
	"github.com/txnscope/txnscope/model"
)

func TestFitAndClip(t *testing.T) {
	for _, c := range []struct {
		name string
		got  string
		want string
	}{
		{"pads", Fit("ab", 4), "ab  "},
		{"cuts", Fit("abcdef", 4), "abcd"},
		{"zero", Fit("abc", 0), ""},
		{"wide runes", Fit("日本語", 5), "日本 "},
		{"keeps escapes", Fit("\x1b[1mabcdef\x1b[m", 3), "\x1b[1mabc\x1b[m"},
		{"clip short", Clip("abc", 5), "abc"},
		{"clip long", Clip("abcdef", 4), "abc…"},
		{"middle short", ClipMiddle("job-1-2", 10), "job-1-2"},
		{"middle keeps both ends", ClipMiddle("orders-enricher-v1-2-41", 15), "orders-…v1-2-41"},
		{"middle tiny", ClipMiddle("orders-enricher", 5), "orde…"},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, c.got, c.want)
		}
	}
}

func TestCellsAgreesWithStringWidth(t *testing.T) {
	for _, s := range []string{
		"", "abc", "\x1b[1;38;5;203m!!\x1b[m x", "██░░ 45%", "── events ─", "a–b·c…", "● connected", "✗ 3×4 ↑↓→ • ▸ ≥5s",
		"日本語", "e\u0301", "emoji 👍", "\x1b]8;;http://x\x07link\x1b]8;;\x07", "tab\there", "\x1b[", "\x1b[1",
	} {
		if got, want := cells(s), ansi.StringWidth(s); got != want {
			t.Errorf("cells(%q) = %d, ansi.StringWidth says %d", s, got, want)
		}
	}
}

func TestFormats(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Dur(0), "0s"}, {Dur(-time.Second), "0s"}, {Dur(42 * time.Second), "42s"},
		{Dur(4*time.Minute + 12*time.Second), "4m12s"}, {Dur(3*time.Hour + 4*time.Minute), "3h04m"},
		{Dur(50 * time.Hour), "2d02h"}, {Dur(200 * 24 * time.Hour), "200d"},
		{Timeout(0), "–"}, {Timeout(time.Minute), "1m"}, {Timeout(15 * time.Minute), "15m"},
		{Timeout(time.Hour), "1h"}, {Timeout(45 * time.Second), "45s"}, {Timeout(90 * time.Second), "1m30s"},
		{Timeout(1500 * time.Millisecond), "1.5s"},
		{Percent(0), "  0%"}, {Percent(0.5), " 50%"}, {Percent(1.17), "117%"}, {Percent(12), "999+"},
		{Count(0), "0"}, {Count(999), "999"}, {Count(1000), "1,000"}, {Count(1234567), "1,234,567"}, {Count(-1000), "-1,000"},
		{Offset(-1), "–"}, {Offset(42), "42"},
		{Clock(time.Time{}, nil), "–"}, {Clock(uitest.T0, time.UTC), "03:00:00"},
		{Outcome(model.TimedOut), "timed out"}, {Outcome(model.Committed), "committed"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestWrap(t *testing.T) {
	for _, c := range []struct {
		in   string
		w    int
		want []string
	}{
		{"producer id -1, epoch -1", 14, []string{"producer id", "-1, epoch -1"}},
		{"orders-enricher-v1-2-41 bumps", 24, []string{"orders-enricher-v1-2-41", "bumps"}},
		{"abcdefghij", 4, []string{"abcd", "efgh", "ij"}},
		{"", 10, []string{""}},
	} {
		if got := Wrap(c.in, c.w); strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("Wrap(%q, %d) = %q, want %q", c.in, c.w, got, c.want)
		}
	}
}

func TestMarker(t *testing.T) {
	now := uitest.T0
	tx := func(age time.Duration, err string) *model.Txn {
		return &model.Txn{State: model.Ongoing, TimeoutMs: 100000, StartUnixMs: now.Add(-age).UnixMilli(), Err: err}
	}
	for _, c := range []struct {
		t    *model.Txn
		want string
	}{
		{tx(10*time.Second, ""), "  "},
		{tx(50*time.Second, ""), "! "},
		{tx(90*time.Second, ""), "!!"},
		{tx(200*time.Second, ""), "!!"},
		{tx(0, "denied"), "? "},
	} {
		if got := Marker(c.t, now); got != c.want {
			t.Errorf("marker %q, want %q", got, c.want)
		}
	}
}

func TestLayoutDropsColumnsInOrderAndShareSpareWidth(t *testing.T) {
	names := func(cols []Column[Row]) string {
		var out []string
		for _, c := range cols {
			out = append(out, c.Name)
		}
		return strings.Join(out, ",")
	}
	for _, c := range []struct {
		w    int
		want string
	}{
		{200, "TRANSACTIONAL ID,STATE,PID/EPOCH,PARTS,AGE,TIMEOUT,AGE/TIMEOUT,LAST,SEEN C/A,COORD"},
		{120, "TRANSACTIONAL ID,STATE,PID/EPOCH,PARTS,AGE,TIMEOUT,AGE/TIMEOUT,LAST,SEEN C/A,COORD"},
		{100, "TRANSACTIONAL ID,STATE,PID/EPOCH,PARTS,AGE,TIMEOUT,AGE/TIMEOUT,LAST"},
		{77, "TRANSACTIONAL ID,STATE,PID/EPOCH,AGE,AGE/TIMEOUT"},
	} {
		cols := Layout(ListColumns(), c.w)
		if got := names(cols); got != c.want {
			t.Errorf("width %d: %s, want %s", c.w, got, c.want)
		}
		if got := ansi.StringWidth(HeaderLine(cols)); got > c.w {
			t.Errorf("width %d: header is %d wide", c.w, got)
		}
	}
}

func TestSummarize(t *testing.T) {
	s := Summarize(uitest.Snapshot(uitest.T0))
	var got []string
	for _, c := range s.Counts {
		got = append(got, fmt.Sprintf("%s=%d", c.State, c.N))
	}
	want := "Ongoing=6 PrepareEpochFence=1 CompleteCommit=1 CompleteAbort=1 Empty=1"
	if strings.Join(got, " ") != want || s.Total != 10 || s.OldestID != "long-runner" || s.Brokers != 3 {
		t.Errorf("summary %v total %d oldest %s", got, s.Total, s.OldestID)
	}
	if e := Summarize(&model.Snapshot{}); len(e.Counts) != 1 || e.Counts[0].State != model.Ongoing {
		t.Errorf("an empty cluster still says Ongoing 0: %+v", e.Counts)
	}
}

func TestConnStale(t *testing.T) {
	c := Conn{Loaded: true, LastOK: uitest.T0, Refresh: 2 * time.Second}
	if c.Stale(uitest.T0.Add(4 * time.Second)) {
		t.Errorf("data two intervals old is not stale yet")
	}
	if !c.Stale(uitest.T0.Add(4*time.Second + time.Millisecond)) {
		t.Errorf("data older than two intervals is stale")
	}
	if (Conn{Refresh: time.Second}).Stale(uitest.T0) {
		t.Errorf("no data is not stale data")
	}
	failed := c
	failed.Err = "cannot reach the cluster"
	if !failed.Stale(uitest.T0.Add(time.Second)) {
		t.Errorf("data kept after a failed refresh is stale at once")
	}
}

func TestListDrawsOnlyTheWindow(t *testing.T) {
	s := uitest.Big(1000, uitest.T0)
	rows := make([]int, len(s.Txns))
	for i := range rows {
		rows[i] = i
	}
	d := ListData{Snap: s, Hist: model.NewHistory(1), Rows: rows, Cursor: 505, Top: 500, Now: uitest.T0}
	out := ansi.Strip(List(d, 120, 12, PlainStyles()))
	for i, id := range []string{s.Txns[499].ID, s.Txns[500].ID, s.Txns[509].ID, s.Txns[510].ID} {
		if on := strings.Contains(out, id+" "); on != (i == 1 || i == 2) {
			t.Errorf("%s on screen: %v\n%s", id, on, out)
		}
	}
	if !strings.Contains(out, "1,000 ids") {
		t.Errorf("status line lacks the count:\n%s", out)
	}
}

// TestRenderersAreExactlyTheirSize checks the pure renderers on their own,
// down to sizes the ui never asks for.
func TestRenderersAreExactlyTheirSize(t *testing.T) {
	s := uitest.Snapshot(uitest.T0)
	h := model.NewHistory(10)
	rows := model.Rows(s, h, model.Query{}, uitest.T0)
	t0, _ := s.Txn("orders-enricher-v1-2-41")
	p4, _ := s.Partition(model.TopicPartition{Topic: "orders", Partition: 4})
	dd := DetailData{Txn: t0, Now: uitest.T0, Parts: []model.TxnPartition{{TopicPartition: p4.TopicPartition, Part: p4, Known: true, Listed: true}}}
	ev := EventsData{Events: []model.Event{{At: uitest.T0, ID: "x", Kind: model.Committed}}, Total: 1}
	st := PlainStyles()
	render := map[string]func(w, h int) string{
		"list":   func(w, ht int) string { return List(ListData{Snap: s, Hist: h, Rows: rows, Now: uitest.T0}, w, ht, st) },
		"detail": func(w, ht int) string { return Detail(dd, w, ht, st) },
		"events": func(w, ht int) string { return Events(ev, w, ht, st) },
		"help": func(w, ht int) string {
			return Help(HelpLines([]HelpGroup{{"g", []key.Binding{key.NewBinding(key.WithKeys("q"), key.WithHelp("q", "quit"))}}}, []string{"a note"}, w, st), 0, w, ht, st)
		},
		"help scrolled": func(w, ht int) string {
			return Help(HelpLines([]HelpGroup{{"g", []key.Binding{key.NewBinding(key.WithKeys("q"), key.WithHelp("q", "quit"))}}},
				[]string{strings.Repeat("a long note ", 40)}, w, st), 4, w, ht, st)
		},
		"toosmall": func(w, ht int) string { return TooSmall(w, ht, 80, 20, st) },
		"header": func(w, ht int) string {
			hd := HeaderData{Bootstrap: "b:9092", Sum: Summarize(s), Conn: Conn{Loaded: true, Err: "boom"}, Now: uitest.T0}
			return Block(Lines(Header(hd, w, st)), w, ht)
		},
	}
	for name, f := range render {
		for w := 1; w <= 200; w += 3 {
			for ht := 1; ht <= 50; ht += 7 {
				lines := strings.Split(f(w, ht), "\n")
				if len(lines) != ht {
					t.Fatalf("%s %d×%d: %d lines", name, w, ht, len(lines))
				}
				for i, l := range lines {
					if ansi.StringWidth(l) != w {
						t.Fatalf("%s %d×%d: line %d is %d wide", name, w, ht, i, ansi.StringWidth(l))
					}
				}
			}
		}
	}
	for w := 20; w <= 200; w += 9 {
		for ht := 3; ht <= 50; ht += 7 {
			box := ActionDialog(ActionDialogData{Title: "T", Wire: "send something long enough to wrap around", Consequences: []string{"a", "b"}}, w, ht, st)
			lines := strings.Split(box, "\n")
			if len(lines) > ht {
				t.Fatalf("dialog %d×%d: %d lines", w, ht, len(lines))
			}
			for _, l := range lines {
				if ansi.StringWidth(l) > w {
					t.Fatalf("dialog %d×%d: a line is %d wide", w, ht, ansi.StringWidth(l))
				}
			}
		}
	}
}

// TestTablesFitTheNarrowestTerminal: at 80 columns, the narrowest the TUI
// draws, every table's columns fit beside the row marker (cursor, sign), so
// no row is cut short without its ellipsis.
func TestTablesFitTheNarrowestTerminal(t *testing.T) {
	const w = 80
	for name, got := range map[string]int{
		"list":       width(Layout(ListColumns(), w-markerWidth)),
		"partitions": width(Layout(PinColumns(), w-markerWidth)),
		"groups":     width(Layout(GroupColumns(), w-markerWidth)),
		"detail":     width(Layout(partColumns(), w-markerWidth)),
		"producers":  width(Layout(paneColumns(19), w-4)),
		"groups at":  width(Layout(stuckColumns(), w-4)),
	} {
		if got > w-markerWidth {
			t.Errorf("%s: %d cells of columns, room for %d", name, got, w-markerWidth)
		}
	}
}

// TestCellsInDisplayWidth: ids of wide (CJK) and combining characters are
// clipped and padded in terminal cells, so every cell is exactly its
// column's width and the columns after it stay in line.
func TestCellsInDisplayWidth(t *testing.T) {
	for _, id := range []string{
		"注文処理-決済-0-1",
		"e\u0301te\u0301-cafe\u0301-0-1",
		"mix-注a文b処c理-0-1",
		"\U0001F600-job-\U0001F600\u200d\U0001F600-0-1", // the joiner is written out
		"orders-enricher-v1-0-41",
	} {
		s := name(id)
		for w := 1; w <= 30; w++ {
			for _, clip := range []func(string, int) string{Clip, ClipMiddle} {
				got := clip(s, w)
				if cw := ansi.StringWidth(got); cw > w {
					t.Errorf("clip(%q, %d) = %q is %d cells", s, w, got, cw)
				}
				if cw := ansi.StringWidth(pad(got, w, false)); cw != w {
					t.Errorf("pad(clip(%q, %d)) is %d cells", s, w, cw)
				}
			}
		}
	}
}

// A word longer than a line is cut into pieces the width of the line, the
// same as cutting it again and again with ansi.Truncate, in one pass.
func TestWrapCutsLongWords(t *testing.T) {
	truncating := func(word string, w int) []string {
		var out []string
		for ansi.StringWidth(word) > w {
			out = append(out, ansi.Truncate(word, w, ""))
			word = ansi.TruncateLeft(word, w, "")
		}
		return append(out, word)
	}
	for _, word := range []string{
		"orders-enricher-v1-0-41", strings.Repeat(`\x1b[2J\xff`, 40), "注文処理-決済-注文処理-決済-0-1",
		strings.Repeat("e\u0301", 30), "a注b注c注d注e注f", strings.Repeat("🇫🇷-", 12),
	} {
		for _, w := range []int{2, 3, 5, 8, 13, 80} {
			got := Wrap(word, w)
			if want := truncating(word, w); !slices.Equal(got, want) {
				t.Errorf("Wrap(%q, %d) = %q, want %q", word, w, got, want)
			}
			if strings.Join(got, "") != word {
				t.Errorf("Wrap(%q, %d) lost text: %q", word, w, got)
			}
		}
	}
}
