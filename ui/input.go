package ui

import (
	"strings"
	"unicode"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/txnscope/txnscope/views"
)

// input is a one-line text field for the filter and the abort confirmation.
// (bubbles/textinput would pull in a clipboard module this repository does not
// carry; these two fields need only typing, deleting and pasting.)
type input struct {
	prompt      string
	placeholder string
	limit       int
	value       []rune
	focused     bool
}

func (in *input) Value() string     { return string(in.value) }
func (in *input) SetValue(s string) { in.value = []rune(in.clean(s)) }
func (in *input) Focus()            { in.focused = true }
func (in *input) Blur()             { in.focused = false }

// clean keeps printable characters only, up to the limit.
func (in *input) clean(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		if unicode.IsSpace(r) {
			return ' '
		}
		return -1
	}, s)
	if in.limit > 0 {
		if r := []rune(s); len(r) > in.limit {
			s = string(r[:in.limit])
		}
	}
	return s
}

func (in *input) insert(s string) {
	room := in.limit - len(in.value)
	add := []rune(in.clean(s))
	if in.limit > 0 && len(add) > room {
		add = add[:max(room, 0)]
	}
	in.value = append(in.value, add...)
}

// Update edits the value; keys it does not know are ignored.
func (in *input) Update(msg tea.Msg) {
	if !in.focused {
		return
	}
	switch msg := msg.(type) {
	case tea.PasteMsg:
		in.insert(msg.Content)
	case tea.KeyPressMsg:
		switch msg.String() {
		case "backspace", "ctrl+h":
			if n := len(in.value); n > 0 {
				in.value = in.value[:n-1]
			}
		case "ctrl+u":
			in.value = in.value[:0]
		case "ctrl+w", "alt+backspace":
			v := strings.TrimRight(string(in.value), " ")
			if i := strings.LastIndexByte(v, ' '); i >= 0 {
				v = v[:i+1]
			} else {
				v = ""
			}
			in.value = []rune(v)
		case "space":
			in.insert(" ")
		default:
			if msg.Text != "" && msg.Mod&^tea.ModShift == 0 {
				in.insert(msg.Text)
			}
		}
	}
}

// View draws prompt, value and a block cursor in at most w cells, keeping the
// end of a long value in sight.
func (in *input) View(w int, st views.Styles) string {
	prompt := st.Key.Render(in.prompt)
	room := w - ansi.StringWidth(in.prompt) - 1
	if room < 1 {
		return views.Fit(prompt, w)
	}
	cursor := ""
	if in.focused {
		cursor = lipgloss.NewStyle().Reverse(true).Render(" ")
	}
	if len(in.value) == 0 {
		return prompt + cursor + st.Dim.Render(views.Clip(in.placeholder, room))
	}
	v := string(in.value)
	if ansi.StringWidth(v) > room {
		v = "…" + ansi.TruncateLeft(v, ansi.StringWidth(v)-room+1, "")
	}
	return prompt + st.Text.Render(v) + cursor
}
