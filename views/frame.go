// Package views turns model values into text for a given size. Every function
// here is pure: same input, same string, and the string is always exactly the
// size it was asked for, so the ui can stack pieces without measuring them.
package views

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// cells measures s in terminal cells. Frames are measured line by line, so
// this is hot: text made of ASCII, SGR sequences and the few one-cell symbols
// txnscope draws with is counted directly; anything else goes to the full
// grapheme-aware ansi.StringWidth.
func cells(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c >= 0x20 && c < 0x7f:
			n++
			i++
		case c == 0x1b && i+1 < len(s) && s[i+1] == '[':
			j := i + 2
			for j < len(s) && s[j] >= 0x20 && s[j] < 0x40 {
				j++
			}
			if j >= len(s) || s[j] < 0x40 || s[j] > 0x7e {
				return ansi.StringWidth(s)
			}
			i = j + 1
		case c >= 0x80:
			r, size := utf8.DecodeRuneInString(s[i:])
			if !narrowSymbol(r) {
				return ansi.StringWidth(s)
			}
			n++
			i += size
		default:
			return ansi.StringWidth(s)
		}
	}
	return n
}

// narrowSymbol lists the non-ASCII characters txnscope itself draws, all one
// cell wide: box drawing, block elements, arrows and punctuation.
func narrowSymbol(r rune) bool {
	switch {
	case r >= 0x2500 && r <= 0x259f: // box drawing, blocks (─ │ ╭ █ ░)
		return true
	}
	switch r {
	case '–', '·', '…', '●', '✗', '↑', '↓', '→', '×', '•', '▸', '≥':
		return true
	}
	return false
}

// Fit cuts or pads s to exactly w cells, keeping escape sequences intact.
func Fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	sw := cells(s)
	if sw > w {
		s = ansi.Truncate(s, w, "")
		sw = ansi.StringWidth(s)
	}
	if sw < w {
		s += strings.Repeat(" ", w-sw)
	}
	return s
}

// Clip shortens plain text to w cells, marking the cut with an ellipsis.
func Clip(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if cells(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "…")
}

// ClipMiddle shortens plain text to w cells by cutting out its middle, which
// keeps both the prefix and the subtask-checkpoint tail of Flink ids readable.
func ClipMiddle(s string, w int) string {
	if w <= 0 {
		return ""
	}
	sw := ansi.StringWidth(s)
	if sw <= w {
		return s
	}
	if w < 8 {
		return ansi.Truncate(s, w, "…")
	}
	right := (w - 1) / 2
	left := w - 1 - right
	tail := ansi.TruncateLeft(s, sw-right, "")
	// A wide character across the cut stays whole: drop it (and any mark
	// combining with it) rather than overflow the column.
	for tail != "" && (ansi.StringWidth(tail) > right || ansi.StringWidth(firstRune(tail)) == 0) {
		tail = tail[len(firstRune(tail)):]
	}
	return ansi.Truncate(s, left, "") + "…" + tail
}

func firstRune(s string) string {
	_, size := utf8.DecodeRuneInString(s)
	return s[:size]
}

// Block stacks lines into exactly h lines of exactly w cells.
func Block(lines []string, w, h int) string {
	if h <= 0 || w <= 0 {
		return ""
	}
	var b strings.Builder
	b.Grow(h * (w + 1))
	for i := 0; i < h; i++ {
		if i > 0 {
			b.WriteByte('\n')
		}
		if i < len(lines) {
			b.WriteString(Fit(lines[i], w))
		} else {
			b.WriteString(strings.Repeat(" ", w))
		}
	}
	return b.String()
}

// Lines splits a rendered piece back into its lines.
func Lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// Stack joins pieces that are already exactly w wide, one under the other.
func Stack(pieces ...string) string {
	var nonEmpty []string
	for _, p := range pieces {
		if p != "" {
			nonEmpty = append(nonEmpty, p)
		}
	}
	return strings.Join(nonEmpty, "\n")
}

// Spread puts left and right on one line of w cells; the left side gives way
// when both do not fit.
func Spread(left, right string, w int) string {
	rw := cells(right)
	if rw >= w {
		return Fit(right, w)
	}
	lw := w - rw - 1
	return Fit(left, lw) + " " + right
}

// Center places lines in the middle of a w×h area.
func Center(lines []string, w, h int) string {
	if len(lines) > h {
		lines = lines[:h]
	}
	out := make([]string, 0, h)
	top := (h - len(lines)) / 2
	for i := 0; i < top; i++ {
		out = append(out, "")
	}
	for _, l := range lines {
		lw := ansi.StringWidth(l)
		if lw < w {
			l = strings.Repeat(" ", (w-lw)/2) + l
		}
		out = append(out, l)
	}
	return Block(out, w, h)
}

func pad(s string, w int, right bool) string {
	sw := cells(s)
	if sw >= w {
		return s
	}
	if right {
		return strings.Repeat(" ", w-sw) + s
	}
	return s + strings.Repeat(" ", w-sw)
}
