package views

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/txnscope/txnscope/model"
)

// Row is what one line of the transaction list is made of.
type Row struct {
	Txn   *model.Txn
	Stats model.IDStats
	Now   time.Time
	// Hanging: the id's producer holds a hanging transaction somewhere.
	Hanging bool
}

const pidColumn = "PID/EPOCH"

// notYet stands for a field of a row that is listed but not described yet:
// unknown for now, where "–" says there is none.
const notYet = "…"

// ListColumns are the transaction list's columns, in order. The TUI fits them
// to the terminal; `snapshot -o table` can print their Text as is.
func ListColumns() []Column[Row] {
	return []Column[Row]{
		{Name: "TRANSACTIONAL ID", Width: 24, Flex: true, Max: 48, Text: func(r Row) string { return name(r.Txn.ID) }, Clip: ClipMiddle},
		{Name: "STATE", Width: 17, Text: func(r Row) string { return stateName(r.Txn.State) },
			Style: func(r Row, st *Styles) Ink { return StateStyle(r.Txn.State, st) }},
		{Name: pidColumn, Width: 11, Right: true, Text: producerText},
		{Name: "PARTS", Width: 5, Right: true, Drop: 5, Text: func(r Row) string {
			if r.Txn.Pending {
				return notYet
			}
			if !r.Txn.Described {
				return "–"
			}
			return strconv.Itoa(len(r.Txn.Partitions))
		}},
		{Name: "AGE", Width: 6, Right: true, Text: func(r Row) string {
			if r.Txn.Pending {
				return notYet
			}
			if a, ok := r.Txn.Age(r.Now); ok {
				return Dur(a)
			}
			return "–"
		}},
		{Name: "TIMEOUT", Width: 7, Right: true, Drop: 4, Text: func(r Row) string {
			if r.Txn.Pending {
				return notYet
			}
			return Timeout(r.Txn.Timeout())
		}},
		{Name: "AGE/TIMEOUT", Width: 11, Flex: true, Max: 26, Text: ratioText, Cell: gaugeCell},
		{Name: "LAST", Width: 9, Drop: 3, Text: func(r Row) string { return lastText(r.Stats.Last) },
			Style: func(r Row, st *Styles) Ink { return EventStyle(r.Stats.Last, st) }},
		{Name: "SEEN C/A", Width: 9, Right: true, Drop: 2, Text: func(r Row) string {
			if r.Stats.Commits == 0 && r.Stats.Aborts == 0 {
				return ""
			}
			return fmt.Sprintf("%d/%d", r.Stats.Commits, r.Stats.Aborts)
		}},
		{Name: "COORD", Width: 5, Right: true, Drop: 1, Text: func(r Row) string {
			if r.Txn.Coordinator < 0 {
				return "–"
			}
			return strconv.Itoa(int(r.Txn.Coordinator))
		}},
	}
}

// lastText is the LAST column's outcome, in its 9 cells.
func lastText(k model.EventKind) string {
	if k == model.ForceTerminated {
		return "forced"
	}
	return Outcome(k)
}

func producerText(r Row) string {
	if r.Txn.Pending {
		return strconv.FormatInt(r.Txn.ProducerID, 10) + "/" + notYet
	}
	if !r.Txn.Described && r.Txn.ProducerEpoch == 0 {
		return strconv.FormatInt(r.Txn.ProducerID, 10) + "/–"
	}
	return fmt.Sprintf("%d/%d", r.Txn.ProducerID, r.Txn.ProducerEpoch)
}

// producerTextLen is len(producerText) without building the text: the
// header sizes the column over every row, 500,000 of them.
func producerTextLen(t *model.Txn) int {
	epoch := digits(int64(t.ProducerEpoch))
	if t.Pending {
		epoch = len(notYet)
	} else if !t.Described && t.ProducerEpoch == 0 {
		epoch = len("–")
	}
	return digits(t.ProducerID) + 1 + epoch
}

// digits is len(strconv.FormatInt(n, 10)).
func digits(n int64) int {
	d := 1
	if n < 0 {
		d++
		if n == math.MinInt64 {
			return 20
		}
		n = -n
	}
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}

func ratioText(r Row) string {
	if r.Txn.Pending {
		return notYet
	}
	if x, ok := r.Txn.Ratio(r.Now); ok {
		return strings.TrimSpace(Percent(x))
	}
	return "–"
}

// gaugeCell draws age/timeout as a bar and a percent; the bar's length is the
// severity for people without colour.
func gaugeCell(r Row, w int, st *Styles) string {
	x, ok := r.Txn.Ratio(r.Now)
	if !ok {
		return pad(ratioText(r), w, true)
	}
	pct := Percent(x)
	bar := w - len(pct) - 1
	if bar < 1 {
		return pad(pct, w, true)
	}
	fill := int(x*float64(bar) + 0.5)
	fill = min(max(fill, 0), bar)
	on, off := strings.Repeat("█", fill), strings.Repeat("░", bar-fill)
	if st == nil {
		return on + off + " " + pct
	}
	sev := SeverityStyle(model.SeverityOf(x), st)
	return sev.Render(on) + st.GaugeRest.Render(off) + " " + sev.Render(pct)
}

// SeverityStyle colours by severity.
func SeverityStyle(s model.Severity, st *Styles) Ink {
	switch s {
	case model.SevDanger:
		return st.GaugeBad
	case model.SevWarn:
		return st.GaugeWarn
	}
	return st.GaugeOK
}

// StateStyle colours a transaction state.
func StateStyle(s model.State, st *Styles) Ink {
	switch {
	case s == model.PrepareEpochFence || s == model.PrepareAbort:
		return st.Warn
	case s.Open():
		return st.StateOpen
	case s == model.CompleteCommit:
		return st.StateCommit
	case s == model.CompleteAbort:
		return st.StateAbort
	}
	return st.StateIdle
}

// EventStyle colours an event kind; the log's steps inside a transaction
// (partitions added, prepare-*) and the id's life (initialized, expired)
// are dim.
func EventStyle(k model.EventKind, st *Styles) Ink {
	switch k {
	case model.Committed:
		return st.StateCommit
	case model.TimedOut, model.Fenced, model.ForceTerminated:
		return st.Danger
	case model.Aborted:
		return st.StateAbort
	case model.Began:
		return st.StateOpen
	case model.Rotated:
		return st.Warn
	}
	return st.Dim
}
