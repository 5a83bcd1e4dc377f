package views

import (
	"strings"
)

// Column is one column of a table of R.
type Column[R any] struct {
	Name  string
	Width int // cells; a Flex column's minimum
	Right bool
	// Drop orders which columns give way on a narrow terminal: the lowest
	// goes first; 0 never goes.
	Drop int
	// Flex columns share the width left over, in order, each up to Max (0 = no limit).
	Flex bool
	Max  int
	// Text is the plain text of a cell (also what `snapshot -o table` prints).
	Text func(r R) string
	// Clip shortens a too-long Text; nil cuts at the end with an ellipsis.
	Clip func(s string, w int) string
	// Style colours a cell; nil leaves it plain.
	Style func(r R, st *Styles) Ink
	// Cell, when set, draws the cell itself in exactly w cells; st is nil when
	// the cell must stay unstyled (the cursor row).
	Cell func(r R, w int, st *Styles) string
}

// Layout keeps the columns that fit in w cells (one space between columns) and
// hands the width left over to the Flex columns.
func Layout[R any](cols []Column[R], w int) []Column[R] {
	keep := append([]Column[R](nil), cols...)
	for width(keep) > w {
		drop := -1
		for i, c := range keep {
			if c.Drop > 0 && (drop < 0 || c.Drop < keep[drop].Drop) {
				drop = i
			}
		}
		if drop < 0 {
			break
		}
		keep = append(keep[:drop], keep[drop+1:]...)
	}
	spare := w - width(keep)
	for i := range keep {
		if spare <= 0 {
			break
		}
		if !keep[i].Flex {
			continue
		}
		add := spare
		if keep[i].Max > 0 && keep[i].Width+add > keep[i].Max {
			add = max(0, keep[i].Max-keep[i].Width)
		}
		keep[i].Width += add
		spare -= add
	}
	return keep
}

func width[R any](cols []Column[R]) int {
	w := 0
	for i, c := range cols {
		if i > 0 {
			w++
		}
		w += c.Width
	}
	return w
}

// HeaderLine is the column titles.
func HeaderLine[R any](cols []Column[R]) string {
	var b strings.Builder
	for i, c := range cols {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(pad(Clip(c.Name, c.Width), c.Width, c.Right))
	}
	return b.String()
}

// RowLine draws one row; st nil draws it without any styling.
func RowLine[R any](cols []Column[R], r R, st *Styles) string {
	var b strings.Builder
	for i, c := range cols {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(cell(c, r, st))
	}
	return b.String()
}

func cell[R any](c Column[R], r R, st *Styles) string {
	if c.Cell != nil {
		return Fit(c.Cell(r, c.Width, st), c.Width)
	}
	s := c.Text(r)
	if c.Clip != nil {
		s = c.Clip(s, c.Width)
	} else {
		s = Clip(s, c.Width)
	}
	s = pad(s, c.Width, c.Right)
	if st != nil && c.Style != nil {
		return c.Style(r, st).Render(s)
	}
	return s
}
