package escape

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"orders-enricher-v1-0-41", "orders-enricher-v1-0-41"},
		{"", ""},
		{"warehouse-ü-日本-3", "warehouse-ü-日本-3"},
		{"a\x1b]0;pwned\x07b", `a\x1b]0;pwned\x07b`},
		{"\x1b[2J", `\x1b[2J`},
		{"row\r\nforged Ongoing", `row\r\nforged Ongoing`},
		{"tab\there", `tab\there`},
		{"del\x7f", `del\x7f`},
		{"c1\u009b31m", `c1\u009b31m`},
		{"bad\xffutf8", `bad\xffutf8`},
		{"rtl\u202egnp.exe", `rtl\u202egnp.exe`},
		{"zero\u200bwidth", `zero\u200bwidth`},
		{"line\u2028sep", `line\u2028sep`},
		{`back\slash`, `back\\slash`},
		{`a\x1b`, `a\\x1b`}, // not the same as "a\x1b" printed
		{"tag\U000E0041", `tag\U000e0041`},
	} {
		if got := Text(tc.in); got != tc.want {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTextPlainIsNotCopied(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { _ = Text("orders-enricher-v1-0-41") }); n != 0 {
		t.Errorf("%v allocations for a plain id, want 0", n)
	}
}

func FuzzText(f *testing.F) {
	for _, s := range []string{"orders-0-1", "\x1b[2J", "a\r\nb", "\xff\xfe", "\u202e", `\x1b`} {
		f.Add(s)
	}
	seen := map[string]string{}
	f.Fuzz(func(t *testing.T, s string) {
		out := Text(s)
		if !utf8.ValidString(out) {
			t.Fatalf("Text(%q) = %q is not UTF-8", s, out)
		}
		for _, r := range out {
			if unsafeRune(r) {
				t.Fatalf("Text(%q) = %q keeps %U", s, out, r)
			}
		}
		if prev, ok := seen[out]; ok && prev != s {
			t.Fatalf("Text(%q) == Text(%q) == %q", s, prev, out)
		}
		if len(seen) < 10000 {
			seen[out] = s
		}
	})
}

func TestLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"describe a\nb: TRANSACTIONAL_ID_NOT_FOUND", `describe a\nb: TRANSACTIONAL_ID_NOT_FOUND`},
		{"describe a b: x", "describe a b: x"},
		{"describe a\u0085b: x", `describe a\u0085b: x`},
		{"describe a\tb:   x  ", `describe a\tb: x`},
		{"  plain  ", "plain"},
	} {
		if got := Line(tc.in); got != tc.want {
			t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	// Ids that differ only by whitespace characters print differently.
	seen := map[string]string{}
	for _, id := range []string{"a\nb", "a b", "a\u0085b", "a\tb", "a\rb", "a\u2028b"} {
		out := Line("describe " + id + ": not found")
		if prev, ok := seen[out]; ok {
			t.Errorf("%q and %q both print %q", prev, id, out)
		}
		seen[out] = id
	}
}

func TestQuote(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"orders-0-1", `"orders-0-1"`},
		{"a\x1b]0;t\x07", `"a\x1b]0;t\x07"`},
		{`a", producer id 5`, `"a\", producer id 5"`},
		{`a\"`, `"a\\\""`},
		{"bad\x9b", `"bad\x9b"`},
	} {
		if got := Quote(tc.in); got != tc.want {
			t.Errorf("Quote(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestRequote: a Go-quoted id in a line shows escaped once, as Text shows
// it elsewhere, and nothing in any line comes out raw.
func TestRequote(t *testing.T) {
	wire := func(id string) string {
		return "InitProducerId(transactional.id " + strconv.Quote(id) + ", producer id -1) to coordinator broker 1"
	}
	for _, id := range []string{"orders-0-1", "job-\x1b]0;pwned\x07-0-1", "bad-\xff\x9b", "csi-\u009b", "rtl-\u202e",
		`q"uote`, `back\slash`, "nbsp\u00a0", "注文-0-1"} {
		want := "InitProducerId(transactional.id " + Quote(id) + ", producer id -1) to coordinator broker 1"
		if got := Requote(wire(id)); got != want {
			t.Errorf("Requote(%q) = %q, want %q", wire(id), got, want)
		}
	}
	for _, s := range []string{`a "b`, `"\x1b"`, "\"\x1b\" \x1b", `""`, `"a" "b"`, `"\q"`, "\"\xff\""} {
		out := Requote(s)
		if !utf8.ValidString(out) || strings.ContainsFunc(out, unsafeRune) {
			t.Errorf("Requote(%q) = %q carries a raw control", s, out)
		}
	}
}

func FuzzRequote(f *testing.F) {
	for _, s := range []string{`x "a\x1b" y`, `"`, `"\u202e"`, "\"\xff\"", `"\""`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Requote(s)
		if !utf8.ValidString(out) {
			t.Fatalf("Requote(%q) = %q is not UTF-8", s, out)
		}
		for _, r := range out {
			if unsafeRune(r) {
				t.Fatalf("Requote(%q) = %q keeps %U", s, out, r)
			}
		}
	})
}
