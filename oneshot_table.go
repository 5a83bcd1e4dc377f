package main

import (
	"bufio"
	"io"
	"strings"
	"unicode/utf8"
)

// printTable writes rows exactly as kafka-transactions.sh does: every cell
// padded with spaces to its column's width and followed by a tab, one line
// per row after the header line. Scripts written against its output (cut -f,
// awk -F'\t') keep working.
func printTable(w io.Writer, headers []string, rows [][]string) error {
	widths := make([]int, len(headers))
	for i, h := range headers {
		widths[i] = utf8.RuneCountInString(h)
	}
	for _, r := range rows {
		for i := range headers {
			widths[i] = max(widths[i], utf8.RuneCountInString(r[i]))
		}
	}
	bw := bufio.NewWriter(w)
	line := func(cells []string) {
		for i, c := range cells {
			bw.WriteString(c)
			bw.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)))
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
