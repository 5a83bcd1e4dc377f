package views

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/txnscope/txnscope/internal/escape"
)

// DialogPhase is where an abort dialog stands.
type DialogPhase int

const (
	DialogConfirm DialogPhase = iota // waiting for the operator to type abort
	DialogSending                    // the request is out
	DialogDone                       // the result is in
)

// DialogData is the abort dialog: the transaction it aims at, what will be
// sent, what it does, and the confirmation input or the outcome. Every text
// may hold the cluster's strings (ids): Dialog escapes them.
type DialogData struct {
	Title        string
	Facts        []string // what identifies the transaction (model.Action.Facts)
	Wire         string   // model.Action.Wire: its id Go-quoted
	Consequences []string
	Notice       string // why this abort takes a longer confirmation
	Warning      string // the target changed since the dialog opened
	Word         string // what the operator types to send it
	Input        string // the confirmation input, rendered
	Hint         string // said under the input (e.g. "type abort to confirm")
	Phase        DialogPhase
	Result       string
	ResultOK     bool
	Attempt      string // the attempt's id in the audit log, once done
	AuditPath    string // where the attempt is logged
	AuditFailed  bool   // the log could not take the attempt's result
	// Reverified: a commit, whose checkpoint evidence is read again too.
	Reverified bool
}

// DialogWidth is how wide the dialog box is in a w-wide area.
func DialogWidth(w int) int { return max(min(w-4, 84), min(w, 20)) }

// Dialog draws the dialog box, at most w×h; Overlay puts it on screen.
func Dialog(d DialogData, w, h int, st Styles) string {
	bw := DialogWidth(w)
	iw := bw - 4
	if iw < 1 || h < 3 {
		return Block(nil, bw, min(h, 3))
	}
	wrap := func(s string, indent int) []string { return wrapDialog(s, iw, indent) }
	// Parts in the order they are shown; when the box is short of room the
	// audit note gives way first, then the explanation, then the request.
	// What names the transaction, the warnings and the input always stay.
	var head, wire, mid, note, tail []string
	head = append(head, st.DialogTitle.Render(Clip(escape.Text(d.Title), iw)))
	for _, f := range d.Facts {
		head = append(head, fact(f, iw, st)...)
	}
	wire = append(wire, st.Section.Render("will send"))
	// The request Go-quotes the id; Requote shows it escaped once, as the
	// facts above show it.
	for _, l := range Wrap(escape.Requote(d.Wire), iw) {
		wire = append(wire, st.Bold.Render(l))
	}
	mid = append(mid, st.Section.Render("what happens"))
	for _, c := range d.Consequences {
		mid = append(mid, wrap("• "+c, 2)...)
	}
	for _, w := range []string{d.Notice, d.Warning} {
		if w == "" {
			continue
		}
		for _, l := range wrap(w, 0) {
			tail = append(tail, st.Warn.Render(l))
		}
	}
	switch d.Phase {
	case DialogConfirm:
		again := "Re-read just before sending and refused unless it is this very transaction; "
		if d.Reverified {
			again = "Re-read just before sending, its checkpoint evidence asked again, and refused unless both hold; "
		}
		audit := again + "each request is written to " + d.AuditPath + " before it goes out."
		for _, l := range wrap(audit, 0) {
			note = append(note, st.Dim.Render(l))
		}
		tail = append(tail, confirmLines(d.Word, "it", d.Input, d.Hint, iw, st)...)
	case DialogSending:
		tail = append(tail, st.Warn.Render("sending… waiting for the broker's answer"))
	case DialogDone:
		style := st.Error
		if d.ResultOK {
			style = st.Good
		}
		for _, l := range wrap(d.Result, 0) {
			tail = append(tail, style.Render(l))
		}
		switch {
		case d.Attempt != "" && d.AuditFailed:
			for _, l := range wrap("attempt "+d.Attempt+" in "+d.AuditPath+": its record there is incomplete", 0) {
				tail = append(tail, st.Error.Render(l))
			}
		case d.Attempt != "":
			for _, l := range wrap("recorded as attempt "+d.Attempt+" in "+d.AuditPath, 0) {
				tail = append(tail, st.Dim.Render(l))
			}
		}
		tail = append(tail, st.Dim.Render("enter or esc closes"))
	}
	body := fitDialog(h-2, head, wire, mid, note, tail, st)
	return dialogBox(body, bw, st)
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
// note, then the explanation (down to "…"), then the request. Should
// even the rest not fit, the title and facts keep the top and the input the
// bottom, and the middle of the warnings goes.
func fitDialog(room int, head, wire, mid, note, tail []string, st Styles) []string {
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
	for _, body := range [][]string{stack(head, wire, mid, note, tail), stack(head, wire, mid, tail)} {
		if len(body) <= room {
			return body
		}
	}
	short := stack(head, wire, []string{st.Dim.Render("…")}, tail)
	if spare := room - len(short); spare > 0 {
		// As much of the explanation as fits, then the ellipsis.
		mid = append(append([]string(nil), mid[:min(spare, len(mid))]...), st.Dim.Render("…"))
		return stack(head, wire, mid, tail)
	}
	for _, body := range [][]string{short, stack(head, wire, tail), stack(head, tail)} {
		if len(body) <= room {
			return body
		}
	}
	body := stack(head, tail)
	keepTop := min(len(head), room/2)
	return append(append([]string(nil), body[:keepTop]...), body[len(body)-(room-keepTop):]...)
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
