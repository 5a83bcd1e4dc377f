package views

import (
	"bufio"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/txnscope/txnscope/model"
)

// PlainTable prints the transaction list as aligned plain text for
// `txnscope snapshot -o table`: no colours, no gauge, ASCII "-" for unknown
// values so that scripts can split on whitespace. Rows are in the list's
// default order, most urgent first. PROBLEMS, the last column, holds the
// list's problem lines joined by "; " ("-" when none): the only cell with spaces.
func PlainTable(w io.Writer, s *model.Snapshot, h *model.History, now time.Time) error {
	return PlainTableQuery(w, s, h, model.Query{}, now)
}

// PlainTableQuery is PlainTable with problems judged under q (its
// CheckpointInterval); q's filter and sort are not used.
//
// Columns are padded to their widest cell, so every row is formatted twice:
// once to measure, once to write through a 64 KiB buffer. At 500k ids that
// costs less than holding the table (~200 MB as [][]string).
func PlainTableQuery(w io.Writer, s *model.Snapshot, h *model.History, q model.Query, now time.Time) error {
	q = model.Query{CheckpointInterval: q.CheckpointInterval}
	order := model.Rows(s, h, q, now)
	var r plainRow
	// each formats every row for f; problems only when written (the last
	// column is not measured).
	each := func(write bool, f func(cells []string) error) error {
		if err := f(plainHeader[:]); err != nil {
			return err
		}
		for _, i := range order {
			t := &s.Txns[i]
			r.format(t, h.Stats(t.ID), s, q, now, write)
			if err := f(r.cells[:]); err != nil {
				return err
			}
		}
		return nil
	}
	widths := make([]int, len(plainHeader)-1) // the last cell is not padded
	// Measuring never fails.
	_ = each(false, func(c []string) error {
		for i := range widths {
			widths[i] = max(widths[i], cells(c[i]))
		}
		return nil
	})
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := each(true, func(c []string) error { return writeAligned(bw, c, widths, 2) }); err != nil {
		return err
	}
	return bw.Flush()
}

var plainHeader = [...]string{"TRANSACTIONAL ID", "STATE", "PRODUCER", "PARTS", "AGE", "TIMEOUT", "%", "LAST", "COMMITS", "ABORTS", "COORD", "PROBLEMS"}

// plainRow is one row's cells, reused from row to row.
type plainRow struct {
	cells   [len(plainHeader)]string
	scratch []byte
	// The last TIMEOUT cell: most ids share one timeout, and formatting it
	// allocates.
	timeoutMs int32
	timeout   string
}

func (r *plainRow) format(t *model.Txn, st model.IDStats, s *model.Snapshot, q model.Query, now time.Time, problems bool) {
	r.scratch = append(strconv.AppendInt(r.scratch[:0], t.ProducerID, 10), '/')
	r.scratch = append(r.scratch, plainEpoch(t)...)
	if r.timeout == "" || t.TimeoutMs != r.timeoutMs {
		r.timeoutMs, r.timeout = t.TimeoutMs, plainTimeout(t)
	}
	r.cells = [...]string{
		plainID(t.ID), plainID(t.State.String()), string(r.scratch), plainParts(t), plainAge(t, now),
		r.timeout, plainRatio(t, now), plainLast(st.Last), strconv.Itoa(st.Commits), strconv.Itoa(st.Aborts), plainCoord(t.Coordinator),
		"",
	}
	if problems {
		r.cells[len(r.cells)-1] = plainProblems(model.Problems(*t, st, s, q, now))
	}
}

const spaces = "                                                                "

// writeAligned writes one row: each cell but the last padded to its
// column's width plus gap spaces. Widths are display cells: a wide (CJK) id
// takes two per character, and counting bytes or runes would push its row
// out of line. A failed write (the reader went away) stops the table.
func writeAligned(bw *bufio.Writer, row []string, widths []int, gap int) error {
	for i, c := range row[:len(row)-1] {
		bw.WriteString(c)
		for pad := widths[i] - cells(c) + gap; pad > 0; pad -= len(spaces) {
			bw.WriteString(spaces[:min(pad, len(spaces))])
		}
	}
	bw.WriteString(row[len(row)-1])
	return bw.WriteByte('\n')
}

// plainProblems keeps the cell on one line and harmless: a problem can quote
// a per-id error from the cluster.
func plainProblems(ps []string) string {
	if len(ps) == 0 {
		return "-"
	}
	return oneLine(strings.Join(ps, "; "))
}

// plainID quotes ids that would break the columns or act on a terminal
// (Kafka allows any string, control characters included); strconv.Quote
// writes those characters out, and bytes that are not UTF-8 as \xff. Such a
// byte decodes to U+FFFD, which is printable: only utf8.ValidString catches
// it (a lone 0x9b is CSI to a terminal that honours 8-bit controls). An id
// that starts with a quote is quoted too, so that no id prints as another's
// quoted form.
func plainID(id string) string {
	if plainASCII(id) {
		return id
	}
	if id == "" || id[0] == '"' || !utf8.ValidString(id) ||
		strings.ContainsFunc(id, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }) {
		return strconv.Quote(id)
	}
	return id
}

// plainASCII is plainID's quick answer for the usual id, printed as it is:
// visible ASCII only, not starting with a quote.
func plainASCII(id string) bool {
	if id == "" || id[0] == '"' {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] >= 0x7f {
			return false
		}
	}
	return true
}

func plainEpoch(t *model.Txn) string {
	if !t.Described && t.ProducerEpoch == 0 {
		return "-"
	}
	return strconv.Itoa(int(t.ProducerEpoch))
}

func plainParts(t *model.Txn) string {
	if !t.Described {
		return "-"
	}
	return strconv.Itoa(len(t.Partitions))
}

func plainAge(t *model.Txn, now time.Time) string {
	if a, ok := t.Age(now); ok {
		return Dur(a)
	}
	return "-"
}

func plainTimeout(t *model.Txn) string {
	if t.TimeoutMs <= 0 {
		return "-"
	}
	return Timeout(t.Timeout())
}

func plainRatio(t *model.Txn, now time.Time) string {
	if r, ok := t.Ratio(now); ok {
		return strings.TrimSpace(Percent(r))
	}
	return "-"
}

func plainLast(k model.EventKind) string {
	if k == "" {
		return "-"
	}
	return strings.ReplaceAll(Outcome(k), " ", "-") // one word per cell
}

func plainCoord(c int32) string {
	if c < 0 {
		return "-"
	}
	return strconv.Itoa(int(c))
}
