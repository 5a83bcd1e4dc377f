package views

import (
	"fmt"
	"time"

	"github.com/txnscope/txnscope/internal/escape"
)

// BatchRow is one id of a batch force-terminate.
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

// BatchDialogData is the dialog of a batch force-terminate: what the ids
// are of, each id, what is sent and what it does, and the confirmation, the
// progress or the outcome. Every text may hold the cluster's strings:
// BatchDialog escapes them.
type BatchDialogData struct {
	Title string // states the count
	Of    string // the job (and subtask) the ids are of
	// RestsOn names what a resolve's verdicts rest on: the Flink job and
	// the checkpoint directory.
	RestsOn      []string
	Rows         []BatchRow
	Skipped      []string // ids left out, with why
	Wire         string
	Consequences []string
	Warning      string // a later refresh says some changed
	Word         string
	Input        string
	Hint         string
	Phase        DialogPhase
	Progress     string // while sending: "2 of 3 sent…"; once done: the tally
	ProgressOK   bool
	Stopped      string // why the rest were not sent
	AuditPath    string
	AuditFailed  bool // the log could not take an attempt's record: it is not whole
}

// BatchDialogRoom is the fewest lines inside the box that show what the
// operator confirms: the title with the count, the line that says what to
// type, and the input.
const BatchDialogRoom = 4

// BatchDialogFits reports whether a w×h area shows the batch dialog's
// title, count and confirmation; keys must not send what is not seen.
func BatchDialogFits(w, h int) bool { return DialogWidth(w)-4 >= 20 && h-2 >= BatchDialogRoom }

// BatchDialog draws the dialog box, at most w×h; Overlay puts it on screen.
func BatchDialog(d BatchDialogData, w, h int, st Styles) string {
	bw := DialogWidth(w)
	iw := bw - 4
	if iw < 1 || h < 3 {
		return Block(nil, bw, min(h, 3))
	}
	wrap := func(s string, indent int) []string { return wrapDialog(s, iw, indent) }
	head := []string{st.DialogTitle.Render(Clip(escape.Text(d.Title), iw))}
	if d.Of != "" {
		head = append(head, st.Text.Render(Clip(escape.Text(d.Of), iw)))
	}
	var wire, mid, note, tail []string
	if d.Wire != "" {
		wire = append(wire, st.Section.Render("will send, to each id's coordinator, one after the other"))
		for _, l := range wrap(d.Wire, 0) {
			wire = append(wire, st.Bold.Render(l))
		}
	}
	if len(d.RestsOn) > 0 {
		mid = append(mid, st.Section.Render("the verdicts rest on"))
		for _, b := range d.RestsOn {
			mid = append(mid, wrap("• "+escape.Text(b), 2)...)
		}
	}
	if len(d.Consequences) > 0 {
		mid = append(mid, st.Section.Render("what happens"))
		for _, c := range d.Consequences {
			mid = append(mid, wrap("• "+c, 2)...)
		}
	}
	for _, s := range d.Skipped {
		for _, l := range wrap("left out: "+s, 2) {
			tail = append(tail, st.Warn.Render(l))
		}
	}
	if d.Warning != "" {
		for _, l := range wrap(d.Warning, 0) {
			tail = append(tail, st.Warn.Render(l))
		}
	}
	switch d.Phase {
	case DialogConfirm:
		audit := "Each id is re-read just before its own request and refused unless it is the very transaction listed; " +
			"each request is written to " + d.AuditPath + " before it goes out."
		for _, l := range wrap(audit, 0) {
			note = append(note, st.Dim.Render(l))
		}
		tail = append(tail, confirmLines(d.Word, "them", d.Input, d.Hint, iw, st)...)
	case DialogSending:
		for _, l := range wrap(d.Progress, 0) {
			tail = append(tail, st.Warn.Render(l))
		}
		if d.Stopped != "" {
			for _, l := range wrap(d.Stopped, 0) {
				tail = append(tail, st.Warn.Render(l))
			}
		}
	case DialogDone:
		style := st.Error
		if d.ProgressOK {
			style = st.Good
		}
		for _, l := range wrap(d.Progress, 0) {
			tail = append(tail, style.Render(l))
		}
		if d.Stopped != "" {
			for _, l := range wrap(d.Stopped, 0) {
				tail = append(tail, st.Warn.Render(l))
			}
		}
		if d.AuditFailed {
			for _, l := range wrap("NOT every attempt is recorded: "+d.AuditPath+" holds those before the one the audit log failed on, "+
				"and that one's record is incomplete", 0) {
				tail = append(tail, st.Error.Render(l))
			}
		} else {
			for _, l := range wrap("each attempt is recorded in "+d.AuditPath, 0) {
				tail = append(tail, st.Dim.Render(l))
			}
		}
		tail = append(tail, st.Dim.Render("enter or esc closes"))
	}
	rows := batchRows(d.Rows, iw, st)
	body := fitBatch(h-2, head, rows, wire, mid, note, tail, st)
	return dialogBox(body, bw, st)
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

// fitBatch stacks the dialog into room lines: the title and count on top
// and the confirmation (or progress) at the bottom always; then the request,
// the ids, the explanation and the audit note as room allows, the ids cut
// to what fits with "… and N more" when even they do not.
func fitBatch(room int, head []string, rows [][]string, wire, mid, note, tail []string, st Styles) []string {
	stack := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			if len(p) == 0 {
				continue
			}
			if len(out) > 0 {
				out = append(out, "")
			}
			out = append(out, p...)
		}
		return out
	}
	all := flatten(rows, len(rows))
	for _, body := range [][]string{stack(head, all, wire, mid, note, tail), stack(head, all, wire, mid, tail),
		stack(head, all, wire, tail), stack(head, all, tail)} {
		if len(body) <= room {
			return body
		}
	}
	// Not every id fits: as many as do, then how many more there are.
	for _, w := range [][]string{wire, nil} {
		spare := room - len(stack(head, w, tail)) - 1 // the blank line above the ids
		if cut := cutRows(rows, spare, st); cut != nil {
			return stack(head, cut, w, tail)
		}
	}
	body := stack(head, tail)
	if len(body) <= room {
		return body
	}
	keepTop := min(len(head), max(room-BatchDialogRoom+2, 1))
	return append(append([]string(nil), body[:keepTop]...), body[len(body)-(room-keepTop):]...)
}

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
