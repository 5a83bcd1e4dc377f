package views

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

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
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TRANSACTIONAL ID\tSTATE\tPRODUCER\tPARTS\tAGE\tTIMEOUT\t%\tLAST\tCOMMITS\tABORTS\tCOORD\tPROBLEMS")
	for _, i := range model.Rows(s, h, q, now) {
		t := &s.Txns[i]
		st := h.Stats(t.ID)
		fmt.Fprintf(tw, "%s\t%s\t%d/%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\n",
			plainID(t.ID), t.State, t.ProducerID, plainEpoch(t), plainParts(t), plainAge(t, now),
			plainTimeout(t), plainRatio(t, now), plainLast(st.Last), st.Commits, st.Aborts, plainCoord(t.Coordinator),
			plainProblems(model.Problems(*t, st, s, q, now)))
	}
	return tw.Flush()
}

// plainProblems keeps the cell on one line: a problem can quote a per-id error
// from the cluster.
func plainProblems(ps []string) string {
	if len(ps) == 0 {
		return "-"
	}
	return strings.Map(func(r rune) rune {
		if r == '\t' || !unicode.IsPrint(r) {
			return ' '
		}
		return r
	}, strings.Join(ps, "; "))
}

// plainID quotes ids that would break the columns (Kafka allows any string).
func plainID(id string) string {
	if id == "" || strings.ContainsFunc(id, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }) {
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
