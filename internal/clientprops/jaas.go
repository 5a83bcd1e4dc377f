package clientprops

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// jaas is the one login module of a client's sasl.jaas.config, e.g.
//
//	org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="...";
type jaas struct {
	module  string
	options map[string]string
}

// The login modules txnscope understands, by their class names.
const (
	plainModule  = "org.apache.kafka.common.security.plain.PlainLoginModule"
	scramModule  = "org.apache.kafka.common.security.scram.ScramLoginModule"
	oauthModule  = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
	kerberosHint = "Krb5LoginModule"
)

// parseJAAS reads sasl.jaas.config as Kafka's JaasConfig does (a module
// class, a control flag, key=value options, ';'), accepting and refusing the
// same texts and reading the same values: a password read differently from
// the Java client's reading of the same file is a login that fails for no
// visible reason. Its errors never quote the text: it holds the password.
func parseJAAS(s string) (jaas, error) {
	tz := &jaasTokenizer{s: s}
	var entries []jaas
	for tok := tz.next(); tok.kind != tokEOF; tok = tz.next() {
		j, err := jaasEntry(tz, tok)
		if err != nil {
			if tz.unclosed {
				return jaas{}, errors.New(`a quoted value is not closed (in a properties file a quote inside a quoted value is written \\")`)
			}
			return jaas{}, err
		}
		entries = append(entries, j)
	}
	switch len(entries) {
	case 0:
		return jaas{}, errors.New("it is empty")
	case 1:
		return entries[0], nil
	}
	return jaas{}, errors.New("it holds more than one login module; a client needs exactly one")
}

// jaasEntry reads one login module, its first token already read.
func jaasEntry(tz *jaasTokenizer, first jaasToken) (jaas, error) {
	if !first.hasText() {
		return jaas{}, errors.New("it does not start with a login module class name")
	}
	j := jaas{module: first.text, options: map[string]string{}}
	flag := tz.next()
	if flag.kind == tokEOF || !flag.hasText() {
		return jaas{}, errors.New("the login module has no control flag (required)")
	}
	switch strings.ToLower(flag.text) {
	case "required", "requisite", "sufficient", "optional":
	default:
		return jaas{}, errors.New("the login module's control flag is not required, requisite, sufficient or optional")
	}
	tok := tz.next()
	for tok.kind != tokEOF && !tok.is(';') {
		key := tok
		if eq := tz.next(); !eq.is('=') {
			return jaas{}, errors.New(`its options are not all key="value"`)
		}
		v := tz.next()
		if !v.hasText() {
			return jaas{}, errors.New(`an option has no value (a bare value must be a word: quote it)`)
		}
		// Java keeps an option whose key is not text under a null key, which
		// no login module reads: so does txnscope, by dropping it.
		if key.hasText() {
			j.options[key.text] = v.text
		}
		tok = tz.next()
	}
	if !tok.is(';') {
		return jaas{}, errors.New("it does not end with ';'")
	}
	return j, nil
}

type tokenKind int

const (
	tokEOF    tokenKind = iota
	tokWord             // a run of word characters
	tokQuoted           // a '…' or "…" string, escapes decoded
	tokNumber           // digits, '.', a leading '-': Java keeps no text for it
	tokChar             // any other character, on its own
)

type jaasToken struct {
	kind tokenKind
	text string // words and quoted strings only
	char rune   // tokChar only
}

func (t jaasToken) hasText() bool  { return t.kind == tokWord || t.kind == tokQuoted }
func (t jaasToken) is(c rune) bool { return t.kind == tokChar && t.char == c }

// jaasTokenizer splits like java.io.StreamTokenizer in its default syntax
// with the changes Kafka's JaasConfig makes (// and /* */ comments; '-', '_'
// and '$' in words): whitespace is every character up to ' '; words are
// letters, the Latin-1 letters from U+00A0 and anything above U+00FF,
// continued by digits, '.' and '-'; a bare value that starts with a digit,
// '.' or '-' is a number, which has no text; a lone '/' starts a comment to
// the end of the line; quoted strings take Java's escapes (octal too) and
// end at the line's end if not closed.
type jaasTokenizer struct {
	s        string
	i        int
	unclosed bool // a quoted string ran to the end of its line
}

const eof = -1

func (tz *jaasTokenizer) peek() rune {
	if tz.i >= len(tz.s) {
		return eof
	}
	r, _ := utf8.DecodeRuneInString(tz.s[tz.i:])
	return r
}

func (tz *jaasTokenizer) read() rune {
	if tz.i >= len(tz.s) {
		return eof
	}
	r, n := utf8.DecodeRuneInString(tz.s[tz.i:])
	tz.i += n
	return r
}

func jaasSpace(c rune) bool { return c >= 0 && c <= ' ' }

func jaasDigit(c rune) bool { return (c >= '0' && c <= '9') || c == '.' || c == '-' }

func jaasAlpha(c rune) bool {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0xa0 || c == '-' || c == '_' || c == '$'
}

func (tz *jaasTokenizer) next() jaasToken {
	c := tz.read()
	for jaasSpace(c) {
		c = tz.read()
	}
	switch {
	case c == eof:
		return jaasToken{kind: tokEOF}
	case jaasDigit(c): // before words: '-' is both, and a number wins
		return tz.number(c)
	case jaasAlpha(c):
		var b strings.Builder
		b.WriteRune(c)
		for p := tz.peek(); p != eof && (jaasAlpha(p) || jaasDigit(p)); p = tz.peek() {
			b.WriteRune(tz.read())
		}
		return jaasToken{kind: tokWord, text: b.String()}
	case c == '"' || c == '\'':
		return tz.quoted(c)
	case c == '/':
		tz.comment()
		return tz.next()
	}
	return jaasToken{kind: tokChar, char: c}
}

// comment skips what follows a '/' as StreamTokenizer does, quirks and all:
// a lone '/' makes a comment too, and the character after it is skipped even
// when it ends the line; in a block comment the character after a line break
// is never taken for the '/' that closes it.
func (tz *jaasTokenizer) comment() {
	switch c := tz.read(); c {
	case '*':
		prev := rune(0)
		for {
			c := tz.read()
			if c == '/' && prev == '*' {
				return
			}
			switch c {
			case '\r':
				if c = tz.read(); c == '\n' {
					c = tz.read()
				}
			case '\n':
				c = tz.read()
			}
			if c == eof {
				return
			}
			prev = c
		}
	default: // "//", or a lone '/' whose next character is gone even if it is the line break
		for p := tz.peek(); p != eof && p != '\n' && p != '\r'; p = tz.peek() {
			tz.read()
		}
	}
}

func (tz *jaasTokenizer) number(c rune) jaasToken {
	if c == '-' {
		if p := tz.peek(); p != '.' && (p < '0' || p > '9') {
			return jaasToken{kind: tokChar, char: '-'}
		}
		c = tz.read()
	}
	dot := c == '.'
	for {
		switch p := tz.peek(); {
		case p == '.' && !dot:
			dot = true
		case p >= '0' && p <= '9':
		default:
			return jaasToken{kind: tokNumber}
		}
		tz.read()
	}
}

// quoted reads a string opened by q: Java's escapes \a \b \f \n \r \t \v,
// octal \0 to \377, and \ before any other character for that character.
func (tz *jaasTokenizer) quoted(q rune) jaasToken {
	var b strings.Builder
	for {
		d := tz.peek()
		switch {
		case d == q:
			tz.read()
			return jaasToken{kind: tokQuoted, text: b.String()}
		case d == eof || d == '\n' || d == '\r':
			tz.unclosed = true
			return jaasToken{kind: tokQuoted, text: b.String()}
		}
		tz.read()
		if d != '\\' {
			b.WriteRune(d)
			continue
		}
		c := tz.read()
		switch {
		case c >= '0' && c <= '7':
			v := c - '0'
			if p := tz.peek(); p >= '0' && p <= '7' {
				v = v<<3 + tz.read() - '0'
				if p := tz.peek(); p >= '0' && p <= '7' && c <= '3' {
					v = v<<3 + tz.read() - '0'
				}
			}
			b.WriteRune(v)
		case c == eof:
			b.WriteRune('\uffff') // Java's (char) -1; the entry cannot end well anyway
		default:
			b.WriteRune(javaEscape(c))
		}
	}
}

func javaEscape(c rune) rune {
	switch c {
	case 'a':
		return 7
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'v':
		return '\v'
	}
	return c
}
