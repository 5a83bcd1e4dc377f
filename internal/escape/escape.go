// Package escape makes strings that come from the cluster safe to print on a
// terminal. Transactional ids, topic names, group ids, client ids and error
// texts are chosen by whoever runs a producer: printed raw, ESC ] 0 ; … BEL sets
// the window title, ESC [ 2 J clears the screen and \r\n forges a row.
package escape

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text returns s with everything a terminal could act on, or that could make
// one string look like another, written out visibly: C0 and C1 controls and
// DEL as \n, \r, \t, \x1b, \u009b, …; bytes that are not UTF-8 as \xff;
// Unicode format characters (bidi overrides, zero-width joiners, …) as
// \u202e; and the backslash itself as \\, so two ids that differ only by such
// characters never print the same. Text of printable s is s itself.
func Text(s string) string {
	i := firstUnsafe(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
			i++
			continue
		}
		writeRune(&b, r)
		i += size
	}
	return b.String()
}

// firstUnsafe is the index of the first byte Text must rewrite, or -1.
func firstUnsafe(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f || c == '\\' {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || unsafeRune(r) {
			return i
		}
		i += size
	}
	return -1
}

func unsafeRune(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029'
}

func writeRune(b *strings.Builder, r rune) {
	switch {
	case r == '\\':
		b.WriteString(`\\`)
	case r == '\n':
		b.WriteString(`\n`)
	case r == '\r':
		b.WriteString(`\r`)
	case r == '\t':
		b.WriteString(`\t`)
	case r < 0x20 || r == 0x7f:
		b.WriteString(`\x`)
		b.WriteString(hex2(byte(r)))
	case unsafeRune(r):
		q := strconv.FormatInt(int64(r), 16)
		if len(q) <= 4 {
			b.WriteString(`\u`)
			b.WriteString(strings.Repeat("0", 4-len(q)))
		} else {
			b.WriteString(`\U`)
			b.WriteString(strings.Repeat("0", 8-len(q)))
		}
		b.WriteString(q)
	default:
		b.WriteRune(r)
	}
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&0xf]})
}

// Line is Text for a line of prose that quotes the cluster (an error, a
// note): escaped first, so that ids differing only by a line break or a tab
// stay apart, then runs of spaces squeezed and the ends trimmed.
func Line(s string) string {
	s = strings.TrimSpace(Text(s))
	if !strings.Contains(s, "  ") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if r == ' ' {
			if space {
				continue
			}
			space = true
		} else {
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Quote is Text between double quotes, a double quote in s written \" too,
// so that no string can close the quotes early and pass what follows for
// more of the line (the next field of a request).
func Quote(s string) string {
	t := Text(s)
	if strings.Contains(t, `"`) {
		t = strings.ReplaceAll(t, `"`, `\"`)
	}
	return `"` + t + `"`
}

// Requote is Text for a line that holds Go-quoted strings, as
// model.Action.Wire quotes a transactional id with strconv.Quote: each quoted
// string is unquoted and written as Quote writes it, the rest as Text does.
// Text alone would escape the quoting's backslashes a second time (an ESC
// shown as \\x1b), and Go's escapes differ from the rest of the screen's
// (\a for BEL, where an id elsewhere shows \x07). Whatever s holds, the
// result is as harmless as Text's.
func Requote(s string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '"')
		if i < 0 {
			break
		}
		q, err := strconv.QuotedPrefix(s[i:])
		if err != nil { // a lone quote: text like any other
			b.WriteString(Text(s[:i+1]))
			s = s[i+1:]
			continue
		}
		u, _ := strconv.Unquote(q) // a valid prefix unquotes
		b.WriteString(Text(s[:i]))
		b.WriteString(Quote(u))
		s = s[i+len(q):]
	}
	b.WriteString(Text(s))
	return b.String()
}
