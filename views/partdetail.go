package views

import (
	"fmt"
	"strconv"
	"time"

	"github.com/txnscope/txnscope/internal/escape"
	"github.com/txnscope/txnscope/model"
)

// PartitionDetailData is one pinned partition that no transaction holds: what
// pins it, why it is judged hanging, its producers and the groups waiting.
type PartitionDetailData struct {
	Pin model.Pin
	// Gone is set when the partition is no longer pinned: the last state seen
	// is shown.
	Gone    bool
	Orphans []model.Producer
	Owners  map[int64]string // transactional.id per producer id
	Now     time.Time
	Loc     *time.Location
	// CanAbort offers x: there is a hanging producer and the session may act.
	CanAbort bool
	Target   model.Producer // what x would abort
}

// PartitionDetail draws it in exactly w×h.
func PartitionDetail(d PartitionDetailData, w, h int, st Styles) string {
	if h <= 0 || w <= 0 {
		return ""
	}
	lines := partDetailHead(d, w, st)
	lines = append(lines, partDetailProducers(d, w, st)...)
	lines = append(lines, partDetailGroups(d.Pin.Stuck, w, st)...)
	if d.CanAbort {
		lines = append(lines, "", abortHint(d.Target.ProducerID, d.Pin.OwnersHidden && d.Owners[d.Target.ProducerID] == "", st))
	}
	return Block(lines, w, h)
}

// partDetailHead is the partition's title, its fields and why it is judged
// (possibly) hanging.
func partDetailHead(d PartitionDetailData, w int, st Styles) []string {
	p := &d.Pin
	var lines []string
	add := func(s string) { lines = append(lines, s) }
	title := " " + st.Bold.Render(partName(p.Topic, p.TopicPartition.Partition))
	switch {
	case p.Hanging:
		title += "  " + st.Danger.Render("HANGING")
	case p.MaybeHanging:
		title += "  " + st.Warn.Render("POSSIBLY HANGING: its owner may be hidden by ACLs")
	case !p.HasPinner && p.ProducersDenied:
		title += "  " + st.Warn.Render("pinned; who holds it is unknown: no permission to read the producers")
	case !p.Blocking:
		title += "  " + st.Warn.Render("pinned, no transaction holds it")
	default:
		title += "  " + st.Warn.Render("pinned")
	}
	add(title)
	if d.Gone {
		add(" " + st.Good.Render("no longer pinned: showing the last state seen"))
	}
	since := PinSince(p, d.Now) + " (since " + Clock(p.Since, d.Loc) + ")"
	fs := []field{
		{"leader", "broker " + strconv.Itoa(int(p.Leader))},
		{"high wm", Offset(p.HighWatermark)},
		{"LSO", Offset(p.LastStableOffset)},
		{"held back", Count(int(p.HeldBack())) + " records"},
		{"pinned for", since},
		{"pinned by", pinnedByText(p, d.Now, d.Loc)},
		{"owner", ownerText(p)},
	}
	for _, pair := range pairs(fs, w) {
		add(pair)
	}
	switch {
	case model.Denied(p.Err):
		for _, l := range Wrap(oneLine(p.Err), max(w-2, 10)) {
			add(" " + st.Warn.Render(l))
		}
	case p.Err != "":
		add(" " + st.Error.Render("error: "+oneLine(p.Err)))
	}
	reasons := func(lines []string, sign string, ink Ink) {
		for _, why := range lines {
			for i, l := range Wrap(escape.Text(why), max(w-5, 10)) {
				prefix := "   " + sign + " "
				if i > 0 {
					prefix = "     "
				}
				add(ink.Render(prefix + l))
			}
		}
	}
	reasons(p.Why, "!", st.Danger)
	reasons(p.Maybe, "?", st.Warn)
	return append(lines, "")
}

// partDetailProducers are the partition's producers, the one at the LSO marked.
func partDetailProducers(d PartitionDetailData, w int, st Styles) []string {
	p := &d.Pin
	var lines []string
	add := func(s string) { lines = append(lines, s) }
	add(st.Section.Render(" PRODUCERS (DescribeProducers)"))
	prs := p.Producers
	pidWidth := 0
	for _, pr := range prs {
		pidWidth = max(pidWidth, len(strconv.FormatInt(pr.ProducerID, 10)))
	}
	pcols := Layout(paneColumns(pidWidth), w-4)
	add(st.Section.Render("    " + HeaderLine(pcols)))
	switch {
	case p.ProducersDenied:
		add(st.Warn.Render("    " + model.NoPermission + " to read the producers (" + needProducersACL + ")"))
	case len(prs) == 0:
		add(st.Dim.Render("    no producer rows for this partition"))
	}
	orphan := map[int64]bool{}
	for _, o := range d.Orphans {
		orphan[o.ProducerID] = true
	}
	for _, pr := range prs {
		r := paneRow{pr: pr, loc: d.Loc, who: name(d.Owners[pr.ProducerID])}
		switch {
		case orphan[pr.ProducerID] && r.who == "" && p.OwnersHidden:
			r.who, r.maybe = possiblyHanging, true
		case orphan[pr.ProducerID] && r.who != "":
			r.who, r.bad = "HANGING ("+r.who+")", true
		case orphan[pr.ProducerID]:
			r.who, r.bad = "HANGING (no listed txn)", true
		case pr.CurrentTxnStartOffset < 0 && r.who == "":
			r.who = "no open transaction"
		case r.who == "":
			r.who = "unknown id"
		}
		mark := "    "
		if p.HasPinner && p.Pinner.ProducerID == pr.ProducerID {
			mark = "LSO "
		}
		add(st.Dim.Render(mark) + RowLine(pcols, r, &st))
	}
	return append(lines, "")
}

// partDetailGroups are the consumer groups waiting at the partition's LSO.
func partDetailGroups(stuck []model.StuckGroup, w int, st Styles) []string {
	lines := []string{st.Section.Render(fmt.Sprintf(" CONSUMER GROUPS STUCK AT THE LSO (%d)", len(stuck)))}
	if len(stuck) == 0 {
		return append(lines, st.Dim.Render("    none has its committed offset at this LSO"))
	}
	gcols := Layout(stuckColumns(), w-4)
	lines = append(lines, st.Section.Render("    "+HeaderLine(gcols)))
	for _, g := range stuck {
		lines = append(lines, "    "+RowLine(gcols, g, &st))
	}
	return lines
}

// needProducersACL is what DescribeProducers asks of the principal.
const needProducersACL = "DescribeProducers needs READ on the topic"

func pinnedByText(p *model.Pin, now time.Time, loc *time.Location) string {
	switch {
	case !p.HasPinner && p.ProducersDenied:
		return "unknown: " + model.NoPermission + " to read the producers"
	case !p.HasPinner:
		return "unknown (no producer's transaction starts at the LSO)"
	}
	pr := p.Pinner
	s := fmt.Sprintf("producer %d epoch %d", pr.ProducerID, pr.ProducerEpoch)
	if pr.LastWriteMs != 0 {
		s += fmt.Sprintf(" · last write %s (%s ago)", Clock(pr.LastTimestamp(), loc), Dur(now.Sub(pr.LastTimestamp())))
	}
	return s
}

func ownerText(p *model.Pin) string {
	switch {
	case !p.HasPinner:
		return "–"
	case !p.HasOwner && p.OwnersHidden:
		return "none visible: ACLs hide some transactional ids, it may be one of them"
	case !p.HasOwner:
		return "no transactional id owns this producer"
	case !p.Blocking:
		return fmt.Sprintf("%s (%s, epoch %d) does not hold this partition", name(p.Owner.ID), stateName(p.Owner.State), p.Owner.ProducerEpoch)
	}
	return fmt.Sprintf("%s (%s)", name(p.Owner.ID), stateName(p.Owner.State))
}

func stuckColumns() []Column[model.StuckGroup] {
	return []Column[model.StuckGroup]{
		{Name: "GROUP", Width: 16, Flex: true, Max: 40, Clip: ClipMiddle, Text: func(g model.StuckGroup) string { return name(g.Group) }},
		{Name: "STATE", Width: 11, Drop: 1, Text: func(g model.StuckGroup) string { return name(g.State) }},
		{Name: "COMMITTED", Width: 10, Right: true, Text: func(g model.StuckGroup) string { return Offset(g.Committed) }},
		{Name: "LAG TO LSO", Width: 10, Right: true, Text: func(g model.StuckGroup) string { return Count(int(g.LagLSO)) }},
		{Name: "LAG TO HWM", Width: 10, Right: true, Text: func(g model.StuckGroup) string { return Count(int(g.LagHWM)) },
			Style: func(_ model.StuckGroup, st *Styles) Ink { return st.Warn }},
	}
}
