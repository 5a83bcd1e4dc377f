package views

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/txnscope/txnscope/model"
)

// DetailData is one transactional.id with everything known about it. The ui
// assembles it from the snapshot (model.Orphans and friends); this file only
// lays it out.
type DetailData struct {
	Txn      model.Txn
	Gone     bool // the coordinator no longer lists the id: the last known state is shown
	Stats    model.IDStats
	Problems []string
	Parts    []DetailPart
	Now      time.Time
	Loc      *time.Location
	ReadOnly bool
	Cursor   int // index into Parts
	Top      int // first line of the scrolling part
}

// DetailPart is one partition row of the detail.
type DetailPart struct {
	model.TopicPartition
	Part  model.Partition // offsets and producers; meaningful when Known
	Known bool
	// Listed is false for a partition the coordinator does not list in this
	// transaction although its producer has an open transaction there.
	Listed bool
	Own    model.Producer // this transaction's producer on the partition
	HasOwn bool
	// PinsLSO: this transaction's start offset is what holds the LSO back.
	PinsLSO   bool
	Pinner    model.Producer
	HasPinner bool
	PinnerID  string           // the id the coordinator lists for the pinner's producer id
	Orphans   []model.Producer // open here, accounted for by no open transaction
	Owners    map[int64]string // transactional.id per producer id, for the producer pane
}

// Abortable reports whether an abort on this partition is possible.
func (p DetailPart) Abortable() bool { return len(p.Orphans) > 0 }

// AbortTarget is the hanging producer an abort on this partition would end:
// the detail's own producer when it is one of them, else the one pinning the
// LSO, else the first.
func (p DetailPart) AbortTarget(pid int64) (model.Producer, bool) {
	if len(p.Orphans) == 0 {
		return model.Producer{}, false
	}
	for _, o := range p.Orphans {
		if o.ProducerID == pid {
			return o, true
		}
	}
	for _, o := range p.Orphans {
		if p.HasPinner && o.ProducerID == p.Pinner.ProducerID {
			return o, true
		}
	}
	return p.Orphans[0], true
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

	title := " " + st.Bold.Render(t.ID) + "  " + StateStyle(t.State, &st).Render(string(t.State))
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
	if t.Err != "" {
		add(" " + st.Error.Render("error: "+oneLine(t.Err)))
	}
	for _, p := range d.Problems {
		if p == t.Err {
			continue
		}
		add(" " + st.Warn.Render("! "+p))
	}
	for _, pair := range pairs(fields(d), w) {
		add(pair)
	}
	add("")

	title = fmt.Sprintf(" PARTITIONS (%d)", len(d.Parts))
	if n := unlisted(d.Parts); n > 0 {
		title += fmt.Sprintf(" · %d hanging: open there, not listed by the coordinator", n)
	}
	add(st.Section.Render(title))
	if len(d.Parts) == 0 {
		add(st.Dim.Render("   none: the coordinator lists no partitions for this transaction"))
	} else {
		cols := Layout(partColumns(), w-markerWidth)
		add(st.Section.Render("   " + HeaderLine(cols)))
		for i, p := range d.Parts {
			doc.rows = append(doc.rows, len(doc.lines))
			add(partLine(cols, p, i == d.Cursor, w, st))
		}
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
	if !t.Start.IsZero() {
		started = Clock(t.Start, d.Loc)
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
	fs := []field{
		{"state", string(t.State)},
		{"coordinator", "broker " + strconv.Itoa(int(t.Coordinator))},
		{"producer id", strconv.FormatInt(t.ProducerID, 10)},
		{"epoch", strconv.Itoa(int(t.ProducerEpoch))},
		{"started", started},
		{"timeout", timeout},
		{"partitions", strconv.Itoa(len(t.Partitions))},
		{"described", yes(t.Described)},
		{"last outcome", last},
		{"seen", fmt.Sprintf("%d commits · %d aborts", d.Stats.Commits, d.Stats.Aborts)},
	}
	if t.Outcome != "" {
		fs = append(fs, field{"log says", string(t.Outcome)})
	}
	if f, ok := model.ParseFlinkID(t.ID); ok {
		fs = append(fs, field{"flink sink", fmt.Sprintf("prefix %s · subtask %d · checkpoint %d", f.Prefix, f.Subtask, f.Checkpoint)})
	}
	return fs
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

func unlisted(ps []DetailPart) int {
	n := 0
	for _, p := range ps {
		if !p.Listed {
			n++
		}
	}
	return n
}

func partColumns() []Column[DetailPart] {
	known := func(p DetailPart, s string) string {
		if !p.Known {
			return "–"
		}
		return s
	}
	return []Column[DetailPart]{
		{Name: "PARTITION", Width: 14, Flex: true, Max: 30, Clip: ClipMiddle, Text: func(p DetailPart) string {
			return fmt.Sprintf("%s-%d", p.Topic, p.Partition)
		}},
		{Name: "LEADER", Width: 6, Right: true, Drop: 1, Text: func(p DetailPart) string {
			return known(p, strconv.Itoa(int(p.Part.Leader)))
		}},
		{Name: "HIGH WM", Width: 9, Right: true, Text: func(p DetailPart) string { return known(p, Offset(p.Part.HighWatermark)) }},
		{Name: "LSO", Width: 9, Right: true, Text: func(p DetailPart) string { return known(p, Offset(p.Part.LastStableOffset)) }},
		{Name: "HELD BACK", Width: 9, Right: true, Text: func(p DetailPart) string {
			if !p.Known || p.Part.HighWatermark < 0 || p.Part.LastStableOffset < 0 {
				return "–"
			}
			return Count(int(p.Part.HeldBack()))
		}, Style: func(p DetailPart, st *Styles) Ink {
			if p.Part.HeldBack() > 0 {
				return st.Warn
			}
			return st.Text
		}},
		{Name: "TXN START", Width: 9, Right: true, Text: func(p DetailPart) string {
			if !p.HasOwn {
				return "–"
			}
			return Offset(p.Own.CurrentTxnStartOffset)
		}},
		{Name: "LISTED", Width: 6, Text: func(p DetailPart) string {
			if p.Listed {
				return "yes"
			}
			return "NO"
		}, Style: func(p DetailPart, st *Styles) Ink {
			if p.Listed {
				return st.Text
			}
			return st.Danger
		}},
		{Name: "LSO PINNED BY", Width: 15, Flex: true, Text: pinnedBy, Style: func(p DetailPart, st *Styles) Ink {
			switch {
			case p.Abortable():
				return st.Danger
			case p.PinsLSO:
				return st.Warn
			}
			return st.Text
		}},
	}
}

func pinnedBy(p DetailPart) string {
	switch {
	case !p.Known && p.Part.Err == "":
		return "not read"
	case p.Part.Err != "":
		return "error: " + oneLine(p.Part.Err)
	}
	orphan := map[int64]bool{}
	for _, o := range p.Orphans {
		orphan[o.ProducerID] = true
	}
	var s string
	switch {
	case p.PinsLSO && orphan[p.Pinner.ProducerID]:
		s = "this pid, HANGING"
	case p.PinsLSO:
		s = "this txn"
	case p.HasPinner && orphan[p.Pinner.ProducerID]:
		s = fmt.Sprintf("pid %d, HANGING", p.Pinner.ProducerID)
	case p.HasPinner && p.PinnerID != "":
		s = fmt.Sprintf("pid %d (%s)", p.Pinner.ProducerID, p.PinnerID)
	case p.HasPinner:
		s = fmt.Sprintf("pid %d", p.Pinner.ProducerID)
	case p.Part.Pinned():
		s = "unknown producer"
	default:
		s = "nothing"
	}
	for _, o := range p.Orphans {
		if !p.HasPinner || o.ProducerID != p.Pinner.ProducerID {
			s += fmt.Sprintf(" · pid %d HANGING", o.ProducerID)
		}
	}
	return s
}

func partLine(cols []Column[DetailPart], p DetailPart, selected bool, w int, st Styles) string {
	mark := "   "
	switch {
	case p.Abortable():
		mark = "!! "
	case p.PinsLSO:
		mark = "!  "
	}
	if selected {
		return st.Selected.Render(Fit(mark+RowLine(cols, p, nil), w))
	}
	if p.Abortable() {
		mark = st.Danger.Render(mark)
	} else if p.PinsLSO {
		mark = st.Warn.Render(mark)
	}
	return mark + RowLine(cols, p, &st)
}

// paneProducers are the DescribeProducers rows worth showing for p: this
// transaction's producer first, then every producer with an open transaction.
func paneProducers(d DetailData, p DetailPart) []model.Producer {
	var out []model.Producer
	if p.HasOwn {
		out = append(out, p.Own)
	}
	for _, pr := range p.Part.Producers {
		if pr.ProducerID == d.Txn.ProducerID || pr.CurrentTxnStartOffset < 0 {
			continue
		}
		out = append(out, pr)
	}
	return out
}

type paneRow struct {
	pr   model.Producer
	who  string
	loc  *time.Location
	bad  bool
	mine bool
}

func paneColumns(pidWidth int) []Column[paneRow] {
	return []Column[paneRow]{
		{Name: "PRODUCER", Width: 24, Flex: true, Max: 48, Text: func(r paneRow) string { return r.who },
			Style: func(r paneRow, st *Styles) Ink {
				if r.bad {
					return st.Danger
				}
				return st.Text
			}},
		{Name: "PID", Width: max(10, pidWidth), Right: true, Text: func(r paneRow) string { return strconv.FormatInt(r.pr.ProducerID, 10) }},
		{Name: "EPOCH", Width: 5, Right: true, Text: func(r paneRow) string { return strconv.Itoa(int(r.pr.ProducerEpoch)) }},
		{Name: "LAST SEQ", Width: 8, Right: true, Text: func(r paneRow) string { return strconv.Itoa(int(r.pr.LastSequence)) }},
		{Name: "LAST WRITE", Width: 10, Right: true, Drop: 1, Text: func(r paneRow) string { return Clock(r.pr.LastTimestamp, r.loc) }},
		{Name: "COORD EPOCH", Width: 11, Right: true, Drop: 2, Text: func(r paneRow) string { return strconv.Itoa(int(r.pr.CoordinatorEpoch)) }},
		{Name: "TXN START", Width: 10, Right: true, Text: func(r paneRow) string { return Offset(r.pr.CurrentTxnStartOffset) }},
	}
}

func producerPane(d DetailData, w, h int, st Styles) string {
	p := d.Parts[min(max(d.Cursor, 0), len(d.Parts)-1)]
	title := fmt.Sprintf("── %s-%d", p.Topic, p.Partition)
	switch {
	case p.Known && p.Part.Leader >= 0:
		title += fmt.Sprintf(" · leader %d · producers (DescribeProducers) ", p.Part.Leader)
	case p.Known:
		title += " · leader unknown · producers (DescribeProducers) "
	default:
		title += " · not read "
	}
	lines := []string{st.Section.Render(Fit(title+repeatDash(w), w))}
	prs := paneProducers(d, p)
	pidWidth := 0
	for _, pr := range prs {
		pidWidth = max(pidWidth, len(strconv.FormatInt(pr.ProducerID, 10)))
	}
	cols := Layout(paneColumns(pidWidth), w-4)
	lines = append(lines, st.Section.Render("    "+HeaderLine(cols)))
	orphan := map[int64]bool{}
	for _, o := range p.Orphans {
		orphan[o.ProducerID] = true
	}
	if p.Part.Err != "" {
		lines = append(lines, st.Error.Render("    error: "+oneLine(p.Part.Err)))
	} else if len(prs) == 0 {
		lines = append(lines, st.Dim.Render("    no producer rows for this partition"))
	}
	hint := p.Abortable() && !d.ReadOnly
	rowsRoom := h - len(lines)
	if hint {
		rowsRoom--
	}
	for i, pr := range prs {
		if i >= rowsRoom {
			break
		}
		r := paneRow{pr: pr, loc: d.Loc, mine: pr.ProducerID == d.Txn.ProducerID}
		switch {
		case orphan[pr.ProducerID]:
			r.who, r.bad = "HANGING (no listed txn)", true
			if r.mine {
				r.who = "HANGING (this producer)"
			} else if id := p.Owners[pr.ProducerID]; id != "" {
				r.who = "HANGING (" + id + ")"
			}
		case r.mine:
			r.who = "this transaction"
		case p.Owners[pr.ProducerID] != "":
			r.who = p.Owners[pr.ProducerID]
		default:
			r.who = "unknown id"
		}
		mark := "    "
		if p.HasPinner && p.Pinner.ProducerID == pr.ProducerID && p.Pinner.CurrentTxnStartOffset == pr.CurrentTxnStartOffset {
			mark = "LSO "
		}
		lines = append(lines, st.Dim.Render(mark)+RowLine(cols, r, &st))
	}
	if hint {
		target, _ := p.AbortTarget(d.Txn.ProducerID)
		lines = append(lines, "   "+st.Key.Render("x")+st.Dim.Render(fmt.Sprintf(
			" abort producer %d's open transaction on this partition (WriteTxnMarkers)", target.ProducerID)))
	}
	return Block(lines, w, h)
}
