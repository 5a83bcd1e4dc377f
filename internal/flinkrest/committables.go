package flinkrest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/txnscope/txnscope/model"
)

// A KafkaSink committer's state holds, per pending commit, the committable
// as the connector serializes it (KafkaCommittableSerializer, version 1,
// wrapped by SimpleVersionedSerialization), the same in connector 3.4 and
// 5.0:
//
//	int32 version (1), int32 length (12 + the id's), int16 epoch,
//	int64 producer id, uint16 length, the transactional id (modified UTF-8)
//
// Small operator state is written inline in _metadata (seen on Flink 1.20
// and 2.2 jobs of parallelism 2: each subtask's committable once there).
// committables finds each one of the prefix by that exact shape; the
// writer's own state names ids too, but not in it. It parses no more of
// _metadata than its header: a committable is only ever taken as evidence
// together with the producer id and epoch of the very transaction.

// committables finds every committable of prefix in data, in order.
func committables(data []byte, prefix string) ([]model.Committable, error) {
	pattern := append(modifiedUTF8(prefix), '-')
	var out []model.Committable
	for i := 0; ; {
		k := bytes.Index(data[i:], pattern)
		if k < 0 {
			return out, nil
		}
		at := i + k
		i = at + 1
		if at < 20 {
			continue
		}
		n := int(binary.BigEndian.Uint16(data[at-2:]))
		if at+n > len(data) || binary.BigEndian.Uint32(data[at-20:]) != 1 || binary.BigEndian.Uint32(data[at-16:]) != uint32(12+n) {
			continue
		}
		id, ok := fromModifiedUTF8(data[at : at+n])
		if !ok || !flinkIDOf(id, prefix) {
			continue
		}
		if len(out) == maxCommittables {
			return nil, fmt.Errorf("holds more than %d committables of the prefix, more than any sink's state", maxCommittables)
		}
		out = append(out, model.Committable{
			ID:         id,
			Epoch:      int16(binary.BigEndian.Uint16(data[at-12:])),
			ProducerID: int64(binary.BigEndian.Uint64(data[at-10:])),
		})
		i = at + n
	}
}

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

// modifiedUTF8 is s as Java's DataOutput.writeUTF writes it: NUL as two
// bytes, a character beyond U+FFFF as its two UTF-16 halves of three bytes
// each.
func modifiedUTF8(s string) []byte {
	var out []byte
	for _, r := range s {
		switch {
		case r == 0:
			out = append(out, 0xC0, 0x80)
		case r > 0xFFFF:
			hi, lo := utf16.EncodeRune(r)
			out = append(out, surrogate(hi)...)
			out = append(out, surrogate(lo)...)
		default:
			out = utf8.AppendRune(out, r)
		}
	}
	return out
}

func surrogate(r rune) []byte {
	return []byte{0xE0 | byte(r>>12), 0x80 | byte(r>>6)&0x3F, 0x80 | byte(r)&0x3F}
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
