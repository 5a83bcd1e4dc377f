package ui

import (
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/txnscope/txnscope/model"
	"github.com/txnscope/txnscope/views"
)

const screenPartDetail screenID = "partition detail"

// partDetailScreen is the detail of a pinned partition no transaction holds.
type partDetailScreen struct {
	e    *shared
	tp   model.TopicPartition
	last model.Pin
	gone bool
	data views.PartitionDetailData
}

func (s *partDetailScreen) open(p model.Pin) {
	*s = partDetailScreen{e: s.e, tp: p.TopicPartition, last: p}
	s.e.host.show(screenPartDetail)
	s.sync()
}

func (s *partDetailScreen) home() screenID { return screenPartitions }
func (s *partDetailScreen) reload()        {} // sync rebuilds it after every message anyway
func (s *partDetailScreen) grabs() bool    { return false }

// sync rebuilds the partition detail from the latest pins while it is on
// view; a partition no longer pinned keeps its last state, marked as gone.
func (s *partDetailScreen) sync() {
	e := s.e
	if e.host.current() != screenPartDetail {
		return
	}
	s.gone = true
	for _, p := range e.data.pins {
		if p.TopicPartition == s.tp {
			s.last, s.gone = p, false
			break
		}
	}
	p := s.last
	part := s.part()
	d := views.PartitionDetailData{Pin: p, Gone: s.gone, Now: e.now, Loc: e.loc, Orphans: part.Orphans, Owners: part.Owners}
	if target, ok := part.AbortTarget(p.Pinner.ProducerID); ok && !e.o.ReadOnly && !s.gone {
		d.CanAbort, d.Target = true, target
	}
	s.data = d
}

// part is the partition as the abort on it takes it.
func (s *partDetailScreen) part() model.TxnPartition {
	byPID := s.e.data.byPID
	if s.gone && byPID != nil {
		// No longer polled, maybe: byPID may lack its producers' owners.
		byPID = model.ProducersOf(s.e.data.snap, []model.Partition{s.last.Partition})
	}
	return model.PinnedPartition(s.last, byPID)
}

func (s *partDetailScreen) update(msg tea.Msg) tea.Cmd {
	kp, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	k, host := s.e.keys, s.e.host
	switch {
	case key.Matches(kp, k.Back):
		host.show(screenPartitions)
	case key.Matches(kp, k.AbortPartition):
		if s.gone {
			host.setStatus(statusInfo, fmt.Sprintf("%s-%d is no longer pinned: nothing to abort", s.tp.Topic, s.tp.Partition))
			return nil
		}
		host.abortPartition(model.Txn{ProducerID: s.last.Pinner.ProducerID}, s.part())
	}
	return nil
}

func (s *partDetailScreen) keys() []key.Binding {
	k := s.e.keys
	return []key.Binding{k.Back, short(k.AbortPartition, "abort on partition"), k.Help, k.Quit}
}

func (s *partDetailScreen) view(w, h int) string { return views.PartitionDetail(s.data, w, h, s.e.st) }
