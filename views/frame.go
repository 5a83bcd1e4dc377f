// Package views turns model values into text for a given size. Every function
// here is pure: same input, same string, and the string is always exactly the
// size it was asked for, so the ui can stack pieces without measuring them.
package views

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Fit cuts or pads s to exactly w cells, keeping escape sequences intact.
func Fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	sw := ansi.StringWidth(s)
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
	if ansi.StringWidth(s) <= w {
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
	return ansi.Truncate(s, left, "") + "…" + ansi.TruncateLeft(s, sw-right, "")
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
	rw := ansi.StringWidth(right)
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
	sw := ansi.StringWidth(s)
	if sw >= w {
		return s
	}
	if right {
		return strings.Repeat(" ", w-sw) + s
	}
	return s + strings.Repeat(" ", w-sw)
}
