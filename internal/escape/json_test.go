package escape

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"unicode/utf8"
)

func TestJSON(t *testing.T) {
	for _, id := range []string{
		"orders-0-1",
		"c1\u009b31m\u0085next",
		"del\x7f",
		"rtl\u202egnp.exe",
		"tag\U000E0041",
		"\x1b]0;pwned\x07\r\n",
		"日本\u2028",
	} {
		doc, err := json.Marshal(map[string]string{"transactional_id": id})
		if err != nil {
			t.Fatal(err)
		}
		out := JSON(doc)
		for _, r := range string(out) {
			if r == 0x7f || unsafeRune(r) {
				t.Errorf("JSON(%s) = %s keeps %U", doc, out, r)
			}
		}
		var back map[string]string
		if err := json.Unmarshal(out, &back); err != nil || back["transactional_id"] != id {
			t.Errorf("JSON(%s) = %s decodes to %q (%v), want %q", doc, out, back["transactional_id"], err, id)
		}
	}
	if got := string(JSON([]byte(`{"a":"\u009b"}`))); got != `{"a":"\u009b"}` {
		t.Errorf("C1 written as \\u009b: %s", got)
	}
}

func FuzzJSON(f *testing.F) {
	for _, s := range []string{"orders-0-1", "\u009b", "\u202e", "\U000E0041", "\x7f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		doc, err := json.Marshal(s)
		if err != nil {
			t.Skip()
		}
		var want, got string
		_ = json.Unmarshal(doc, &want)
		out := JSON(doc)
		if err := json.Unmarshal(out, &got); err != nil || got != want {
			t.Fatalf("JSON(%s) = %s decodes to %q (%v), want %q", doc, out, got, err, want)
		}
		for _, r := range string(out) {
			if r == 0x7f || unsafeRune(r) {
				t.Fatalf("JSON(%s) = %s keeps %U", doc, out, r)
			}
		}
	})
}

// firstUnsafeJSON's eight-bytes-at-a-time path finds what a byte-by-byte
// scan finds, wherever the DEL or non-ASCII byte sits.
func TestFirstUnsafeJSONMatchesBytewise(t *testing.T) {
	bytewise := func(doc []byte) int {
		for i := 0; i < len(doc); {
			if c := doc[i]; c < utf8.RuneSelf && c != 0x7f {
				i++
				continue
			}
			r, size := utf8.DecodeRune(doc[i:])
			if jsonUnsafe(r, size) {
				return i
			}
			i += size
		}
		return -1
	}
	rng := rand.New(rand.NewPCG(1, 7))
	odd := []string{"\x7f", "\u0085", "\u202e", "é", "\xff", "\u2028", "\x00", "\x80"}
	for range 20000 {
		doc := make([]byte, 0, 64)
		for range rng.IntN(40) {
			doc = append(doc, byte(' '+rng.IntN(95)))
		}
		if rng.IntN(2) == 0 {
			at := rng.IntN(len(doc) + 1)
			doc = append(doc[:at], append([]byte(odd[rng.IntN(len(odd))]), doc[at:]...)...)
		}
		if got, want := firstUnsafeJSON(doc), bytewise(doc); got != want {
			t.Fatalf("firstUnsafeJSON(%q) = %d, want %d", doc, got, want)
		}
	}
}
