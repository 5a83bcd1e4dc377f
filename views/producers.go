package views

import (
	"fmt"
	"strconv"
	"time"

	"github.com/txnscope/txnscope/model"
)

// paneProducers are the DescribeProducers rows worth showing for p: this
// transaction's producer first, then every producer with an open transaction.
func paneProducers(d DetailData, p model.TxnPartition) []model.Producer {
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
	pr    model.Producer
	who   string
	loc   *time.Location
	bad   bool
	maybe bool // possibly hanging: its owner may be hidden by ACLs
	mine  bool
}

// possiblyHanging labels a producer no visible transaction owns while ACLs
// hide some ids.
const possiblyHanging = "possibly hanging (ACLs)"

func paneColumns(pidWidth int) []Column[paneRow] {
	return []Column[paneRow]{
		{Name: "PRODUCER", Width: 24, Flex: true, Max: 48, Text: func(r paneRow) string { return r.who },
			Style: func(r paneRow, st *Styles) Ink {
				switch {
				case r.bad:
					return st.Danger
				case r.maybe:
					return st.Warn
				}
				return st.Text
			}},
		{Name: "PID", Width: max(10, pidWidth), Right: true, Text: func(r paneRow) string { return strconv.FormatInt(r.pr.ProducerID, 10) }},
		{Name: "EPOCH", Width: 5, Right: true, Text: func(r paneRow) string { return strconv.Itoa(int(r.pr.ProducerEpoch)) }},
		{Name: "LAST SEQ", Width: 8, Right: true, Text: func(r paneRow) string { return strconv.Itoa(int(r.pr.LastSequence)) }},
		{Name: "LAST WRITE", Width: 10, Right: true, Drop: 1, Text: func(r paneRow) string { return Clock(r.pr.LastTimestamp(), r.loc) }},
		{Name: "COORD EPOCH", Width: 11, Right: true, Drop: 2, Text: func(r paneRow) string { return strconv.Itoa(int(r.pr.CoordinatorEpoch)) }},
		{Name: "TXN START", Width: 10, Right: true, Text: func(r paneRow) string { return Offset(r.pr.CurrentTxnStartOffset) }},
	}
}

func producerPane(d DetailData, w, h int, st Styles) string {
	p := d.Parts[min(max(d.Cursor, 0), len(d.Parts)-1)]
	title := "── " + partName(p.Topic, p.Partition)
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
	switch {
	case model.Denied(p.Part.Err):
		lines = append(lines, st.Warn.Render("    "+oneLine(p.Part.Err)))
	case p.Part.Err != "":
		lines = append(lines, st.Error.Render("    error: "+oneLine(p.Part.Err)))
	case len(prs) == 0:
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
		case orphan[pr.ProducerID] && !r.mine && p.MaybeHidden(pr.ProducerID):
			r.who, r.maybe = possiblyHanging, true
		case orphan[pr.ProducerID]:
			r.who, r.bad = "HANGING (no listed txn)", true
			if r.mine {
				r.who = "HANGING (this producer)"
			} else if id := p.Owners[pr.ProducerID]; id != "" {
				r.who = "HANGING (" + name(id) + ")"
			}
		case r.mine:
			r.who = "this transaction"
		case p.Owners[pr.ProducerID] != "":
			r.who = name(p.Owners[pr.ProducerID])
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
		lines = append(lines, abortHint(target.ProducerID, target.ProducerID != d.Txn.ProducerID && p.MaybeHidden(target.ProducerID), st))
	}
	return Block(lines, w, h)
}

// abortHint offers x on a hanging producer; one whose owner may be hidden by
// ACLs is offered with the warning that the abort will be refused.
func abortHint(pid int64, maybe bool, st Styles) string {
	if maybe {
		return "   " + st.Key.Render("x") + st.Warn.Render(fmt.Sprintf(
			" abort producer %d here: refused while its owner may be hidden by ACLs", pid))
	}
	return "   " + st.Key.Render("x") + st.Dim.Render(fmt.Sprintf(
		" abort producer %d's open transaction on this partition (WriteTxnMarkers)", pid))
}
