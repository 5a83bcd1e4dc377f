package views

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// DialogPhase is where an abort dialog stands.
type DialogPhase int

const (
	DialogConfirm DialogPhase = iota // waiting for the operator to type abort
	DialogSending                    // the request is out
	DialogDone                       // the result is in
)

// DialogData is the abort dialog: what will be sent, what it does, and the
// confirmation input or the outcome.
type DialogData struct {
	Title        string
	Wire         string
	Consequences []string
	Warning      string // the target changed since the dialog opened
	Input        string // the confirmation input, rendered
	Hint         string // said under the input (e.g. "type abort to confirm")
	Phase        DialogPhase
	Result       string
	ResultOK     bool
	AuditErr     string
	AuditPath    string // where the attempt will be logged; "" when nowhere
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
	wrap := func(s string, indent int) []string {
		ls := Wrap(s, iw-indent)
		for i := range ls {
			if i > 0 {
				ls[i] = strings.Repeat(" ", indent) + ls[i]
			}
		}
		return ls
	}
	var head, mid, tail []string
	head = append(head, st.DialogTitle.Render(Clip(d.Title, iw)), "")
	head = append(head, st.Section.Render("will send"))
	for _, l := range wrap(d.Wire, 0) {
		head = append(head, st.Bold.Render(l))
	}
	mid = append(mid, "", st.Section.Render("what happens"))
	for _, c := range d.Consequences {
		mid = append(mid, wrap("• "+c, 2)...)
	}
	tail = append(tail, "")
	if d.Warning != "" {
		for _, l := range wrap(d.Warning, 0) {
			tail = append(tail, st.Warn.Render(l))
		}
	}
	switch d.Phase {
	case DialogConfirm:
		audit := "Not written to any audit log (none configured)."
		if d.AuditPath != "" {
			audit = "The attempt and its outcome are appended to " + d.AuditPath + "."
		}
		for _, l := range Wrap(audit, iw) {
			tail = append(tail, st.Dim.Render(l))
		}
		tail = append(tail, st.Text.Render("Type ")+st.Key.Render("abort")+st.Text.Render(" and press ")+
			st.Key.Render("enter")+st.Text.Render(" to send it; ")+st.Key.Render("esc")+st.Text.Render(" cancels."))
		tail = append(tail, d.Input)
		if d.Hint != "" {
			tail = append(tail, st.Warn.Render(Clip(d.Hint, iw)))
		}
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
		if d.AuditErr != "" {
			for _, l := range wrap("audit log NOT written: "+d.AuditErr, 0) {
				tail = append(tail, st.Error.Render(l))
			}
		}
		tail = append(tail, st.Dim.Render("enter or esc closes"))
	}
	room := h - 2
	body := append(append(append([]string(nil), head...), mid...), tail...)
	if len(body) > room {
		// The input and the request must stay visible; the explanation gives way.
		keepMid := room - len(head) - len(tail) - 1
		body = append([]string(nil), head...)
		if keepMid > 0 {
			body = append(body, mid[:keepMid]...)
		}
		if keepMid >= 0 {
			body = append(body, st.Dim.Render("…"))
		}
		body = append(body, tail...)
		if len(body) > room {
			body = body[len(body)-room:]
		}
	}
	border := func(s string) string { return st.Border.Render(s) }
	lines := make([]string, 0, len(body)+2)
	lines = append(lines, border("╭"+strings.Repeat("─", bw-2)+"╮"))
	for _, l := range body {
		lines = append(lines, border("│")+" "+Fit(l, iw)+" "+border("│"))
	}
	lines = append(lines, border("╰"+strings.Repeat("─", bw-2)+"╯"))
	return strings.Join(lines, "\n")
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
