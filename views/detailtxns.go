package views

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/txnscope/txnscope/model"
)

// unknown stands for what the source never told (a transaction's begin or
// partitions, seen between two polls): not none, not yet.
const unknown = "?"

// txnsSection is the detail's TRANSACTIONS: where the history comes from,
// the id's counts, and its last finished transactions, newest first.
func txnsSection(d DetailData, w int, st Styles) []string {
	title := " TRANSACTIONS"
	switch {
	case d.Source.Log && d.Source.Unread != "":
		title += " · from the coordinator log · " + oneLine(d.Source.Unread)
	case d.Source.Log:
		title += " · from the coordinator log"
	case d.Source.Why != "":
		title += " · from polls: " + oneLine(d.Source.Why)
	default:
		title += " · from polls"
	}
	lines := []string{st.Section.Render(title)}
	for _, c := range countLines(d, w) {
		lines = append(lines, "   "+c)
	}
	ts := d.Stats.Finished()
	if len(ts) == 0 {
		return append(lines, st.Dim.Render("   none finished since txnscope started"))
	}
	lines = append(lines, st.Section.Render("   "+txnRow("BEGAN", "ENDED", "TOOK", "OUTCOME", "PARTS", "PID/EPOCH")))
	for i := len(ts) - 1; i >= 0; i-- {
		lines = append(lines, txnLine(ts[i], d.Loc, st))
	}
	return lines
}

// countLines are the counts since start and over the last 5 and 60
// minutes: one line when w has room, two otherwise.
func countLines(d DetailData, w int) []string {
	s := d.Stats
	since := fmt.Sprintf("%s commits · %s aborts", Count(s.Commits), Count(s.Aborts))
	if !d.Since.IsZero() {
		since += " since " + hhmm(d.Since, d.Loc)
	}
	win := s.Window(d.Now)
	recent := fmt.Sprintf("last 5 min %s/%s · last 60 min %s/%s",
		Count(win.Commits5m), Count(win.Aborts5m), Count(win.Commits60m), Count(win.Aborts60m))
	if one := since + " · " + recent; 3+cells(one) <= w {
		return []string{one}
	}
	return []string{since, recent}
}

func hhmm(t time.Time, loc *time.Location) string {
	if loc != nil {
		t = t.In(loc)
	}
	return t.Format("15:04")
}

func txnRow(began, ended, took, outcome, parts, pid string) string {
	return pad(began, 8, false) + "  " + pad(ended, 8, false) + "  " + pad(took, 7, true) + "  " +
		pad(outcome, 20, false) + pad(parts, 5, true) + "  " + pid
}

func txnLine(f model.FinishedTxn, loc *time.Location, st Styles) string {
	began, took, parts := unknown, unknown, unknown
	if b, ok := f.Begun(); ok {
		began = Clock(b, loc)
	}
	if d, ok := f.Duration(); ok {
		took = Elapsed(d)
	}
	if f.Parts >= 0 {
		parts = strconv.Itoa(int(f.Parts))
	}
	pid := strconv.FormatInt(f.ProducerID, 10) + "/" + eventEpoch(model.Event{ProducerEpoch: f.ProducerEpoch})
	outcome := pad(EndedBy(f.Kind, f.Logged), 20, false)
	return "   " + st.Dim.Render(pad(began, 8, false)+"  ") + pad(Clock(f.End(), loc), 8, false) + "  " +
		pad(took, 7, true) + "  " + EventStyle(f.Kind, &st).Render(outcome) + pad(parts, 5, true) + "  " + st.Dim.Render(pid)
}

// EndedBy names an outcome by who ended the transaction. An abort the log
// reports plainly was its producer's; between two polls, nothing said who.
func EndedBy(k model.EventKind, logged bool) string {
	if k == model.Aborted && logged {
		return "aborted by producer"
	}
	return string(k)
}

// Elapsed is how long a transaction ran: milliseconds below a second, a
// tenth of a second below a minute, Dur's form above.
func Elapsed(d time.Duration) string {
	switch {
	case d < time.Second:
		return strconv.Itoa(int(d/time.Millisecond)) + "ms"
	case d < time.Minute:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", d.Seconds()), ".0") + "s"
	}
	return Dur(d)
}
