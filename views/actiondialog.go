package views

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/txnscope/txnscope/internal/escape"
)

// DialogPhase is where an action dialog stands.
type DialogPhase int

const (
	DialogConfirm DialogPhase = iota // waiting for the operator to type the word
	DialogSending                    // a request is out
	DialogDone                       // the results are in
)

// ActionDialogData is the dialog of an action: a single one (Facts: what
// identifies the transaction, the request itself, the outcome) or several
// confirmed at once (Rows: one per id, what each came to, the tally). Every
// text may hold the cluster's strings (ids): ActionDialog escapes them.
type ActionDialogData struct {
	Title string   // a batch's states the count
	Of    string   // what a batch's ids are of: the job (and subtask)
	Facts []string // a single action's: what identifies the transaction (model.Action.Facts)
	Rows  []BatchRow
	// RestsOn names what a resolve's verdicts rest on: the Flink job and
	// the checkpoint directory.
	RestsOn      []string
	Skipped      []string // ids left out, with why
	Wire         string   // what is sent (model.Action.Wire: its id Go-quoted)
	Consequences []string
	Notice       string // why this action takes a longer confirmation, what it loses
	Warning      string // a later refresh says the target changed
	Word         string // what the operator types to send it
	Input        string // the confirmation input, rendered
	Hint         string // said under the input
	Phase        DialogPhase
	// Result is what a single action came to; Progress a batch's, while
	// sending ("sending 2 of 3…") and once done (the tally).
	Result      string
	ResultOK    bool
	Progress    string
	Stopped     string // why a batch's rest was not sent
	Attempt     string // a single action's attempt id in the audit log, once done
	AuditPath   string // where each attempt is logged
	AuditFailed bool   // the log could not take an attempt's record: it is not whole
	// Reverified: a request whose checkpoint evidence is read again too.
	Reverified bool
}

// batch reports a dialog of several ids, shown as rows.
func (d ActionDialogData) batch() bool { return len(d.Rows) > 0 }

// ActionDialogRoom is the fewest lines inside the box that show what the
// operator confirms: the title (with a batch's count), the line that says
// what to type, and the input.
const ActionDialogRoom = 4

// ActionDialogFits reports whether a w×h area shows the dialog's title and
// confirmation; keys must not send what is not seen.
func ActionDialogFits(w, h int) bool { return DialogWidth(w)-4 >= 20 && h-2 >= ActionDialogRoom }

// DialogWidth is how wide the dialog box is in a w-wide area.
func DialogWidth(w int) int { return max(min(w-4, 84), min(w, 20)) }

// ActionDialog draws the dialog box, at most w×h; Overlay puts it on screen.
func ActionDialog(d ActionDialogData, w, h int, st Styles) string {
	bw := DialogWidth(w)
	iw := bw - 4
	if iw < 1 || h < 3 {
		return Block(nil, bw, min(h, 3))
	}
	lines := func(s string, indent int, style Ink) []string {
		if s == "" {
			return nil
		}
		ls := wrapDialog(s, iw, indent)
		for i := range ls {
			ls[i] = style.Render(ls[i])
		}
		return ls
	}
	// Parts in the order they are shown; fitDialog says which give way
	// when the box is short of room.
	var head, wire, mid, note, tail []string
	head = append(head, st.DialogTitle.Render(Clip(escape.Text(d.Title), iw)))
	if d.Of != "" {
		head = append(head, st.Text.Render(Clip(escape.Text(d.Of), iw)))
	}
	for _, f := range d.Facts {
		head = append(head, fact(f, iw, st)...)
	}
	if d.Wire != "" {
		title := "will send"
		if d.batch() {
			title = "will send, to each id's coordinator, one after the other"
		}
		wire = append(wire, st.Section.Render(title))
		// The request Go-quotes the id; Requote shows it escaped once, as
		// the facts above show it.
		for _, l := range Wrap(escape.Requote(d.Wire), iw) {
			wire = append(wire, st.Bold.Render(l))
		}
	}
	if len(d.RestsOn) > 0 {
		mid = append(mid, st.Section.Render("the verdicts rest on"))
		for _, b := range d.RestsOn {
			mid = append(mid, wrapDialog("• "+b, iw, 2)...)
		}
	}
	if len(d.Consequences) > 0 {
		mid = append(mid, st.Section.Render("what happens"))
		for _, c := range d.Consequences {
			mid = append(mid, wrapDialog("• "+c, iw, 2)...)
		}
	}
	for _, s := range d.Skipped {
		tail = append(tail, lines("left out: "+s, 2, st.Warn)...)
	}
	for _, w := range []string{d.Notice, d.Warning} {
		if w != "" {
			tail = append(tail, lines(w, 0, st.Warn)...)
		}
	}
	switch d.Phase {
	case DialogConfirm:
		note = lines(d.recheckNote(), 0, st.Dim)
		what := "it"
		if d.batch() {
			what = "them"
		}
		tail = append(tail, confirmLines(d.Word, what, d.Input, d.Hint, iw, st)...)
	case DialogSending:
		if !d.batch() {
			tail = append(tail, st.Warn.Render("sending… waiting for the broker's answer"))
		}
		tail = append(tail, lines(d.Progress, 0, st.Warn)...)
		tail = append(tail, lines(d.Stopped, 0, st.Warn)...)
	case DialogDone:
		tail = append(tail, d.outcome(iw, st)...)
		tail = append(tail, st.Dim.Render("enter or esc closes"))
	}
	body := fitDialog(h-2, head, batchRows(d.Rows, iw, st), wire, mid, note, tail, st)
	return dialogBox(body, bw, st)
}

// recheckNote says, before confirming, what happens just before each request.
func (d ActionDialogData) recheckNote() string {
	again := "Re-read just before sending and refused unless it is this very transaction; "
	switch {
	case d.batch():
		again = "Each id is re-read just before its own request and refused unless it is the very transaction listed; "
	case d.Reverified:
		again = "Re-read just before sending, its checkpoint evidence asked again, and refused unless both hold; "
	}
	return again + "each request is written to " + d.AuditPath + " before it goes out."
}

// outcome is what the action came to and where it is recorded.
func (d ActionDialogData) outcome(iw int, st Styles) []string {
	lines := func(s string, style Ink) []string {
		if s == "" {
			return nil
		}
		ls := wrapDialog(s, iw, 0)
		for i := range ls {
			ls[i] = style.Render(ls[i])
		}
		return ls
	}
	style := st.Error
	if d.ResultOK {
		style = st.Good
	}
	if !d.batch() {
		out := lines(d.Result, style)
		switch {
		case d.Attempt != "" && d.AuditFailed:
			out = append(out, lines("attempt "+d.Attempt+" in "+d.AuditPath+": its record there is incomplete", st.Error)...)
		case d.Attempt != "":
			out = append(out, lines("recorded as attempt "+d.Attempt+" in "+d.AuditPath, st.Dim)...)
		}
		return out
	}
	out := append(lines(d.Progress, style), lines(d.Stopped, st.Warn)...)
	if d.AuditFailed {
		return append(out, lines("NOT every attempt is recorded: "+d.AuditPath+" holds those before the one the audit log failed on, "+
			"and that one's record is incomplete", st.Error)...)
	}
	return append(out, lines("each attempt is recorded in "+d.AuditPath, st.Dim)...)
}

// dialogBox draws body in a bordered box bw wide.
func dialogBox(body []string, bw int, st Styles) string {
	iw := bw - 4
	border := func(s string) string { return st.Border.Render(s) }
	lines := make([]string, 0, len(body)+2)
	lines = append(lines, border("╭"+strings.Repeat("─", bw-2)+"╮"))
	for _, l := range body {
		lines = append(lines, border("│")+" "+Fit(l, iw)+" "+border("│"))
	}
	lines = append(lines, border("╰"+strings.Repeat("─", bw-2)+"╯"))
	return strings.Join(lines, "\n")
}

// wrapDialog wraps an untrusted s to w cells, its lines after the first
// indented by indent.
func wrapDialog(s string, w, indent int) []string {
	ls := Wrap(escape.Text(s), w-indent)
	for i := range ls {
		if i > 0 {
			ls[i] = strings.Repeat(" ", indent) + ls[i]
		}
	}
	return ls
}

// confirmLines say what to type to send them (or it), then the input and
// any hint under it.
func confirmLines(word, what, input, hint string, iw int, st Styles) []string {
	lines := []string{st.Text.Render("Type ") + st.Key.Render(word) + st.Text.Render(" and press ") +
		st.Key.Render("enter") + st.Text.Render(" to send "+what+"; ") + st.Key.Render("esc") + st.Text.Render(" cancels."), input}
	if hint != "" {
		lines = append(lines, st.Warn.Render(Clip(hint, iw)))
	}
	return lines
}

// fitDialog stacks the parts of the dialog into room lines, blank lines
// between them, dropping what matters least when they do not fit: the audit
// note, then the explanation (down to "…"), then the request, then the ids
// past those that fit ("… and N more"). Should even the rest not fit, the
// title (and facts) keep the top and the input the bottom, and the middle of
// the warnings goes.
func fitDialog(room int, head []string, rows [][]string, wire, mid, note, tail []string, st Styles) []string {
	all := flatten(rows, len(rows))
	for _, body := range [][]string{stack(head, all, wire, mid, note, tail), stack(head, all, wire, mid, tail)} {
		if len(body) <= room {
			return body
		}
	}
	more := []string{st.Dim.Render("…")}
	short := stack(head, all, wire, more, tail)
	if spare := room - len(short); spare > 1 {
		// As much of the explanation as fits (its title and a line at
		// least), then the ellipsis.
		return stack(head, all, wire, append(append([]string(nil), mid[:min(spare, len(mid))]...), more...), tail)
	}
	for _, body := range [][]string{short, stack(head, all, wire, tail), stack(head, all, tail)} {
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
	keepTop := min(len(head), max(room/2, 1))
	return append(append([]string(nil), body[:keepTop]...), body[len(body)-(room-keepTop):]...)
}

// stack joins the parts that hold lines, a blank line between them.
func stack(parts ...[]string) []string {
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

// factLabel is how wide the labels of the facts are ("transaction  ...").
const factLabel = 13

// fact draws one "label  value" line of model.Action.Facts: the label dim,
// the value wrapped beside it.
func fact(f string, iw int, st Styles) []string {
	label, value, ok := strings.Cut(f, "  ")
	if !ok || iw <= factLabel+10 {
		return Wrap(escape.Text(f), iw)
	}
	lines := Wrap(escape.Text(strings.TrimSpace(value)), iw-factLabel)
	for i := range lines {
		pad := strings.Repeat(" ", factLabel)
		if i == 0 {
			pad = st.Dim.Render(Fit(label, factLabel))
		}
		lines[i] = pad + lines[i]
	}
	return lines
}

// Overlay puts box in the middle of bg (exactly w×h), dimming what is behind.
func Overlay(bg, box string, w, h int, st Styles) string {
	back := Lines(bg)
	fore := Lines(box)
	bw := 0
	for _, l := range fore {
		bw = max(bw, ansi.StringWidth(l))
	}
	x := max(0, (w-bw)/2)
	y := max(0, (h-len(fore))/2)
	out := make([]string, h)
	for i := 0; i < h; i++ {
		var l string
		if i < len(back) {
			l = ansi.Strip(back[i])
		}
		l = Fit(l, w)
		if i >= y && i-y < len(fore) {
			left := ansi.Truncate(l, x, "")
			right := ansi.Cut(l, x+bw, w)
			out[i] = Fit(st.Dim.Render(left)+Fit(fore[i-y], bw)+st.Dim.Render(right), w)
		} else {
			out[i] = st.Dim.Render(l)
		}
	}
	return strings.Join(out, "\n")
}
