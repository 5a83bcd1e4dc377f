package views

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/txnscope/txnscope/internal/escape"
	"github.com/txnscope/txnscope/model"
)

// DetailData is one transactional.id with everything known about it. The ui
// assembles it from the snapshot (model.TxnPartitions decides the rows and
// what an abort on each would hit); this file only lays it out.
type DetailData struct {
	Txn   model.Txn
	Gone  bool // the coordinator no longer lists the id: the last known state is shown
	Stats model.IDStats
	// Source is where the history comes from; Since is when txnscope began
	// keeping it (the zero time when unknown).
	Source   model.Source
	Since    time.Time
	Problems []string
	Parts    []model.TxnPartition
	Now      time.Time
	Loc      *time.Location
	ReadOnly bool
	Cursor   int // index into Parts
	Top      int // first line of the scrolling part
}

// detailDoc is the scrolling part of the detail, and the line of each partition row.
type detailDoc struct {
	lines []string
	rows  []int
}

// DetailLayout says where the partition rows are in the scrolling part of
// the detail, how many lines that part has, and how many of them fit in h.
// The ui scrolls with it; the lines themselves are drawn by Detail.
func DetailLayout(d DetailData, w, h int) (rows []int, lines, visible int) {
	doc := buildDetail(d, w, PlainStyles())
	return doc.rows, len(doc.lines), docHeight(d, h)
}

// Detail draws the detail in exactly w×h: the scrolling fields, partitions and
// events on top, and the producers of the selected partition in a fixed pane
// at the bottom.
func Detail(d DetailData, w, h int, st Styles) string {
	if h <= 0 {
		return ""
	}
	doc := buildDetail(d, w, st)
	v := docHeight(d, h)
	top := min(max(d.Top, 0), max(0, len(doc.lines)-v))
	end := min(len(doc.lines), top+v)
	lines := append([]string(nil), doc.lines[top:end]...)
	if top > 0 && len(lines) > 0 {
		lines[0] = Spread(lines[0], st.Dim.Render(fmt.Sprintf("↑ %d more", top)), w)
	}
	if end < len(doc.lines) && len(lines) > 0 {
		lines[len(lines)-1] = Spread(lines[len(lines)-1], st.Dim.Render(fmt.Sprintf("↓ %d more", len(doc.lines)-end)), w)
	}
	out := Block(lines, w, v)
	if ph := h - v; ph > 0 {
		out += "\n" + producerPane(d, w, ph, st)
	}
	return out
}

func paneHeight(d DetailData) int {
	if len(d.Parts) == 0 {
		return 0
	}
	p := d.Parts[min(max(d.Cursor, 0), len(d.Parts)-1)]
	n := len(paneProducers(d, p))
	if n == 0 {
		n = 1
	}
	extra := 2 // title and column header
	if p.Abortable() && !d.ReadOnly {
		extra++
	}
	return min(n, 5) + extra
}

func docHeight(d DetailData, h int) int {
	ph := paneHeight(d)
	if h-ph < 6 {
		ph = 0
	}
	return h - ph
}

func buildDetail(d DetailData, w int, st Styles) detailDoc {
	var doc detailDoc
	add := func(s string) { doc.lines = append(doc.lines, Fit(s, w)) }
	t := d.Txn

	title := " " + st.Bold.Render(name(t.ID)) + "  " + StateStyle(t.State, &st).Render(stateName(t.State))
	if r, ok := t.Ratio(d.Now); ok {
		sev := SeverityStyle(model.SeverityOf(r), &st)
		title += "  " + sev.Render(strings.TrimSpace(Percent(r))+" of its timeout")
		if m := Marker(&t, d.Now); strings.TrimSpace(m) != "" {
			title += " " + sev.Render(strings.TrimSpace(m))
		}
	}
	add(title)
	if d.Gone {
		add(" " + st.Warn.Render("no longer listed by the coordinator (expired?): showing the last state seen"))
	}
	switch {
	case model.Denied(t.Err):
		add(" " + st.Warn.Render(oneLine(t.Err)))
	case t.Err != "":
		add(" " + st.Error.Render("error: "+oneLine(t.Err)))
	}
	for _, p := range d.Problems {
		if p == t.Err {
			continue
		}
		add(" " + st.Warn.Render("! "+escape.Text(p)))
	}
	for _, pair := range pairs(fields(d), w) {
		add(pair)
	}
	add("")

	title = fmt.Sprintf(" PARTITIONS (%d)", len(d.Parts))
	if t.Pending {
		title = " PARTITIONS (" + notYet + ")"
	}
	if n := unlisted(d.Parts); n > 0 {
		title += fmt.Sprintf(" · %d hanging: open there, not listed by the coordinator", n)
	}
	add(st.Section.Render(title))
	switch {
	case len(d.Parts) == 0 && t.Pending:
		add(st.Dim.Render("   " + notYet + " not described yet"))
	case len(d.Parts) == 0:
		add(st.Dim.Render("   none: the coordinator lists no partitions for this transaction"))
	default:
		cols := Layout(partColumns(), w-markerWidth)
		add(st.Section.Render(markerPad + HeaderLine(cols)))
		for i, p := range d.Parts {
			doc.rows = append(doc.rows, len(doc.lines))
			add(partLine(cols, p, i == d.Cursor, w, st))
		}
	}
	add("")
	for _, l := range txnsSection(d, w, st) {
		add(l)
	}
	add("")
	add(st.Section.Render(" RECENT EVENTS OF THIS ID"))
	if len(d.Stats.Recent) == 0 {
		add(st.Dim.Render("   none seen since txnscope started"))
	}
	for i := len(d.Stats.Recent) - 1; i >= 0; i-- {
		add(EventLine(d.Stats.Recent[i], d.Loc, w, st))
	}
	return doc
}

type field struct{ label, value string }

func fields(d DetailData) []field {
	t, now := d.Txn, d.Now
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no (listed only, not described yet)"
	}
	started := "– (no transaction running)"
	if t.HasStart() {
		started = Clock(t.StartTime(), d.Loc)
		if a, ok := t.Age(now); ok {
			started += " · " + Dur(a) + " ago"
		}
	}
	timeout := Timeout(t.Timeout())
	if r, ok := t.Ratio(now); ok {
		timeout += " · " + strings.TrimSpace(Percent(r)) + " used"
	}
	last := "–"
	if d.Stats.Last != "" {
		last = string(d.Stats.Last) + " at " + Clock(d.Stats.LastAt, d.Loc)
	}
	if t.Pending {
		return pendingFields(d)
	}
	fs := []field{
		{"state", stateName(t.State)},
		{"coordinator", "broker " + strconv.Itoa(int(t.Coordinator))},
		{"producer id", strconv.FormatInt(t.ProducerID, 10)},
		{"epoch", strconv.Itoa(int(t.ProducerEpoch))},
		{"started", started},
		{"timeout", timeout},
		{"partitions", strconv.Itoa(len(t.Partitions))},
		{"described", yes(t.Described)},
		{"last outcome", last},
	}
	if t.Outcome() != model.NoState {
		fs = append(fs, field{"log says", t.Outcome().String()})
	}
	if f, ok := model.ParseFlinkID(t.ID); ok {
		fs = append(fs, field{"flink sink", fmt.Sprintf("prefix %s · subtask %d · checkpoint %d", name(f.Prefix), f.Subtask, f.Checkpoint)})
	}
	return fs
}

// pendingFields are what the listing tells of an id not described yet; the
// rest is unknown for now, not none.
func pendingFields(d DetailData) []field {
	t := d.Txn
	coord := notYet
	if t.Coordinator >= 0 {
		coord = "broker " + strconv.Itoa(int(t.Coordinator))
	}
	return []field{
		{"state", stateName(t.State)},
		{"coordinator", coord},
		{"producer id", strconv.FormatInt(t.ProducerID, 10)},
		{"epoch", notYet},
		{"started", notYet},
		{"timeout", notYet},
		{"partitions", notYet},
		{"described", "not yet (listed only, being described)"},
	}
}

// pairs lays fields out two per line when there is room.
func pairs(fs []field, w int) []string {
	const label = 13
	one := func(f field) string { return "   " + pad(f.label, label, false) + f.value }
	var out []string
	if w < 80 {
		for _, f := range fs {
			out = append(out, one(f))
		}
		return out
	}
	half := w / 2
	for i := 0; i < len(fs); i += 2 {
		if i+1 == len(fs) || ansi.StringWidth(fs[i].value) > half-label-4 || ansi.StringWidth(fs[i+1].value) > half-label-4 {
			out = append(out, one(fs[i]))
			if i+1 < len(fs) {
				out = append(out, one(fs[i+1]))
			}
			continue
		}
		out = append(out, Fit(one(fs[i]), half)+one(fs[i+1]))
	}
	return out
}
