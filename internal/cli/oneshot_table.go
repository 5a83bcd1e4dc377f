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
// cells, so a wide (CJK) id does not push its row out of line. rows' cells
// are replaced by their escaped text.
func printTable(w io.Writer, headers []string, rows [][]string) error {
	widths := make([]int, len(headers))
	for i, h := range headers {
		widths[i] = cellWidth(h)
	}
	for _, r := range rows {
		for i := range headers {
			r[i] = escape.Text(r[i])
			widths[i] = max(widths[i], cellWidth(r[i]))
		}
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	line := func(cells []string) {
		for i, c := range cells {
			bw.WriteString(c)
			for pad := widths[i] - cellWidth(c); pad > 0; pad -= len(spaces) {
				bw.WriteString(spaces[:min(pad, len(spaces))])
			}
			bw.WriteByte('\t')
		}
		bw.WriteByte('\n')
	}
	line(headers)
	for _, r := range rows {
		line(r)
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
