package ui

import (
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// wantFilter is what the filter field should keep of text, worked out apart
// from input.clean: printable runes (other spaces become ' '), at most
// limit of them, then trimmed when applied.
func wantFilter(text string, limit int) string {
	var out []rune
	for _, r := range text {
		switch {
		case unicode.IsPrint(r):
		case unicode.IsSpace(r):
			r = ' '
		default:
			continue
		}
		out = append(out, r)
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return strings.TrimSpace(string(out))
}

// FuzzFilter types or pastes anything into the list's and the partitions
// view's / filter: the UI does not panic, the applied query is exactly the
// printable part of what was entered (so a control sequence cannot reach the
// screen), opening the filter again shows it unchanged and applying it again
// changes nothing (it round-trips), the list shows exactly the ids containing
// it, esc gives every row back, and every frame is still 80×24.
func FuzzFilter(f *testing.F) {
	for _, s := range []string{"", "orders", "ORDERS-ENRICHER", "  crashed  ", "-0-", "41", "\x1b[2J\x1b[31mred", "a\tb\nc",
		"İ", "ß", "\xff\xfe", "no-such-id", strings.Repeat("x", 300), "orders-7", "billing-2", "\u200b\u202e"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, text string, paste bool) {
		h := started(t)
		limit := h.list().input.limit
		enter := func() {
			if paste {
				h.send(tea.PasteMsg{Content: text})
				return
			}
			for _, r := range text {
				// A terminal sends printable keys with their text; the
				// rest come as keys the field ignores.
				h.send(tea.KeyPressMsg{Code: r, Text: string(r)})
			}
		}

		h.press("/")
		enter()
		h.press("enter")
		applied := h.list().query.Text
		if want := wantFilter(text, limit); applied != want {
			t.Fatalf("typed %q (paste %v): query %q, want %q", text, paste, applied, want)
		}
		if !utf8.ValidString(applied) {
			t.Fatalf("query %q is not valid UTF-8", applied)
		}
		needle := strings.ToLower(applied)
		var want []string
		for _, tx := range h.m.data.snap.Txns {
			if strings.Contains(strings.ToLower(tx.ID), needle) {
				want = append(want, tx.ID)
			}
		}
		var got []string
		for _, i := range h.list().win.rows {
			got = append(got, h.m.data.snap.Txns[i].ID)
		}
		if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
			t.Fatalf("filter %q lists %v, want %v", applied, got, want)
		}
		frame(t, h)

		h.press("/")
		if v := h.list().input.Value(); v != applied {
			t.Fatalf("reopened filter shows %q, applied was %q", v, applied)
		}
		h.press("enter")
		if h.list().query.Text != applied {
			t.Fatalf("applying %q again gave %q", applied, h.list().query.Text)
		}
		h.press("/", "esc")
		if h.list().query.Text != "" || len(h.list().win.rows) != len(h.m.data.snap.Txns) {
			t.Fatalf("esc left query %q and %d of %d rows", h.list().query.Text, len(h.list().win.rows), len(h.m.data.snap.Txns))
		}

		h.press("p", "/")
		enter()
		h.press("enter")
		if got, want := h.parts().query.Text, wantFilter(text, h.parts().input.limit); got != want {
			t.Fatalf("partitions filter %q, want %q", got, want)
		}
		frame(t, h)
		h.press("/", "esc")
		if h.parts().query.Text != "" || len(h.parts().win.rows) != len(h.m.data.pins) {
			t.Fatalf("esc left the partitions filter %q and %d of %d rows", h.parts().query.Text, len(h.parts().win.rows), len(h.m.data.pins))
		}
	})
}

// frame checks the screen is still exactly 80×24 (the harness's size).
func frame(t *testing.T, h *harness) {
	t.Helper()
	lines := strings.Split(h.screen(), "\n")
	if len(lines) != 24 {
		t.Fatalf("frame has %d lines, want 24", len(lines))
	}
	for i, l := range lines {
		if w := ansi.StringWidth(l); w != 80 {
			t.Fatalf("line %d is %d cells wide: %q", i, w, l)
		}
	}
}
