package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/txnscope/txnscope/internal/escape"
	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
)

// hostileID is a transactional id a producer may choose (Kafka takes any
// string): it sets the window title, clears the screen, forges a row behind
// CR LF and a tab, reverses text and holds wide characters.
const hostileID = "job-\x1b]0;pwned\x07-\x1b[2J-\x1b[31mred\x1b[0m-ok\r\nforged\tOngoing-\u202egnp-注文-0-1"

// rawControl names the first character in out a terminal could act on: any
// C0 or C1 control but the newline and tab the formats use, DEL, a format
// character such as a bidi override, or a byte that is not UTF-8.
func rawControl(out string) string {
	for i, r := range out {
		switch {
		case r == '\n' || r == '\t':
		case r == utf8.RuneError, unicode.IsControl(r), unicode.Is(unicode.Cf, r), r == '\u2028', r == '\u2029':
			return fmt.Sprintf("%U at byte %d", r, i)
		}
	}
	return ""
}

// aligned checks kafka-transactions.sh's layout in display cells: every
// cell of a column is as wide as the column's widest.
func aligned(t *testing.T, what, out string) {
	t.Helper()
	var widths []int
	for n, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		cells := strings.Split(strings.TrimSuffix(l, "\t"), "\t")
		if n == 0 {
			for _, c := range cells {
				widths = append(widths, ansi.StringWidth(c))
			}
			continue
		}
		if len(cells) != len(widths) {
			t.Errorf("%s: line %d has %d cells, the header %d: %q", what, n, len(cells), len(widths), l)
			continue
		}
		for i, c := range cells {
			if ansi.StringWidth(c) != widths[i] {
				t.Errorf("%s: line %d cell %d is %d cells wide, its column %d: %q", what, n, i, ansi.StringWidth(c), widths[i], l)
			}
		}
	}
}

// TestE2EHostileID: list, describe and snapshot print a hostile id written
// out on one row, aligned in display cells; the JSON outputs decode to the
// id exactly and carry nothing raw a terminal could act on; an error that
// quotes an id is one harmless line.
func TestE2EHostileID(t *testing.T) {
	quickExit(t)
	_, bs := kafkatest.NewCluster(t)
	b := strings.Join(bs, ",")
	kafkatest.OpenTxn(t, bs, hostileID, "orders", time.Minute)
	kafkatest.OpenTxn(t, bs, "orders-sink-0-7", "orders", time.Minute)
	shown := escape.Text(hostileID)

	r := run1(t, "list", "-b", b)
	mustOK(t, r)
	if bad := rawControl(r.stdout); bad != "" {
		t.Errorf("list prints %s raw:\n%q", bad, r.stdout)
	}
	aligned(t, "list", r.stdout)
	_, rows := tableRows(t, r.stdout)
	if len(rows) != 2 || rows[0]["TransactionalId"] != shown || rows[0]["TransactionState"] != "Ongoing" {
		t.Errorf("list rows %q, want %q Ongoing first", rows, shown)
	}

	r = run1(t, "describe", "-b", b, "--transactional-id", hostileID)
	mustOK(t, r)
	if bad := rawControl(r.stdout); bad != "" {
		t.Errorf("describe prints %s raw:\n%q", bad, r.stdout)
	}
	aligned(t, "describe", r.stdout)
	if _, rows = tableRows(t, r.stdout); len(rows) != 1 || rows[0]["TransactionalId"] != shown || rows[0]["TransactionState"] != "Ongoing" {
		t.Errorf("describe rows %q", rows)
	}

	for _, args := range [][]string{{"list", "-o", "json"}, {"describe", "-o", "json", "--transactional-id", hostileID}, {"snapshot", "-o", "json"}} {
		r = run1(t, append(args, "-b", b)...)
		mustOK(t, r, args...)
		if bad := rawControl(r.stdout); bad != "" {
			t.Errorf("%s: %s raw in the JSON", args, bad)
		}
		if !strings.Contains(r.stdout, `\u202e`) || !strings.Contains(r.stdout, `\u001b]0;pwned\u0007`) {
			t.Errorf("%s: the id is not written out as \\u escapes:\n%s", args, r.stdout)
		}
		if !jsonHolds(r.stdout, hostileID) {
			t.Errorf("%s: the JSON does not decode to the id itself:\n%s", args, r.stdout)
		}
	}

	r = run1(t, "snapshot", "-b", b)
	mustOK(t, r)
	if bad := rawControl(r.stdout); bad != "" {
		t.Errorf("snapshot prints %s raw:\n%q", bad, r.stdout)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("snapshot: %d lines, want the header and two rows:\n%s", len(lines), r.stdout)
	}
	// Columns line up in display cells: STATE starts at the same cell on every line.
	col := func(l, word string) int { i := strings.Index(l, " "+word+" "); return ansi.StringWidth(l[:max(i, 0)]) }
	for _, l := range lines[1:] {
		if col(l, "Ongoing") != col(lines[0], "STATE") {
			t.Errorf("snapshot: STATE at cell %d, Ongoing at %d in %q", col(lines[0], "STATE"), col(l, "Ongoing"), l)
		}
	}

	r = run1(t, "describe", "-b", b, "--transactional-id", "gone-\x1b]0;pwned\x07\r\nforged")
	if r.code != 1 || strings.Count(r.stderr, "\n") != 1 || rawControl(r.stderr) != "" {
		t.Errorf("describe of an unknown hostile id: exit %d, stderr %q", r.code, r.stderr)
	}
}

// jsonHolds reports whether doc holds s as a string value somewhere.
func jsonHolds(doc, s string) bool {
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		return false
	}
	var walk func(any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case string:
			return v == s
		case []any:
			for _, x := range v {
				if walk(x) {
					return true
				}
			}
		case map[string]any:
			for _, x := range v {
				if walk(x) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}
