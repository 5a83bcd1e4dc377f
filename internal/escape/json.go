package escape

import (
	"encoding/binary"
	"strconv"
	"unicode/utf8"
)

// JSON rewrites, in a document encoding/json produced, every character Text
// would write out that encoding/json leaves raw: DEL, the C1 controls
// (U+0080–U+009F; some terminals act on them in UTF-8), and format characters
// such as bidi overrides. Each becomes a \u escape, so the document decodes
// to exactly the same values and prints harmlessly. Such characters can only
// stand inside strings, where \u escapes are valid, because everything
// outside strings in JSON is ASCII.
func JSON(doc []byte) []byte {
	i := firstUnsafeJSON(doc)
	if i < 0 {
		return doc
	}
	out := make([]byte, 0, len(doc)+16)
	out = append(out, doc[:i]...)
	for i < len(doc) {
		r, size := utf8.DecodeRune(doc[i:])
		if jsonUnsafe(r, size) {
			out = appendU(out, r)
		} else {
			out = append(out, doc[i:i+size]...)
		}
		i += size
	}
	return out
}

func firstUnsafeJSON(doc []byte) int {
	for i := 0; i < len(doc); {
		if i+8 <= len(doc) && plainASCII(binary.LittleEndian.Uint64(doc[i:])) {
			i += 8 // most of a snapshot: eight bytes at a time
			continue
		}
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

// plainASCII reports whether eight bytes are all ASCII and none is DEL.
func plainASCII(x uint64) bool {
	const high, ones, del = 0x8080808080808080, 0x0101010101010101, 0x7f7f7f7f7f7f7f7f
	y := x ^ del // a DEL byte is zero in y
	return x&high == 0 && (y-ones)&^y&high == 0
}

// jsonUnsafe: encoding/json already writes C0 controls, U+2028 and U+2029 as
// \u escapes and invalid UTF-8 as U+FFFD, so only DEL and the non-ASCII
// characters Text would rewrite are left.
func jsonUnsafe(r rune, size int) bool {
	if r == utf8.RuneError && size == 1 {
		return false // not from encoding/json; left as it is
	}
	return r == 0x7f || (r >= utf8.RuneSelf && unsafeRune(r))
}

// appendU writes r as JSON's \uXXXX, as a surrogate pair above U+FFFF.
func appendU(b []byte, r rune) []byte {
	if r > 0xffff {
		r -= 0x10000
		b = appendU(b, 0xd800+(r>>10))
		return appendU(b, 0xdc00+(r&0x3ff))
	}
	q := strconv.FormatInt(int64(r), 16)
	b = append(b, `\u`...)
	for n := len(q); n < 4; n++ {
		b = append(b, '0')
	}
	return append(b, q...)
}
