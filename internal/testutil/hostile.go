package testutil

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// HostileIDs are transactional ids a producer may choose to act on the
// terminal of whoever prints them, or to pass for another id: Kafka takes
// any bytes. Every plain-text output is tested over the same set.
var HostileIDs = []string{
	"bad-\xff\xfe-0-1",                // not UTF-8
	"csi8-\x9b2J-0-1",                 // a lone 0x9b: CSI to a terminal that honours 8-bit controls
	"cut-注\xe6\xb3-0-1",               // a character cut short
	"nul-\x00-0-1",                    // NUL
	"title-\x1b]0;pwned\x07-0-1",      // sets the window title
	"wipe-\x1b[2J\x1b[H-0-1",          // clears the screen
	"forge-0-1\r\nfenced-0-3 Ongoing", // CR LF: a forged row
	"tab-\tOngoing-0-1",               // a tab: a forged cell
	"nel-\u0085-0-1",                  // U+0085, NEL
	"csi-\u009b31m-0-1",               // U+009B, CSI, as UTF-8
	"bidi-\u202egnp.exe-0-1",          // a bidi override
	"del-\x7f-0-1",                    // DEL
	`quote-"x"-0-1`,                   // quotes
	`"leading-quote-0-1`,              // looks like another id's quoted form
	`back\x1b-slash\-0-1`,             // a backslash that looks like an escape
}

// RawControl names the first thing in out that a terminal could act on or
// that hides what a string is: a byte that is not UTF-8 (or U+FFFD, where
// one was replaced), a C0 control other than the newline (and the tab, when
// tabs), DEL, a C1 control (U+0080–U+009F), a format character such as a
// bidi override, or a line or paragraph separator. "" when there is none.
func RawControl(out string, tabs bool) string {
	for i := 0; i < len(out); {
		r, size := utf8.DecodeRuneInString(out[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return fmt.Sprintf("byte %#02x (not UTF-8) at %d", out[i], i)
		case r == '\n', r == '\t' && tabs:
		case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f, r == utf8.RuneError,
			unicode.Is(unicode.Cf, r), r == '\u2028', r == '\u2029':
			return fmt.Sprintf("%U at byte %d", r, i)
		}
		i += size
	}
	return ""
}
