package cli

// Lists in messages stay short: an error is one line, and one line with a
// thousand bootstrap servers in it is 16 KB nobody reads.

import (
	"fmt"
	"strings"
)

// shortListKeep is how many items a shortened list shows.
const shortListKeep = 3

// shortList joins items with sep when there are at most shortListKeep of
// them; more are shown as their number and noun, the first few and how many
// were left out: "1000 bootstrap servers (127.0.0.1:1, 127.0.0.1:2, 127.0.0.1:3, … and 997 more)".
func shortList(items []string, sep, noun string) string {
	if len(items) <= shortListKeep {
		return strings.Join(items, sep)
	}
	return fmt.Sprintf("%d %s (%s, … and %d more)", len(items), noun, strings.Join(items[:shortListKeep], ", "), len(items)-shortListKeep)
}
