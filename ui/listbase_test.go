package ui

import (
	"slices"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// The base every list screen embeds: the cursor moves, pages and clamps the
// same on each, and a filter is typed the same on each.
func TestListBaseMoves(t *testing.T) {
	k := newKeyMap(false)
	rows := func(n int) []int {
		r := make([]int, n)
		for i := range r {
			r[i] = i
		}
		return r
	}
	for _, c := range []struct {
		name             string
		n, cursor, top   int
		keys             []string
		visible          int
		wantCur, wantTop int
	}{
		{"down", 10, 0, 0, []string{"down"}, 5, 1, 0},
		{"up at the top stays", 10, 0, 0, []string{"up"}, 5, 0, 0},
		{"down past the window scrolls", 10, 4, 0, []string{"down"}, 5, 5, 1},
		{"page down moves cursor and window", 10, 0, 0, []string{"pgdown"}, 5, 4, 4},
		{"page down at the end stops at the last", 10, 8, 5, []string{"pgdown"}, 5, 9, 5},
		{"page up", 10, 9, 5, []string{"pgup"}, 5, 5, 1},
		{"end", 10, 0, 0, []string{"G"}, 5, 9, 5},
		{"home", 10, 9, 5, []string{"g"}, 5, 0, 0},
		{"no rows", 0, 0, 0, []string{"down", "G"}, 5, 0, 0},
		{"no room", 10, 3, 0, []string{"down"}, 0, 4, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b listBase
			b.win = window{rows: rows(c.n), cursor: c.cursor, top: c.top}
			moved := 0
			for _, key := range c.keys {
				if !b.handle(k, keyMsg(key), c.visible, nil, func() { moved++ }) {
					t.Fatalf("%s was not taken as a cursor key", key)
				}
			}
			if b.win.cursor != c.wantCur || b.win.top != c.wantTop || moved != len(c.keys) {
				t.Errorf("cursor %d top %d (told %d times), want %d %d", b.win.cursor, b.win.top, moved, c.wantCur, c.wantTop)
			}
		})
	}
	var b listBase
	if b.handle(k, keyMsg("enter"), 5, nil, func() { t.Error("enter moved the cursor") }) {
		t.Error("enter was taken by the list base: it is the screen's")
	}
}

// A refresh that shrinks the rows keeps the cursor on its row when it is
// still there, and inside the rows when it is not.
func TestListBaseShowsAfterARefresh(t *testing.T) {
	var b listBase
	b.showAll(100, func(i int) bool { return false }, 10)
	b.win.cursor, b.win.top = 80, 75
	b.show([]int{3, 40, 80, 81}, func(idx int) bool { return idx == 80 }, 10)
	if b.win.cursor != 2 || b.win.top != 0 {
		t.Errorf("kept row: cursor %d top %d, want 2 0", b.win.cursor, b.win.top)
	}
	b.win.cursor = 3
	b.showAll(2, func(int) bool { return false }, 10)
	if b.win.cursor != 1 || !slices.Equal(b.win.rows, []int{0, 1}) {
		t.Errorf("row gone: cursor %d rows %v, want 1 [0 1]", b.win.cursor, b.win.rows)
	}
}

// While a filter is typed every message is the filter's: q and the cursor
// keys are text, enter applies it trimmed, esc clears it.
func TestListBaseFilter(t *testing.T) {
	k := newKeyMap(false)
	for _, c := range []struct {
		name  string
		typed []string
		end   string
		want  string
	}{
		{"enter applies", []string{"o", "r", "d", " "}, "enter", "ord"},
		{"esc clears", []string{"x"}, "esc", ""},
		{"q and j are text", []string{"q", "j"}, "enter", "qj"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := listBase{input: input{prompt: "/", limit: 256}}
			b.win.rows = []int{0, 1, 2}
			b.startFilter("")
			applied, moved := "-", false
			for _, s := range append(c.typed, c.end) {
				if !b.handle(k, keyMsg(s), 5, func(text string) { applied = text }, func() { moved = true }) {
					t.Fatalf("%q was not the filter's", s)
				}
			}
			if applied != c.want || b.typing || moved || b.win.cursor != 0 {
				t.Errorf("applied %q (typing %v, moved %v, cursor %d), want %q", applied, b.typing, moved, b.win.cursor, c.want)
			}
		})
	}
	b := listBase{input: input{prompt: "/", limit: 256}}
	b.startFilter("orders")
	if !b.handle(k, tea.PasteMsg{Content: "-0"}, 5, func(string) {}, func() {}) || b.input.Value() != "orders-0" {
		t.Errorf("a paste while typing: %q", b.input.Value())
	}
}
