// Package clientprops reads a Java Kafka client's .properties file (the
// --command-config of kafka-transactions.sh) into txnscope's bootstrap
// servers and security settings. It does no I/O except in ParseFile.
package clientprops

import (
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Entry is one key and value, with the line its logical line starts on.
type Entry struct {
	Key, Value string
	Line       int
}

// Parse reads text as java.util.Properties.load does: # and ! comment lines,
// key and value separated by '=', ':' or whitespace, a backslash at the end
// of a line continuing it on the next (whose leading whitespace is dropped),
// and the escapes \t \n \r \f \uXXXX (any other escaped character stands for
// itself). Text that is not UTF-8 is read as ISO-8859-1, as Java reads a
// properties stream. Errors give the line, never the text.
func Parse(text string) ([]Entry, error) {
	if !utf8.ValidString(text) {
		text = latin1(text)
	}
	lines := splitLines(text)
	var out []Entry
	for i := 0; i < len(lines); i++ {
		start := i + 1
		line := strings.TrimLeft(lines[i], " \t\f")
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		// Join continuation lines: an odd number of trailing backslashes.
		var logical strings.Builder
		for {
			if !continues(line) {
				logical.WriteString(line)
				break
			}
			logical.WriteString(line[:len(line)-1])
			i++
			if i >= len(lines) {
				break
			}
			line = strings.TrimLeft(lines[i], " \t\f")
		}
		key, value, err := splitEntry(logical.String())
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", start, err)
		}
		out = append(out, Entry{Key: key, Value: value, Line: start})
	}
	return out, nil
}

func latin1(s string) string {
	r := make([]rune, len(s))
	for i := 0; i < len(s); i++ {
		r[i] = rune(s[i])
	}
	return string(r)
}

// splitLines splits on \n, \r and \r\n, as Java's LineReader does.
func splitLines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i])
		if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			i++
		}
		s = s[i+1:]
	}
	return out
}

func continues(line string) bool {
	n := 0
	for i := len(line) - 1; i >= 0 && line[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// splitEntry splits a logical line (leading whitespace already gone) into
// its unescaped key and value.
func splitEntry(line string) (string, string, error) {
	end := len(line)
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c == '\\' {
			i++ // the escaped character belongs to the key
			continue
		}
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			end = i
			break
		}
	}
	rawKey := line[:end]
	rest := line[end:]
	rest = strings.TrimLeft(rest, " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	key, err := unescape(rawKey)
	if err != nil {
		return "", "", fmt.Errorf("in the key: %v", err)
	}
	value, err := unescape(rest)
	if err != nil {
		return "", "", fmt.Errorf("in the value of %s: %v", key, err)
	}
	return key, value, nil
}

func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(s) {
			break // a lone trailing backslash (end of file) stands for nothing
		}
		switch c = s[i]; c {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if len(s)-i-1 < 4 {
				return "", fmt.Errorf(`malformed \uXXXX escape`)
			}
			r, ok := hex4(s[i+1 : i+5])
			if !ok {
				return "", fmt.Errorf(`malformed \uXXXX escape`)
			}
			i += 4
			// Java's strings are UTF-16: a character beyond U+FFFF is
			// written as two escapes, a surrogate pair.
			if utf16.IsSurrogate(r) && i+6 < len(s) && strings.HasPrefix(s[i+1:], `\u`) {
				if lo, ok := hex4(s[i+3 : i+7]); ok && utf16.DecodeRune(r, lo) != utf8.RuneError {
					r = utf16.DecodeRune(r, lo)
					i += 6
				}
			}
			b.WriteRune(r)
		default:
			// Java drops the backslash of any other character; it may be the
			// first byte of a multi-byte character, copied as it is.
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

func hex4(s string) (rune, bool) {
	var r rune
	for _, h := range s {
		d, ok := hexDigit(h)
		if !ok {
			return 0, false
		}
		r = r<<4 | d
	}
	return r, true
}

func hexDigit(c rune) (rune, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
