package cli

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestPrintTableUntrusted: cells from the cluster are written out (a tab,
// CR LF or ESC in an id cannot split a row or reach the terminal), and
// columns are padded in display cells, so wide and combining characters keep
// the columns in line. Plain ids print exactly as kafka-transactions.sh does.
func TestPrintTableUntrusted(t *testing.T) {
	var b strings.Builder
	err := printTable(&b, []string{"TransactionalId", "State"}, [][]string{
		{"orders-0-1", "Ongoing"},
		{"注文処理-決済-0-1", "Ongoing"},
		{"e\u0301te\u0301-0-1", "Empty"},
		{"a\tb\r\nc\x1b[2J", "Ongoing"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "TransactionalId  \tState  \t\n" +
		"orders-0-1       \tOngoing\t\n" +
		"注文処理-決済-0-1\tOngoing\t\n" +
		"e\u0301te\u0301-0-1          \tEmpty  \t\n" +
		`a\tb\r\nc\x1b[2J` + " \tOngoing\t\n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
	for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		if c := strings.Split(l, "\t"); len(c) != 3 || ansi.StringWidth(c[0]) != 17 {
			t.Errorf("line %q: %d cells, the first %d wide", l, len(c), ansi.StringWidth(c[0]))
		}
	}
}
