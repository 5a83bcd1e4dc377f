package views

import (
	"fmt"
	"strconv"
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
