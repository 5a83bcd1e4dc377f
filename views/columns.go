package views

import (
	"fmt"
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

// ListColumns are the transaction list's columns, in order. The TUI fits them
// to the terminal; `snapshot -o table` can print their Text as is.
func ListColumns() []Column[Row] {
	return []Column[Row]{
		{Name: "TRANSACTIONAL ID", Width: 24, Flex: true, Max: 48, Text: func(r Row) string { return name(r.Txn.ID) }, Clip: ClipMiddle},
		{Name: "STATE", Width: 17, Text: func(r Row) string { return stateName(r.Txn.State) },
			Style: func(r Row, st *Styles) Ink { return StateStyle(r.Txn.State, st) }},
		{Name: pidColumn, Width: 11, Right: true, Text: producerText},
		{Name: "PARTS", Width: 5, Right: true, Drop: 5, Text: func(r Row) string {
			if !r.Txn.Described {
				return "–"
			}
			return strconv.Itoa(len(r.Txn.Partitions))
		}},
		{Name: "AGE", Width: 6, Right: true, Text: func(r Row) string {
			if a, ok := r.Txn.Age(r.Now); ok {
				return Dur(a)
			}
			return "–"
		}},
		{Name: "TIMEOUT", Width: 7, Right: true, Drop: 4, Text: func(r Row) string { return Timeout(r.Txn.Timeout()) }},
		{Name: "AGE/TIMEOUT", Width: 11, Flex: true, Max: 26, Text: ratioText, Cell: gaugeCell},
		{Name: "LAST", Width: 9, Drop: 3, Text: func(r Row) string { return Outcome(r.Stats.Last) },
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

func producerText(r Row) string {
	if !r.Txn.Described && r.Txn.ProducerEpoch == 0 {
		return strconv.FormatInt(r.Txn.ProducerID, 10) + "/–"
	}
	return fmt.Sprintf("%d/%d", r.Txn.ProducerID, r.Txn.ProducerEpoch)
}

// producerWidth is len(producerText) without building the text: the header
// measures every id on each refresh.
func producerWidth(t *model.Txn) int {
	if !t.Described && t.ProducerEpoch == 0 {
		return digits(t.ProducerID) + len("/–")
	}
	return digits(t.ProducerID) + 1 + digits(int64(t.ProducerEpoch))
}

func digits(n int64) int {
	w := 1
	if n < 0 {
		w++ // the sign; -n may overflow, n/10 does not
	}
	for n /= 10; n != 0; n /= 10 {
		w++
	}
	return w
}

func ratioText(r Row) string {
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
		return pad("–", w, true)
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

// EventStyle colours an event kind.
func EventStyle(k model.EventKind, st *Styles) Ink {
	switch k {
	case model.Committed:
		return st.StateCommit
	case model.TimedOut, model.Fenced:
		return st.Danger
	case model.Aborted:
		return st.StateAbort
	case model.Began:
		return st.StateOpen
	}
	return st.Dim
}
