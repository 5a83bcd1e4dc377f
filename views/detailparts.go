package views

import (
	"fmt"
	"strconv"

	"github.com/txnscope/txnscope/model"
)

func unlisted(ps []DetailPart) int {
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
func partColumns() []Column[DetailPart] {
	known := func(p DetailPart, s string) string {
		if !p.Known {
			return "–"
		}
		return s
	}
	// offsets the principal may not read say so instead of a number.
	offset := func(p DetailPart, s string) string {
		if p.Known && p.Part.OffsetsDenied {
			return noPerm
		}
		return known(p, s)
	}
	return []Column[DetailPart]{
		{Name: "PARTITION", Width: 14, Flex: true, Max: 30, Clip: ClipMiddle, Text: func(p DetailPart) string {
			return partName(p.Topic, p.Partition)
		}},
		{Name: "LEADER", Width: 6, Right: true, Drop: 1, Text: func(p DetailPart) string {
			if p.Part.Leader < 0 {
				return "–" // unknown (metadata refused or failed), not broker -1
			}
			return known(p, strconv.Itoa(int(p.Part.Leader)))
		}},
		{Name: "HIGH WM", Width: 9, Right: true, Text: func(p DetailPart) string { return offset(p, Offset(p.Part.HighWatermark)) }},
		{Name: "LSO", Width: 9, Right: true, Text: func(p DetailPart) string { return offset(p, Offset(p.Part.LastStableOffset)) }},
		{Name: "HELD BACK", Width: 9, Right: true, Text: func(p DetailPart) string {
			if !p.Known || p.Part.HighWatermark < 0 || p.Part.LastStableOffset < 0 {
				return offset(p, "–")
			}
			return Count(int(p.Part.HeldBack()))
		}, Style: func(p DetailPart, st *Styles) Ink {
			if p.Part.HeldBack() > 0 {
				return st.Warn
			}
			return st.Text
		}},
		{Name: "TXN START", Width: 9, Right: true, Text: func(p DetailPart) string {
			if p.Known && p.Part.ProducersDenied {
				return noPerm
			}
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
		{Name: "LSO PINNED BY", Width: 14, Flex: true, Text: pinnedBy, Style: func(p DetailPart, st *Styles) Ink {
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

func pinnedBy(p DetailPart) string {
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
	case p.HasPinner && orphan[p.Pinner.ProducerID] && p.maybe(p.Pinner.ProducerID):
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
		case p.maybe(o.ProducerID):
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

// maybe reports whether pid, open here with no listed transaction
// accounting for it, may belong to a transactional id ACLs hide from us:
// none we can see owns it, and some are hidden.
func (p DetailPart) maybe(pid int64) bool { return p.Part.OwnersHidden && p.Owners[pid] == "" }

// MaybeOnly reports whether every hanging candidate here may be owned by an
// id ACLs hide: possibly hanging, and an abort would be refused.
func (p DetailPart) MaybeOnly() bool {
	for _, o := range p.Orphans {
		if !p.maybe(o.ProducerID) {
			return false
		}
	}
	return len(p.Orphans) > 0
}

func partLine(cols []Column[DetailPart], p DetailPart, selected bool, w int, st Styles) string {
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
