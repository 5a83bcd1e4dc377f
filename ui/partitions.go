package ui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/txnscope/txnscope/internal/escape"
	"github.com/txnscope/txnscope/model"
	"github.com/txnscope/txnscope/views"
)

const screenPartitions screenID = "partitions"

// partitionsScreen is the partitions view: its rows are indices into the
// cluster's pins (longest pinned first) that model.PinRows selects, narrowed
// to one consumer group's partitions when opened from the groups view.
type partitionsScreen struct {
	listBase
	e          *shared
	detail     *detailScreen
	partDetail *partDetailScreen
	query      model.PinQuery
	selected   model.TopicPartition // the cursor follows it across refreshes
}

func newPartitionsScreen(e *shared, detail *detailScreen, partDetail *partDetailScreen) *partitionsScreen {
	s := &partitionsScreen{e: e, detail: detail, partDetail: partDetail}
	s.input = input{prompt: "/", placeholder: "part of a topic-partition or transactional.id", limit: 256}
	return s
}

func (s *partitionsScreen) reload() { s.recompute() }
func (s *partitionsScreen) sync()   { s.win.clamp(s.e.host.listRows()) }

// recompute rebuilds the rows after a refresh or a change of filter, keeping
// the cursor on the same partition.
func (s *partitionsScreen) recompute() {
	pins := s.e.data.pins
	s.show(model.PinRows(pins, s.e.data.groups, s.query), func(idx int) bool { return pins[idx].TopicPartition == s.selected },
		s.e.host.listRows())
}

func (s *partitionsScreen) current() (model.Pin, bool) {
	w := &s.win
	if w.cursor < 0 || w.cursor >= len(w.rows) {
		return model.Pin{}, false
	}
	return s.e.data.pins[w.rows[w.cursor]], true
}

// showGroup shows the partitions group waits on ("" shows them all).
func (s *partitionsScreen) showGroup(group string) {
	s.query.Group = group
	s.win.cursor, s.win.top = 0, 0
	s.selected = model.TopicPartition{}
	s.recompute()
	if p, ok := s.current(); ok {
		s.selected = p.TopicPartition
	}
	s.e.host.show(screenPartitions)
}

func (s *partitionsScreen) update(msg tea.Msg) tea.Cmd {
	k := s.e.keys
	kp, ok := msg.(tea.KeyPressMsg)
	if s.handle(k, msg, s.e.host.listRows(), s.filtered, s.cursorMoved) || !ok {
		return nil
	}
	switch {
	case key.Matches(kp, k.Open):
		if p, ok := s.current(); ok {
			s.open(p)
		}
	case key.Matches(kp, k.Filter):
		s.startFilter(s.query.Text)
	case key.Matches(kp, k.Back):
		switch {
		case s.query.Text != "":
			s.query.Text = ""
			s.recompute()
		case s.query.Group != "":
			s.showGroup("")
		default:
			s.e.host.show(screenList)
		}
	}
	return nil
}

func (s *partitionsScreen) filtered(text string) {
	s.query.Text = text
	s.recompute()
}

func (s *partitionsScreen) cursorMoved() {
	if p, ok := s.current(); ok {
		s.selected = p.TopicPartition
	}
}

// open leads from a pinned partition to what holds it: the transaction
// owning the pinning producer (its detail, on this partition's row), or,
// when no transactional id owns it, the partition's own detail, which
// offers the abort on the partition.
func (s *partitionsScreen) open(p model.Pin) {
	if p.HasOwner {
		s.detail.open(p.Owner.ID, screenPartitions)
		s.detail.focus(p.TopicPartition)
		return
	}
	s.partDetail.open(p)
}

func (s *partitionsScreen) keys() []key.Binding {
	k := s.e.keys
	if s.typing {
		return k.filterShort()
	}
	return []key.Binding{short(k.Open, "blocking txn"), short(k.Filter, "filter"), short(k.Back, "back"),
		short(k.NextView, "groups"), k.Help, k.Quit}
}

func (s *partitionsScreen) view(w, h int) string {
	e := s.e
	d := views.PartitionsData{Pins: e.data.pins, Rows: s.win.rows, Cursor: s.win.cursor, Top: s.win.top, Now: e.now,
		Group: s.query.Group, Text: s.query.Text}
	d.Input = s.filterView(e.w/2, e.st)
	if e.data.snap != nil {
		d.Scanned, d.Unread = e.data.snap.Scanned, e.data.snap.Unread
	}
	switch {
	case e.data.snap == nil:
		d.Empty = "waiting for the first refresh…"
	case s.query.Text != "":
		d.Empty = "no pinned partition matches /" + s.query.Text + " (esc clears)"
	case s.query.Group != "":
		d.Empty = "no partition blocks " + escape.Text(s.query.Group) + " any more (esc shows all)"
	default:
		d.Empty = "no partition is pinned: every last stable offset is at its high watermark"
	}
	return views.Partitions(d, w, h, e.st)
}
