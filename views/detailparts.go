package views

import (
	"fmt"
	"strconv"

	"github.com/txnscope/txnscope/model"
)

func unlisted(ps []model.TxnPartition) int {
	n := 0
	for _, p := range ps {
		if !p.Listed {
			n++
		}
	}
	return n
}

// partColumns are the detail's partition table: offsets, how much a
// read_committed consumer cannot see yet, and who holds the LSO.
func partColumns() []Column[model.TxnPartition] {
	known := func(p model.TxnPartition, s string) string {
		if !p.Known {
			return "–"
		}
		return s
	}
	// offsets the principal may not read say so instead of a number.
	offset := func(p model.TxnPartition, s string) string {
		if p.Known && p.Part.OffsetsDenied {
			return noPerm
		}
		return known(p, s)
	}
	return []Column[model.TxnPartition]{
		{Name: "PARTITION", Width: 14, Flex: true, Max: 30, Clip: ClipMiddle, Text: func(p model.TxnPartition) string {
			return partName(p.Topic, p.Partition)
		}},
		{Name: "LEADER", Width: 6, Right: true, Drop: 1, Text: func(p model.TxnPartition) string {
			if p.Part.Leader < 0 {
				return "–" // unknown (metadata refused or failed), not broker -1
			}
			return known(p, strconv.Itoa(int(p.Part.Leader)))
		}},
		{Name: "HIGH WM", Width: 9, Right: true, Text: func(p model.TxnPartition) string { return offset(p, Offset(p.Part.HighWatermark)) }},
		{Name: "LSO", Width: 9, Right: true, Text: func(p model.TxnPartition) string { return offset(p, Offset(p.Part.LastStableOffset)) }},
		{Name: "HELD BACK", Width: 9, Right: true, Text: func(p model.TxnPartition) string {
			if !p.Known || p.Part.HighWatermark < 0 || p.Part.LastStableOffset < 0 {
				return offset(p, "–")
			}
			return Count(int(p.Part.HeldBack()))
		}, Style: func(p model.TxnPartition, st *Styles) Ink {
			if p.Part.HeldBack() > 0 {
				return st.Warn
			}
			return st.Text
		}},
		{Name: "TXN START", Width: 9, Right: true, Text: func(p model.TxnPartition) string {
			if p.Known && p.Part.ProducersDenied {
				return noPerm
			}
			if !p.HasOwn {
				return "–"
			}
			return Offset(p.Own.CurrentTxnStartOffset)
		}},
		{Name: "LISTED", Width: 6, Text: func(p model.TxnPartition) string {
			if p.Listed {
				return "yes"
			}
			return "NO"
		}, Style: func(p model.TxnPartition, st *Styles) Ink {
			if p.Listed {
				return st.Text
			}
			return st.Danger
		}},
		{Name: "LSO PINNED BY", Width: 14, Flex: true, Text: pinnedBy, Style: func(p model.TxnPartition, st *Styles) Ink {
			switch {
			case model.Denied(p.Part.Err), p.Abortable() && p.MaybeOnly():
				return st.Warn
			case p.Abortable():
				return st.Danger
			case p.PinsLSO:
				return st.Warn
			}
			return st.Text
		}},
	}
}

func pinnedBy(p model.TxnPartition) string {
	switch {
	case !p.Known && p.Part.Err == "":
		return "not read"
	case p.Part.Err != "":
		return errLine(p.Part.Err)
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
	case p.HasPinner && orphan[p.Pinner.ProducerID] && p.MaybeHidden(p.Pinner.ProducerID):
		s = fmt.Sprintf("pid %d, %s", p.Pinner.ProducerID, model.OwnerMaybeHidden)
	case p.HasPinner && orphan[p.Pinner.ProducerID]:
		s = fmt.Sprintf("pid %d, HANGING", p.Pinner.ProducerID)
	case p.HasPinner && p.PinnerID != "":
		s = fmt.Sprintf("pid %d (%s)", p.Pinner.ProducerID, name(p.PinnerID))
	case p.HasPinner:
		s = fmt.Sprintf("pid %d", p.Pinner.ProducerID)
	case p.Part.Pinned():
		s = "unknown producer"
	default:
		s = "nothing"
	}
	for _, o := range p.Orphans {
		switch {
		case p.HasPinner && o.ProducerID == p.Pinner.ProducerID:
		case p.MaybeHidden(o.ProducerID):
			s += fmt.Sprintf(" · pid %d possibly hanging", o.ProducerID)
		default:
			s += fmt.Sprintf(" · pid %d HANGING", o.ProducerID)
		}
	}
	return s
}

// noPerm stands in a narrow column for a value the principal may not read;
// the row's wide column says why.
const noPerm = "no perm"

// errLine is a partition's or id's problem in one line: a missing
// permission as it is (it starts with "no permission"), anything else as
// an error.
func errLine(err string) string {
	if model.Denied(err) {
		return oneLine(err)
	}
	return "error: " + oneLine(err)
}

func partLine(cols []Column[model.TxnPartition], p model.TxnPartition, selected bool, w int, st Styles) string {
	mark := "   "
	switch {
	case p.Abortable() && p.MaybeOnly():
		mark = "?  "
	case p.Abortable():
		mark = "!! "
	case p.PinsLSO:
		mark = "!  "
	}
	if selected {
		return st.Selected.Render(Fit(cursorMark(true)+mark+RowLine(cols, p, nil), w))
	}
	switch {
	case p.Abortable() && !p.MaybeOnly():
		mark = st.Danger.Render(mark)
	case p.Abortable(), p.PinsLSO:
		mark = st.Warn.Render(mark)
	}
	return cursorMark(false) + mark + RowLine(cols, p, &st)
}
