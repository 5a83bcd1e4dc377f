package ui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/txnscope/txnscope/model"
	"github.com/txnscope/txnscope/views"
)

const screenGroups screenID = "groups"

// groupsScreen is the consumer groups view over the cluster's blocked groups.
type groupsScreen struct {
	listBase
	e          *shared
	partitions *partitionsScreen
	selected   string // the group under the cursor; the cursor follows it across refreshes
}

func (s *groupsScreen) sync() { s.win.clamp(s.e.host.listRows()) }

func (s *groupsScreen) reload() {
	groups := s.e.data.groups
	s.showAll(len(groups), func(i int) bool { return groups[i].Group == s.selected }, s.e.host.listRows())
}

func (s *groupsScreen) current() (model.BlockedGroup, bool) {
	groups := s.e.data.groups
	if s.win.cursor < 0 || s.win.cursor >= len(groups) {
		return model.BlockedGroup{}, false
	}
	return groups[s.win.cursor], true
}

func (s *groupsScreen) update(msg tea.Msg) tea.Cmd {
	k := s.e.keys
	kp, ok := msg.(tea.KeyPressMsg)
	if s.handle(k, msg, s.e.host.listRows(), nil, s.cursorMoved) || !ok {
		return nil
	}
	switch {
	case key.Matches(kp, k.Open):
		if g, ok := s.current(); ok {
			s.partitions.showGroup(g.Group)
		}
	case key.Matches(kp, k.Back):
		s.e.host.show(screenList)
	}
	return nil
}

func (s *groupsScreen) cursorMoved() {
	if g, ok := s.current(); ok {
		s.selected = g.Group
	}
}

func (s *groupsScreen) keys() []key.Binding {
	k := s.e.keys
	return []key.Binding{short(k.Open, "its partitions"), short(k.Back, "back"), short(k.NextView, "transactions"), k.Help, k.Quit}
}

func (s *groupsScreen) view(w, h int) string {
	e := s.e
	d := views.GroupsData{Groups: e.data.groups, Cursor: s.win.cursor, Top: s.win.top, Now: e.now}
	switch {
	case e.data.snap == nil:
		d.Empty = "waiting for the first refresh…"
	case len(e.data.pins) == 0:
		d.Empty = "no partition is pinned, so no consumer group can be stuck behind one"
	default:
		d.Empty = "no consumer group has its committed offset at a pinned LSO"
	}
	if e.data.snap != nil {
		d.Err = e.data.snap.GroupsErr
	}
	return views.Groups(d, w, h, e.st)
}
