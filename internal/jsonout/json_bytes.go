package jsonout

import (
	"encoding/base64"
	"unicode/utf8"
)

// Base64 is the exact form, in the JSON documents, of a string that names
// something a client chose: a transactional id, a consumer group, a job or
// subtask named after ids. Kafka takes any bytes, and encoding/json writes
// each byte that is not UTF-8 as U+FFFD, so two ids that differ only there
// would print the same. Base64 is the standard base64 (RFC 4648, padded) of
// s's bytes when s is not valid UTF-8, and "" otherwise: the companion field
// it fills is left out (omitempty), so a document of UTF-8 ids is unchanged.
func Base64(s string) string {
	if utf8.ValidString(s) {
		return ""
	}
	return base64.StdEncoding.EncodeToString([]byte(s))
}

// Base64List is Base64 for a list of names: nil (left out) when every one
// is UTF-8, else one entry per name, null for those that are.
func Base64List(ss []string) []*string {
	var out []*string
	for i, s := range ss {
		if utf8.ValidString(s) {
			continue // before b, which escapes: a list of UTF-8 names allocates nothing
		}
		if out == nil {
			out = make([]*string, len(ss))
		}
		b := Base64(s)
		out[i] = &b
	}
	return out
}
