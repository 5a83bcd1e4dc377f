// Package summary keeps lists in messages short: an error is one line, and
// one line with a thousand bootstrap servers in it is 16 KB nobody reads.
package summary

import (
	"fmt"
	"strings"
)

// Keep is how many items a summarised list shows.
const Keep = 3

// List joins items with sep when there are at most Keep of them; more are
// shown as their number and noun, the first Keep and how many were left out:
// "1000 bootstrap servers (127.0.0.1:1, 127.0.0.1:2, 127.0.0.1:3, … and 997 more)".
func List(items []string, sep, noun string) string {
	if len(items) <= Keep {
		return strings.Join(items, sep)
	}
	return fmt.Sprintf("%d %s (%s, … and %d more)", len(items), noun, strings.Join(items[:Keep], ", "), len(items)-Keep)
}
