package ui

import (
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/txnscope/txnscope/views"
)

// Profile is the config file's context the UI runs in (the zero value:
// none, as with flags alone or the demo).
type Profile struct {
	Name  string
	Label string // shown in the header; Name when empty
	Color string // a colour name or #RRGGBB ("" for the default)
	// Protected: an action's confirmation is its word and Name.
	Protected bool
}

// cmdline is the command line that : opens in the footer. It knows ctx
// (switch context) and q; tab completes a context's name.
type cmdline struct {
	in   input
	hint string
}

// cmdCommands are what the command line takes.
var cmdCommands = []string{"ctx", "context", "q", "quit"}

func (m *Model) openCmdline() {
	m.cmd = &cmdline{in: input{prompt: ":", placeholder: "ctx NAME", limit: 80, focused: true}}
}

func (m *Model) updateCmdline(msg tea.Msg) tea.Cmd {
	c := m.cmd
	if kp, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(kp, m.keys.Cancel):
			m.cmd = nil
			return nil
		case kp.String() == "enter":
			m.cmd = nil
			return m.runCmdline(c.in.Value())
		case kp.String() == "tab":
			c.complete(m.o.Profiles)
			return nil
		}
	}
	c.in.Update(msg)
	c.hint = ""
	return nil
}

// complete fills in the command, or the context's name, as far as it is
// one of a kind; the candidates left are in the hint.
func (c *cmdline) complete(profiles []string) {
	v := c.in.Value()
	verb, arg, hasArg := strings.Cut(strings.TrimLeft(v, " "), " ")
	prefix, of := verb, cmdCommands
	if hasArg {
		prefix, of = strings.TrimSpace(arg), nil
		if verb == "ctx" || verb == "context" {
			of = profiles
		}
	}
	var match []string
	for _, s := range of {
		if strings.HasPrefix(s, prefix) {
			match = append(match, s)
		}
	}
	if len(match) == 0 {
		c.hint = "no match"
		return
	}
	common := match[0]
	for _, s := range match[1:] {
		for !strings.HasPrefix(s, common) {
			common = common[:len(common)-1]
		}
	}
	if len(match) == 1 {
		common += " "
	} else {
		c.hint = strings.Join(match, " ")
	}
	if hasArg {
		c.in.SetValue(verb + " " + common)
	} else {
		c.in.SetValue(common)
	}
}

// runCmdline does what was typed.
func (m *Model) runCmdline(line string) tea.Cmd {
	f := strings.Fields(line)
	if len(f) == 0 {
		return nil
	}
	switch f[0] {
	case "q", "quit":
		return m.quit()
	case "ctx", "context":
		if len(f) == 1 {
			m.listProfiles()
			return nil
		}
		if len(f) > 2 {
			m.setStatus(statusError, ":ctx takes one context's name")
			return nil
		}
		return m.switchProfile(f[1])
	}
	m.setStatus(statusError, "unknown command :"+f[0]+" (:ctx NAME switches context, :q quits)")
	return nil
}

func (m *Model) listProfiles() {
	if len(m.o.Profiles) == 0 {
		m.setStatus(statusInfo, "no contexts: txnscope config add NAME -b HOST:PORT writes one (docs/contexts.md)")
		return
	}
	names := slices.Clone(m.o.Profiles)
	for i, n := range names {
		if n == m.o.Profile.Name {
			names[i] = "*" + n
		}
	}
	m.setStatus(statusInfo, "contexts: "+strings.Join(names, " ")+"  (:ctx NAME switches)")
}

// switchProfile leaves for the context name: everything of this cluster goes
// with this program, and the next one starts on name's cluster, its own
// rules and audit log. Not while an action is on its way.
func (m *Model) switchProfile(name string) tea.Cmd {
	switch {
	case m.o.Switch == nil || len(m.o.Profiles) == 0:
		m.listProfiles()
		return nil
	case !slices.Contains(m.o.Profiles, name):
		m.setStatus(statusError, "no context "+name+" (have "+strings.Join(m.o.Profiles, ", ")+")")
		return nil
	case name == m.o.Profile.Name:
		m.setStatus(statusInfo, "already in context "+name)
		return nil
	case m.sending() || m.dialog != nil:
		m.setStatus(statusError, "an action is open: finish it before switching context")
		return nil
	}
	if err := m.o.Switch(name); err != nil {
		m.setStatus(statusError, "context "+name+": "+err.Error())
		return nil
	}
	m.switchedTo = name
	return m.quit()
}

// SwitchedTo is the context the operator switched to (:ctx), "" when the
// UI ended otherwise.
func (m *Model) SwitchedTo() string { return m.switchedTo }

// cmdlineView is the footer while the command line is open.
func (m *Model) cmdlineView(w int, st views.Styles) string {
	c := m.cmd
	hint := c.hint
	if hint == "" {
		hint = "tab completes · enter runs · esc cancels"
	}
	hint = views.Clip(hint, w/2)
	return views.Spread(c.in.View(w-ansi.StringWidth(hint)-1, st), st.Dim.Render(hint), w)
}
