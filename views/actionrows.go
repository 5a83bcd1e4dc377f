package views

import (
	"fmt"
	"time"

	"github.com/txnscope/txnscope/internal/escape"
)

// BatchRow is one id of an action dialog of several.
type BatchRow struct {
	ID         string
	ProducerID int64
	Epoch      int16
	Age        time.Duration
	Timeout    time.Duration
	// Status is what became of it ("" while waiting): ok, refused, failed,
	// not sent, sending…, or changed (a later refresh says so, before
	// confirming). Bad marks it in the error colour.
	Status string
	Bad    bool
	// Reason says why it was refused or failed, under the row.
	Reason string
}

// batchRows is the table of ids: a header line, then one group of lines
// per id (its row, and why it was refused or failed).
func batchRows(rows []BatchRow, iw int, st Styles) (out [][]string) {
	if len(rows) == 0 {
		return nil
	}
	const ageW, timeoutW = 6, 7
	prodW, statusW := len("PRODUCER/EPOCH"), 0
	for _, r := range rows {
		prodW = max(prodW, len(producerEpoch(r)))
		statusW = max(statusW, len([]rune(r.Status)))
	}
	idW := iw - prodW - ageW - timeoutW - 3
	if statusW > 0 {
		idW -= statusW + 1
	}
	if idW < 8 {
		// Too narrow for columns: the ids alone.
		idW, prodW = iw, 0
	}
	line := func(id, prod, age, timeout, status string) string {
		if prodW == 0 {
			return ClipMiddle(id, idW)
		}
		s := Fit(ClipMiddle(id, idW), idW) + " " + pad(prod, prodW, false) + " " + pad(age, ageW, true) + " " + pad(timeout, timeoutW, true)
		if statusW > 0 {
			s += " " + Fit(status, statusW)
		}
		return s
	}
	out = append(out, []string{st.Section.Render(line("ID", "PRODUCER/EPOCH", "AGE", "TIMEOUT", ""))})
	for _, r := range rows {
		text := line(escape.Text(r.ID), producerEpoch(r), Dur(r.Age), Timeout(r.Timeout), r.Status)
		style := st.Text
		if r.Bad {
			style = st.Error
		}
		g := []string{style.Render(text)}
		if r.Reason != "" {
			for _, l := range Wrap(escape.Text(r.Reason), iw-2) {
				g = append(g, st.Dim.Render("  "+l))
			}
		}
		out = append(out, g)
	}
	return out
}

func producerEpoch(r BatchRow) string { return fmt.Sprintf("%d/%d", r.ProducerID, r.Epoch) }

func flatten(rows [][]string, n int) []string {
	var out []string
	for _, g := range rows[:n] {
		out = append(out, g...)
	}
	return out
}

// cutRows is the header and the first ids that fit in room lines with the
// line that counts the rest; nil when not even one id does.
func cutRows(rows [][]string, room int, st Styles) []string {
	if len(rows) < 2 || room < 3 {
		return nil
	}
	used, n := 1+1, 1 // the header and the "more" line
	for n < len(rows) && used+len(rows[n]) <= room {
		used += len(rows[n])
		n++
	}
	if n == 1 {
		return nil
	}
	return append(flatten(rows, n), st.Dim.Render(fmt.Sprintf("… and %d more", len(rows)-n)))
}
