package cli

import (
	"bufio"
	"io"

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
	return printRows(w, headers, len(rows), func(i int, cells []string) { copy(cells, rows[i]) })
}

// printRows is printTable of n rows that row fills in when asked, twice
// each (for the widths, then for the lines): `list` at 2,000,000 ids then
// holds no row of strings per id (about 200 MB).
func printRows(w io.Writer, headers []string, n int, row func(i int, cells []string)) error {
	widths := make([]int, len(headers))
	for i, h := range headers {
		widths[i] = cellWidth(h)
	}
	cells := make([]string, len(headers))
	for r := range n {
		row(r, cells)
		for i, c := range cells {
			widths[i] = max(widths[i], cellWidth(escape.Text(c)))
		}
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	line := func(cells []string) {
		for i, c := range cells {
			c = escape.Text(c)
			bw.WriteString(c)
			for pad := widths[i] - cellWidth(c); pad > 0; pad -= len(spaces) {
				bw.WriteString(spaces[:min(pad, len(spaces))])
			}
			bw.WriteByte('\t')
		}
		bw.WriteByte('\n')
	}
	line(headers)
	for r := range n {
		row(r, cells)
		line(cells)
	}
	return bw.Flush()
}

const spaces = "                                                                "

// cellWidth is s's width in terminal cells: its length when it is printable
// ASCII (500,000 ids of a listing, almost always), else as ansi measures it.
func cellWidth(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			return ansi.StringWidth(s)
		}
	}
	return len(s)
}
