package ui

import (
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// TestEveryScreenInTheTableFits shows each screen of the root's table in
// turn, whatever opened it or not, so a screen added to the table is held to
// the frame without being added to any list of tests: the frame is exactly
// the terminal's size and the footer shows that screen's keys.
func TestEveryScreenInTheTableFits(t *testing.T) {
	h := pinnedLater(t)
	var ids []screenID
	for id := range h.m.screens {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		h.m.show(id)
		for _, size := range [][2]int{{80, 20}, {80, 24}, {123, 37}, {200, 60}} {
			w, ht := size[0], size[1]
			h.send(tea.WindowSizeMsg{Width: w, Height: ht})
			if h.m.cur != id {
				t.Fatalf("showing %q: %q on view", id, h.m.cur)
			}
			lines := strings.Split(h.m.View().Content, "\n")
			if len(lines) != ht {
				t.Fatalf("%s at %d×%d: %d lines", id, w, ht, len(lines))
			}
			for i, l := range lines {
				if got := ansi.StringWidth(l); got != w {
					t.Fatalf("%s at %d×%d: line %d is %d cells: %q", id, w, ht, i, got, ansi.Strip(l))
				}
			}
			footer := ansi.Strip(lines[len(lines)-1])
			if first := h.m.screens[id].keys()[0].Help(); !strings.Contains(footer, first.Key+" "+first.Desc) {
				t.Errorf("%s at %d×%d: footer %q lacks its first key %q", id, w, ht, footer, first.Key+" "+first.Desc)
			}
		}
	}
}
