package flinkrest

import (
	"bytes"
	"unicode/utf16"
)

// Transactional ids, as a KafkaSink names them and as Java writes strings
// (DataOutput.writeUTF's modified UTF-8).

// flinkIDOf reports whether id is one of a KafkaSink's with prefix:
// prefix-<subtask>-<checkpoint or slot>.
func flinkIDOf(id, prefix string) bool {
	rest, ok := bytes.CutPrefix([]byte(id), []byte(prefix+"-"))
	if !ok {
		return false
	}
	a, b, ok := bytes.Cut(rest, []byte("-"))
	return ok && digits(a) && digits(b)
}

func digits(b []byte) bool {
	if len(b) == 0 || len(b) > 19 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// fromModifiedUTF8 reads b as Java's DataInput.readUTF does; ok is false
// for bytes it would refuse.
func fromModifiedUTF8(b []byte) (string, bool) {
	var units []uint16
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c < 0x80:
			units = append(units, uint16(c))
			i++
		case c&0xE0 == 0xC0 && i+1 < len(b) && b[i+1]&0xC0 == 0x80:
			units = append(units, uint16(c&0x1F)<<6|uint16(b[i+1]&0x3F))
			i += 2
		case c&0xF0 == 0xE0 && i+2 < len(b) && b[i+1]&0xC0 == 0x80 && b[i+2]&0xC0 == 0x80:
			units = append(units, uint16(c&0x0F)<<12|uint16(b[i+1]&0x3F)<<6|uint16(b[i+2]&0x3F))
			i += 3
		default:
			return "", false
		}
	}
	return string(utf16.Decode(units)), true
}
