package cli

import (
	"bufio"
	"io"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/txnscope/txnscope/internal/escape"
)

// printTable writes rows exactly as kafka-transactions.sh does: every cell
// padded with spaces to its column's width and followed by a tab, one line
// per row after the header line. Scripts written against its output (cut -f,
// awk -F'\t') keep working. Cells hold what the cluster sent (ids, topics,
// states), so each is escaped first: a tab, newline or escape sequence in an
// id would otherwise split the row or act on the terminal. Widths are display
// cells, so a wide (CJK) id does not push its row out of line.
func printTable(w io.Writer, headers []string, rows [][]string) error {
	safe := make([][]string, len(rows))
	widths := make([]int, len(headers))
	for i, h := range headers {
		widths[i] = ansi.StringWidth(h)
	}
	for j, r := range rows {
		safe[j] = make([]string, len(headers))
		for i := range headers {
			safe[j][i] = escape.Text(r[i])
			widths[i] = max(widths[i], ansi.StringWidth(safe[j][i]))
		}
	}
	bw := bufio.NewWriter(w)
	line := func(cells []string) {
		for i, c := range cells {
			bw.WriteString(c)
			bw.WriteString(strings.Repeat(" ", widths[i]-ansi.StringWidth(c)))
			bw.WriteByte('\t')
		}
		bw.WriteByte('\n')
	}
	line(headers)
	for _, r := range safe {
		line(r)
	}
	return bw.Flush()
}
