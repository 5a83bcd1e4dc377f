package ui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/txnscope/txnscope/internal/escape"
	"github.com/txnscope/txnscope/model"
	"github.com/txnscope/txnscope/views"
)

// pinsState is the partitions view: its rows are indices into m.pins
// (longest pinned first), narrowed to one consumer group's partitions when
// the view was opened from the groups view.
type pinsState struct {
	win      listState // only rows, cursor and top are used
	group    string
	text     string // narrows to partitions or ids containing it
	input    input
	typing   bool
	selected model.TopicPartition // the cursor follows it across refreshes
}

func newPinFilterInput() input {
	return input{prompt: "/", placeholder: "part of a topic-partition or transactional.id", limit: 256}
}

// groupsState is the consumer groups view over m.groups.
type groupsState struct {
	win      listState
	selected string
}

// pinDetailState is the detail of a pinned partition no transaction holds.
type pinDetailState struct {
	tp   model.TopicPartition
	last model.Pin
	gone bool
	data views.PartitionDetailData
}

// recomputePins rebuilds the partitions and groups rows after a refresh or
// a change of filter, keeping each cursor on the same partition or group.
func (m *Model) recomputePins() {
	ps := &m.pinView
	ps.win.rows = ps.win.rows[:0]
	ps.win.rows = model.PinRows(m.pins, m.groups, model.PinQuery{Group: ps.group, Text: ps.text})
	for i, idx := range ps.win.rows {
		if m.pins[idx].TopicPartition == ps.selected {
			ps.win.cursor = i
			break
		}
	}
	ps.win.clamp(m.listRows())

	gs := &m.groupView
	gs.win.rows = gs.win.rows[:0]
	for i := range m.groups {
		gs.win.rows = append(gs.win.rows, i)
		if m.groups[i].Group == gs.selected {
			gs.win.cursor = i
		}
	}
	gs.win.clamp(m.listRows())
}

func (m *Model) currentPin() (model.Pin, bool) {
	w := &m.pinView.win
	if w.cursor < 0 || w.cursor >= len(w.rows) {
		return model.Pin{}, false
	}
	return m.pins[w.rows[w.cursor]], true
}

func (m *Model) currentGroup() (model.BlockedGroup, bool) {
	w := &m.groupView.win
	if w.cursor < 0 || w.cursor >= len(m.groups) {
		return model.BlockedGroup{}, false
	}
	return m.groups[w.cursor], true
}

// showPins switches to the partitions view, narrowed to group's partitions
// ("" shows them all).
func (m *Model) showPins(group string) {
	m.pinView.group = group
	m.pinView.win.cursor, m.pinView.win.top = 0, 0
	m.pinView.selected = model.TopicPartition{}
	m.recomputePins()
	if p, ok := m.currentPin(); ok {
		m.pinView.selected = p.TopicPartition
	}
	m.screen = screenPins
}

func (m *Model) updatePins(msg tea.KeyPressMsg) tea.Cmd {
	ps := &m.pinView
	k := m.keys
	if ps.win.move(k, msg, m.listRows()) {
		if p, ok := m.currentPin(); ok {
			ps.selected = p.TopicPartition
		}
		return nil
	}
	switch {
	case key.Matches(msg, k.Open):
		if p, ok := m.currentPin(); ok {
			m.openPin(p)
		}
	case key.Matches(msg, k.Filter):
		ps.typing = true
		ps.input.SetValue(ps.text)
		ps.input.Focus()
	case key.Matches(msg, k.Back):
		switch {
		case ps.text != "":
			ps.text = ""
			m.recomputePins()
		case ps.group != "":
			m.showPins("")
		default:
			m.screen = screenList
		}
	}
	return nil
}

// updatePinFilter handles keys while the partitions filter is typed, as the
// list's filter does.
func (m *Model) updatePinFilter(msg tea.Msg) tea.Cmd {
	ps := &m.pinView
	if kp, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(kp, m.keys.Apply):
			ps.typing = false
			ps.input.Blur()
			ps.text = strings.TrimSpace(ps.input.Value())
			m.recomputePins()
			return nil
		case key.Matches(kp, m.keys.Clear):
			ps.typing = false
			ps.input.Blur()
			ps.input.SetValue("")
			ps.text = ""
			m.recomputePins()
			return nil
		}
	}
	ps.input.Update(msg)
	return nil
}

// openPin leads from a pinned partition to what holds it: the transaction
// owning the pinning producer (its detail, on this partition's row), or,
// when no transactional id owns it, the partition's own detail, which
// offers the abort on the partition.
func (m *Model) openPin(p model.Pin) {
	if p.HasOwner {
		m.openDetail(p.Owner.ID)
		m.detail.from = screenPins
		for i, dp := range m.detail.data.Parts {
			if dp.TopicPartition == p.TopicPartition {
				m.detail.cursor = i
				m.detail.data.Cursor = i
				m.scrollDetail(0, false)
				break
			}
		}
		return
	}
	m.pinDetail = pinDetailState{tp: p.TopicPartition, last: p}
	m.screen = screenPinDetail
	m.syncPinDetail()
}

func (m *Model) updateGroups(msg tea.KeyPressMsg) tea.Cmd {
	gs := &m.groupView
	k := m.keys
	if gs.win.move(k, msg, m.listRows()) {
		if g, ok := m.currentGroup(); ok {
			gs.selected = g.Group
		}
		return nil
	}
	switch {
	case key.Matches(msg, k.Open):
		if g, ok := m.currentGroup(); ok {
			m.showPins(g.Group)
		}
	case key.Matches(msg, k.Back):
		m.screen = screenList
	}
	return nil
}

// syncPinDetail rebuilds the partition detail from the latest pins; a
// partition no longer pinned keeps its last state, marked as gone.
func (m *Model) syncPinDetail() {
	if m.screen != screenPinDetail {
		return
	}
	ds := &m.pinDetail
	ds.gone = true
	for _, p := range m.pins {
		if p.TopicPartition == ds.tp {
			ds.last, ds.gone = p, false
			break
		}
	}
	p := ds.last
	part := model.PinnedPartition(p, m.byPID)
	d := views.PartitionDetailData{Pin: p, Gone: ds.gone, Now: m.now, Loc: m.loc, Orphans: part.Orphans, Owners: part.Owners}
	if target, ok := m.pinPart().AbortTarget(p.Pinner.ProducerID); ok && !m.o.ReadOnly && !ds.gone {
		d.CanAbort, d.Target = true, target
	}
	ds.data = d
}

// pinPart is the partition detail as the abort dialog takes it.
func (m *Model) pinPart() model.TxnPartition {
	return model.PinnedPartition(m.pinDetail.last, m.byPID)
}

func (m *Model) updatePinDetail(msg tea.KeyPressMsg) tea.Cmd {
	k := m.keys
	switch {
	case key.Matches(msg, k.Back):
		m.screen = screenPins
	case key.Matches(msg, k.AbortPartition):
		if m.pinDetail.gone {
			p := m.pinDetail.tp
			m.setStatus(statusInfo, fmt.Sprintf("%s-%d is no longer pinned: nothing to abort", p.Topic, p.Partition))
			return nil
		}
		m.openAbortPartition(model.Txn{ProducerID: m.pinDetail.last.Pinner.ProducerID}, m.pinPart())
	}
	return nil
}

func (m *Model) pinsData() views.PartitionsData {
	ps := &m.pinView
	d := views.PartitionsData{Pins: m.pins, Rows: ps.win.rows, Cursor: ps.win.cursor, Top: ps.win.top, Now: m.now, Group: ps.group, Text: ps.text}
	if ps.typing {
		d.Input = ps.input.View(m.w/2, m.st)
	}
	if m.snap != nil {
		d.Scanned, d.Unread = m.snap.Scanned, m.snap.Unread
	}
	switch {
	case m.snap == nil:
		d.Empty = "waiting for the first refresh…"
	case ps.text != "":
		d.Empty = "no pinned partition matches /" + ps.text + " (esc clears)"
	case ps.group != "":
		d.Empty = "no partition blocks " + escape.Text(ps.group) + " any more (esc shows all)"
	default:
		d.Empty = "no partition is pinned: every last stable offset is at its high watermark"
	}
	return d
}

func (m *Model) groupsData() views.GroupsData {
	gs := &m.groupView
	d := views.GroupsData{Groups: m.groups, Cursor: gs.win.cursor, Top: gs.win.top, Now: m.now}
	switch {
	case m.snap == nil:
		d.Empty = "waiting for the first refresh…"
	case len(m.pins) == 0:
		d.Empty = "no partition is pinned, so no consumer group can be stuck behind one"
	default:
		d.Empty = "no consumer group has its committed offset at a pinned LSO"
	}
	if m.snap != nil {
		d.Err = m.snap.GroupsErr
	}
	return d
}

func (m *Model) pinSummary() views.PinSummary {
	s := views.PinSummary{Pinned: len(m.pins), Stuck: len(m.groups)}
	for i := range m.pins {
		if m.pins[i].Hanging {
			s.Hanging++
		}
	}
	return s
}
