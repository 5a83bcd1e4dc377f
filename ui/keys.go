package ui

import (
	"charm.land/bubbles/v2/key"

	"github.com/txnscope/txnscope/views"
)

// keyMap is every key txnscope reacts to; the help screen and the footer are
// generated from these same bindings, so they cannot drift apart.
type keyMap struct {
	Up, Down, PageUp, PageDown, Home, End key.Binding

	Open, Back                key.Binding
	Filter, StateFilter, Sort key.Binding
	Events, Refresh, Help     key.Binding
	Replay                    key.Binding // the coordinators' log in the events pane
	EventsOlder, EventsNewer  key.Binding // page through the events pane
	// The top-level views.
	NextView, Txns, Jobs, Partitions, Groups key.Binding
	Quit, ForceQuit                          key.Binding
	Command                                  key.Binding // the command line: :ctx NAME
	Apply, Clear                             key.Binding // while typing a filter
	Confirm, Cancel                          key.Binding // in the abort dialog

	// Dangerous keys. In read-only mode they are left unbound (no keys at
	// all), so they neither match nor appear in any help.
	Abort, AbortPartition key.Binding
	// Commit commits a transaction whose Flink checkpoint completed; on the
	// jobs view it resolves the job (commits those, aborts the rest).
	Commit key.Binding
}

func newKeyMap(readOnly bool) keyMap {
	b := func(keys []string, help, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	k := keyMap{
		Up:          b([]string{"up", "k"}, "↑/k", "up"),
		Down:        b([]string{"down", "j"}, "↓/j", "down"),
		PageUp:      b([]string{"pgup", "ctrl+b", "ctrl+u"}, "pgup", "page up"),
		PageDown:    b([]string{"pgdown", "ctrl+f", "ctrl+d"}, "pgdn", "page down"),
		Home:        b([]string{"home", "g"}, "g/home", "first"),
		End:         b([]string{"end", "G"}, "G/end", "last"),
		Open:        b([]string{"enter"}, "enter", "detail"),
		Back:        b([]string{"esc"}, "esc", "back"),
		Filter:      b([]string{"/"}, "/", "filter by id (partitions: by partition or id)"),
		StateFilter: b([]string{"f"}, "f", "show all / open / problems"),
		Sort:        b([]string{"s"}, "s", "sort"),
		Events:      b([]string{"e"}, "e", "events"),
		Replay:      b([]string{"h"}, "h", "replay the log"),
		EventsOlder: b([]string{"["}, "[", "older events"),
		EventsNewer: b([]string{"]"}, "]", "newer events"),
		NextView:    b([]string{"tab"}, "tab", "next view: txns → jobs → partitions → groups"),
		Txns:        b([]string{"t"}, "t", "transactions"),
		Jobs:        b([]string{"J"}, "J", "jobs (Flink sinks, Streams apps)"),
		Partitions:  b([]string{"p"}, "p", "partitions whose LSO is pinned"),
		Groups:      b([]string{"c"}, "c", "consumer groups stuck behind a pin"),
		Refresh:     b([]string{"r"}, "r", "refresh now"),
		Help:        b([]string{"?"}, "?", "help"),
		Command:     b([]string{":"}, ":", "command line: :ctx NAME switches context (tab completes), :q quits"),
		Quit:        b([]string{"q"}, "q", "quit"),
		ForceQuit:   b([]string{"ctrl+c"}, "ctrl+c", "quit"),
		Apply:       b([]string{"enter"}, "enter", "apply filter"),
		Clear:       b([]string{"esc"}, "esc", "clear filter"),
		Confirm:     b([]string{"enter"}, "enter", "send (after typing abort)"),
		Cancel:      b([]string{"esc"}, "esc", "cancel"),
	}
	if !readOnly {
		k.Abort = b([]string{"a"}, "a", "force-terminate the transaction (a job: its lingering ones)")
		k.AbortPartition = b([]string{"x"}, "x", "abort a hanging txn on the partition (details)")
		k.Commit = b([]string{"C"}, "C", "commit a txn Flink checkpointed (jobs view: resolve the job)")
	}
	return k
}

// short is b with a terser description, for the one-line footer.
func short(b key.Binding, desc string) key.Binding {
	b.SetHelp(b.Help().Key, desc)
	return b
}

func (k keyMap) filterShort() []key.Binding { return []key.Binding{k.Apply, k.Clear} }

// dialogShort is the footer under an action dialog: while sending, a batch
// of several can be stopped after the one in flight.
func (k keyMap) dialogShort(phase views.DialogPhase, one bool) []key.Binding {
	switch phase {
	case views.DialogSending:
		stop, quit := k.Cancel, k.ForceQuit
		stop.SetHelp("esc", "stop after this one")
		quit.SetHelp("ctrl+c/q", "quit after this one")
		if one {
			return []key.Binding{quit}
		}
		return []key.Binding{stop, quit}
	case views.DialogDone:
		c := k.Confirm
		c.SetHelp("enter/esc", "close")
		return []key.Binding{c, k.Quit}
	}
	return []key.Binding{k.Cancel}
}

func (k keyMap) helpShort() []key.Binding {
	back := k.Back
	back.SetHelp("esc/?", "close help")
	return []key.Binding{back, k.Quit}
}

// groups is the full help. Unbound keys (read-only) drop out by themselves.
func (k keyMap) groups() []views.HelpGroup {
	return []views.HelpGroup{
		{Title: "move", Keys: []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.Home, k.End}},
		{Title: "list", Keys: []key.Binding{k.Open, k.Filter, k.StateFilter, k.Sort}},
		{Title: "view", Keys: []key.Binding{k.Back, k.Events, k.Replay, k.EventsOlder, k.EventsNewer, k.Refresh, k.Command, k.Help, k.Quit}},
		{Title: "views", Keys: []key.Binding{k.NextView, k.Txns, k.Jobs, k.Partitions, k.Groups}},
		{Title: "abort, commit (asks to type the word)", Keys: []key.Binding{k.Abort, k.AbortPartition, k.Commit}},
	}
}
