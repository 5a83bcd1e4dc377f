package views

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/txnscope/txnscope/model"
)

// Dur formats an age compactly in at most 6 cells: 42s, 4m12s, 3h04m, 2d03h.
func Dur(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	case s < 86400:
		return fmt.Sprintf("%dh%02dm", s/3600, s%3600/60)
	case s < 100*86400:
		return fmt.Sprintf("%dd%02dh", s/86400, s%86400/3600)
	}
	return fmt.Sprintf("%dd", s/86400)
}

// Timeout formats a configured timeout the way people write it: 60s, 15m, 1h, 1m30s.
func Timeout(d time.Duration) string {
	switch {
	case d <= 0:
		return "–"
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	case d%time.Second == 0 && d < time.Minute:
		return fmt.Sprintf("%ds", d/time.Second)
	case d%time.Second == 0:
		return fmt.Sprintf("%dm%ds", d/time.Minute, d%time.Minute/time.Second)
	}
	return d.String()
}

// Count formats a number with thousands separators.
func Count(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + Count(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Offset formats an offset, with – for unknown (-1).
func Offset(o int64) string {
	if o < 0 {
		return "–"
	}
	return strconv.FormatInt(o, 10)
}

// Clock formats a time of day; the zero time is –.
func Clock(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return "–"
	}
	if loc != nil {
		t = t.In(loc)
	}
	return t.Format("15:04:05")
}

// Percent formats a ratio in 4 cells.
func Percent(r float64) string {
	p := int(r*100 + 0.5)
	if p > 999 {
		return "999+"
	}
	return fmt.Sprintf("%3d%%", p)
}

// Outcome is the short name of an event kind for narrow columns.
func Outcome(k model.EventKind) string {
	if k == model.TimedOut {
		return "timed out"
	}
	return string(k)
}

// Marker is the two-cell severity sign in front of a row; it carries the
// severity when there is no colour.
func Marker(t *model.Txn, now time.Time) string {
	if t.Err != "" {
		return "? "
	}
	switch t.Severity(now) {
	case model.SevDanger:
		return "!!"
	case model.SevWarn:
		return "! "
	}
	return "  "
}

// Wrap breaks plain text into lines of at most w cells at spaces only, so
// transactional ids and numbers like -1 stay whole; a word longer than a line
// is cut.
func Wrap(s string, w int) []string {
	if w < 1 {
		return []string{s}
	}
	var out []string
	line := ""
	for _, word := range strings.Fields(s) {
		if ansi.StringWidth(word) > w {
			if line != "" {
				out, line = append(out, line), ""
			}
			pieces := cut(word, w)
			out = append(out, pieces[:len(pieces)-1]...)
			word = pieces[len(pieces)-1]
		}
		switch {
		case line == "":
			line = word
		case ansi.StringWidth(line)+1+ansi.StringWidth(word) <= w:
			line += " " + word
		default:
			out, line = append(out, line), word
		}
	}
	if line != "" || len(out) == 0 {
		out = append(out, line)
	}
	return out
}

// cut breaks a word of plain text into pieces of at most w cells, in one
// pass: an id may be tens of kilobytes, and measuring what is left of it
// after every piece made a frame of the abort dialog take a second. A
// character wider than w gets a piece of its own.
func cut(word string, w int) []string {
	var out []string
	start, width := 0, 0
	for i := 0; i < len(word); {
		cluster, cw := ansi.FirstGraphemeCluster(word[i:], ansi.GraphemeWidth)
		if width+cw > w && i > start {
			out = append(out, word[start:i])
			start, width = i, 0
		}
		width += cw
		i += len(cluster)
	}
	return append(out, word[start:])
}
