package views

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/txnscope/txnscope/model"
)

// PartitionsData is the partitions view: every partition whose LSO is below its
// high watermark. Rows are indices into Pins in display order (Pins is
// already sorted longest pinned first); only the visible window is drawn.
type PartitionsData struct {
	Pins   []model.Pin
	Rows   []int
	Cursor int
	Top    int
	Now    time.Time
	// Group, when set, is the consumer group the rows were narrowed to; Text
	// the filter applied; Input the filter being typed, already rendered.
	Group   string
	Text    string
	Input   string
	Scanned int
	Unread  int
	Empty   string
}

// PinRow is one line of the partitions view.
type PinRow struct {
	Pin *model.Pin
	Now time.Time
}

// PinSince is how long a partition has been pinned; ≥ when it already was
// in txnscope's first snapshot.
func PinSince(p *model.Pin, now time.Time) string {
	s := Dur(p.PinnedFor(now))
	if p.AtLeast {
		return "≥" + s
	}
	return s
}

// PinOwner names who holds a pin, in words that fit a column.
func PinOwner(p *model.Pin) string {
	switch {
	case !p.HasPinner && p.ProducersDenied:
		return model.NoPermission + ": producers" // the detail says which ACL
	case !p.HasPinner && p.Err != "":
		return errLine(p.Err)
	case !p.HasPinner:
		return "unknown producer"
	case !p.HasOwner && p.OwnersHidden:
		return "no visible id (ACLs?)" // the detail says why
	case !p.HasOwner:
		return "no transactional id"
	case !p.Blocking:
		return name(p.Owner.ID) + " (not holding)"
	}
	return name(p.Owner.ID)
}

// PinColumns are the partitions view's columns, in order.
func PinColumns() []Column[PinRow] {
	return []Column[PinRow]{
		{Name: "PARTITION", Width: 14, Flex: true, Max: 36, Clip: ClipMiddle, Text: func(r PinRow) string {
			return partName(r.Pin.Topic, r.Pin.TopicPartition.Partition)
		}},
		{Name: "LEADER", Width: 6, Right: true, Drop: 1, Text: func(r PinRow) string { return strconv.Itoa(int(r.Pin.Leader)) }},
		{Name: "HIGH WM", Width: 9, Right: true, Drop: 5, Text: func(r PinRow) string { return Offset(r.Pin.HighWatermark) }},
		{Name: "LSO", Width: 9, Right: true, Drop: 6, Text: func(r PinRow) string { return Offset(r.Pin.LastStableOffset) }},
		{Name: "HELD BACK", Width: 9, Right: true, Text: func(r PinRow) string { return Count(int(r.Pin.HeldBack())) },
			Style: func(_ PinRow, st *Styles) Ink { return st.Warn }},
		{Name: "PINNED", Width: 7, Right: true, Text: func(r PinRow) string { return PinSince(r.Pin, r.Now) }},
		{Name: pidColumn, Width: 11, Right: true, Drop: 3, Text: func(r PinRow) string {
			if !r.Pin.HasPinner {
				return "–"
			}
			return fmt.Sprintf("%d/%d", r.Pin.Pinner.ProducerID, r.Pin.Pinner.ProducerEpoch)
		}},
		{Name: "TRANSACTIONAL ID", Width: 24, Flex: true, Max: 44, Clip: ClipMiddle, Text: func(r PinRow) string { return PinOwner(r.Pin) },
			Style: func(r PinRow, st *Styles) Ink {
				switch {
				case r.Pin.Hanging:
					return st.Danger
				case !r.Pin.Blocking, model.Denied(r.Pin.Err):
					return st.Warn
				}
				return st.Text
			}},
		{Name: "STATE", Width: 17, Drop: 2, Text: func(r PinRow) string {
			if !r.Pin.HasOwner {
				return "–"
			}
			return stateName(r.Pin.Owner.State)
		}, Style: func(r PinRow, st *Styles) Ink { return StateStyle(r.Pin.Owner.State, st) }},
		{Name: "AGE/TIMEOUT", Width: 11, Flex: true, Max: 22, Drop: 4, Text: func(r PinRow) string {
			if !r.Pin.Blocking {
				return "–"
			}
			return ratioText(Row{Txn: &r.Pin.Owner, Now: r.Now})
		}, Cell: func(r PinRow, w int, st *Styles) string {
			if !r.Pin.Blocking {
				return pad("–", w, true)
			}
			return gaugeCell(Row{Txn: &r.Pin.Owner, Now: r.Now}, w, st)
		}},
		{Name: "GROUPS", Width: 6, Right: true, Text: func(r PinRow) string {
			if len(r.Pin.Stuck) == 0 {
				return ""
			}
			return strconv.Itoa(len(r.Pin.Stuck))
		}, Style: func(_ PinRow, st *Styles) Ink { return st.Danger }},
	}
}

// PinMarker is the two-cell sign in front of a partition: H! hanging, H?
// possibly hanging (its owner may be hidden by ACLs), !! consumer groups
// stuck behind it, ! no transaction holds it, ? who holds it is unknown
// (no permission to read its producers).
func PinMarker(p *model.Pin) string {
	switch {
	case p.Hanging:
		return "H!"
	case p.MaybeHanging:
		return "H?"
	case len(p.Stuck) > 0:
		return "!!"
	case !p.HasPinner && p.ProducersDenied:
		return "? "
	case !p.Blocking:
		return "! "
	}
	return "  "
}

// Partitions draws the partitions view in exactly w×h: column titles, the visible
// rows and a status line.
func Partitions(d PartitionsData, w, h int, st Styles) string {
	if h <= 0 || w <= 0 {
		return ""
	}
	all := PinColumns()
	pidW := 0
	for _, i := range d.Rows {
		if p := &d.Pins[i]; p.HasPinner {
			pidW = max(pidW, len(strconv.FormatInt(p.Pinner.ProducerID, 10))+1+len(strconv.Itoa(int(p.Pinner.ProducerEpoch))))
		}
	}
	for i := range all {
		if all[i].Name == pidColumn {
			all[i].Width = max(all[i].Width, min(pidW, 24)) // kfake hands out 19-digit producer ids
		}
	}
	cols := Layout(all, w-markerWidth)
	lines := make([]string, 0, h)
	lines = append(lines, st.Section.Render(Fit(markerPad+HeaderLine(cols), w)))
	n := ListRows(h)
	if len(d.Rows) == 0 && n > 0 {
		lines = append(lines, Lines(Center([]string{st.Dim.Render(d.Empty)}, w, n))...)
	}
	for i := d.Top; i < d.Top+n && i < len(d.Rows) && i >= 0; i++ {
		p := &d.Pins[d.Rows[i]]
		lines = append(lines, pinLine(cols, PinRow{Pin: p, Now: d.Now}, i == d.Cursor, w, &st))
	}
	for len(lines) < h-1 {
		lines = append(lines, "")
	}
	lines = append(lines[:h-1], partitionsStatus(d, w, st))
	return Block(lines, w, h)
}

func pinLine(cols []Column[PinRow], r PinRow, selected bool, w int, st *Styles) string {
	mark := PinMarker(r.Pin)
	if selected {
		return st.Selected.Render(Fit(cursorMark(true)+mark+" "+RowLine(cols, r, nil), w))
	}
	switch mark {
	case "H!", "!!":
		mark = st.Danger.Render(mark)
	case "! ", "H?", "? ":
		mark = st.Warn.Render(mark)
	}
	return Fit(cursorMark(false)+mark+" "+RowLine(cols, r, st), w)
}

func partitionsStatus(d PartitionsData, w int, st Styles) string {
	left := st.Dim.Render("sort ") + st.Text.Render("pinned longest")
	if d.Group != "" {
		left = st.Dim.Render("blocking group ") + st.Text.Render(name(d.Group)) + st.Dim.Render(" · esc shows all")
	}
	if d.Text != "" {
		left += st.Dim.Render(" · filter ") + st.Text.Render("/"+d.Text)
	}
	if d.Input != "" {
		left = d.Input
	}
	hanging, maybe := 0, 0
	for _, i := range d.Rows {
		switch {
		case d.Pins[i].Hanging:
			hanging++
		case d.Pins[i].MaybeHanging:
			maybe++
		}
	}
	var right []string
	if hanging > 0 {
		right = append(right, st.Danger.Render(Count(hanging)+" HANGING"))
	}
	if maybe > 0 {
		right = append(right, st.Warn.Render(Count(maybe)+" possibly hanging"))
	}
	count := Count(len(d.Rows)) + " pinned"
	if d.Scanned > 0 && d.Group == "" {
		count += " of " + Count(d.Scanned) + " partitions"
	}
	right = append(right, st.Dim.Render(count))
	if d.Unread > 0 {
		right = append(right, st.Error.Render(Count(d.Unread)+" unread"))
	}
	return Spread(left, strings.Join(right, st.Dim.Render(" · ")), w)
}
