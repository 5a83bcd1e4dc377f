package views

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/charmbracelet/x/ansi"

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
func PlainTableQuery(w io.Writer, s *model.Snapshot, h *model.History, q model.Query, now time.Time) error {
	q = model.Query{CheckpointInterval: q.CheckpointInterval}
	rows := [][]string{{"TRANSACTIONAL ID", "STATE", "PRODUCER", "PARTS", "AGE", "TIMEOUT", "%", "LAST", "COMMITS", "ABORTS", "COORD", "PROBLEMS"}}
	for _, i := range model.Rows(s, h, q, now) {
		t := &s.Txns[i]
		st := h.Stats(t.ID)
		rows = append(rows, []string{
			plainID(t.ID), plainID(string(t.State)), fmt.Sprintf("%d/%s", t.ProducerID, plainEpoch(t)), plainParts(t), plainAge(t, now),
			plainTimeout(t), plainRatio(t, now), plainLast(st.Last), strconv.Itoa(st.Commits), strconv.Itoa(st.Aborts), plainCoord(t.Coordinator),
			plainProblems(model.Problems(*t, st, s, q, now)),
		})
	}
	return alignTable(w, rows, 2)
}

// alignTable writes rows as columns, each padded to its widest cell plus gap
// spaces; the last cell of a row is not padded. Widths are display cells:
// text/tabwriter counts runes, and a wide (CJK) id would push its row out of
// line.
func alignTable(w io.Writer, rows [][]string, gap int) error {
	var widths []int
	for _, r := range rows {
		for i, c := range r[:len(r)-1] {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], ansi.StringWidth(c))
		}
	}
	bw := bufio.NewWriter(w)
	for _, r := range rows {
		for i, c := range r[:len(r)-1] {
			bw.WriteString(c)
			bw.WriteString(strings.Repeat(" ", widths[i]-ansi.StringWidth(c)+gap))
		}
		bw.WriteString(r[len(r)-1])
		bw.WriteByte('\n')
	}
	return bw.Flush()
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
// writes those characters out. An id that starts with a quote is quoted too,
// so that no id prints as another's quoted form.
func plainID(id string) string {
	if id == "" || id[0] == '"' || strings.ContainsFunc(id, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }) {
		return strconv.Quote(id)
	}
	return id
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
