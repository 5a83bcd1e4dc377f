package model

import (
	"sort"
	"strings"
	"time"
)

// SortKey orders the transaction list.
type SortKey int

const (
	SortRatio SortKey = iota // most urgent first
	SortAge                  // oldest first
	SortID
	SortState
)

var sortNames = [...]string{"age/timeout", "age", "id", "state"}

func (k SortKey) String() string { return sortNames[k] }

// Next cycles through the sort keys.
func (k SortKey) Next() SortKey { return (k + 1) % SortKey(len(sortNames)) }

// StateFilter narrows the list by state.
type StateFilter int

const (
	FilterAll StateFilter = iota
	FilterOpen
	FilterProblems
)

var filterNames = [...]string{"all", "open only", "problems only"}

func (f StateFilter) String() string { return filterNames[f] }

// Next cycles through the filters.
func (f StateFilter) Next() StateFilter { return (f + 1) % StateFilter(len(filterNames)) }

// Query is everything that decides which rows the list shows, and in what order.
type Query struct {
	Text   string // case-insensitive substring of the transactional.id
	Filter StateFilter
	Sort   SortKey
	// CheckpointInterval, when set, flags timeouts shorter than twice it.
	CheckpointInterval time.Duration
}

// Problems lists why a transaction deserves attention; empty means none.
func Problems(t Txn, st IDStats, s *Snapshot, q Query, now time.Time) []string {
	var out []string
	if t.Err != "" {
		out = append(out, t.Err)
	}
	if r, ok := t.Ratio(now); ok && r >= WarnRatio {
		if r >= 1 {
			out = append(out, "past its transaction.timeout.ms")
		} else {
			out = append(out, "over half of its timeout")
		}
	}
	switch t.State {
	case PrepareEpochFence:
		out = append(out, "being fenced")
	}
	if s != nil && s.BrokerMaxTimeoutMs > 0 && int64(t.TimeoutMs) > s.BrokerMaxTimeoutMs {
		out = append(out, "timeout above the broker's transaction.max.timeout.ms")
	}
	if q.CheckpointInterval > 0 && t.TimeoutMs > 0 && t.Timeout() < 2*q.CheckpointInterval {
		out = append(out, "timeout below 2× the checkpoint interval")
	}
	if st.Last == TimedOut || st.Last == Fenced {
		out = append(out, "last transaction "+string(st.Last))
	}
	return out
}

// stateRank puts the states that need attention first when sorting by state.
var stateRank = map[State]int{
	PrepareEpochFence: 0, PrepareAbort: 1, PrepareCommit: 2, Ongoing: 3,
	CompleteAbort: 4, CompleteCommit: 5, Empty: 6, Dead: 7,
}

// Rows returns the indices into s.Txns that q selects, in display order.
// It allocates one slice; the ui calls it on each refresh and each query change,
// never per frame.
func Rows(s *Snapshot, h *History, q Query, now time.Time) []int {
	needle := strings.ToLower(q.Text)
	rows := make([]int, 0, len(s.Txns))
	for i := range s.Txns {
		t := &s.Txns[i]
		if needle != "" && !strings.Contains(strings.ToLower(t.ID), needle) {
			continue
		}
		switch q.Filter {
		case FilterOpen:
			if !t.State.Open() {
				continue
			}
		case FilterProblems:
			if len(Problems(*t, h.Stats(t.ID), s, q, now)) == 0 {
				continue
			}
		}
		rows = append(rows, i)
	}
	less := lessFunc(s, q.Sort, now)
	sort.SliceStable(rows, func(a, b int) bool { return less(&s.Txns[rows[a]], &s.Txns[rows[b]]) })
	return rows
}

func lessFunc(s *Snapshot, k SortKey, now time.Time) func(a, b *Txn) bool {
	byID := func(a, b *Txn) bool { return a.ID < b.ID }
	switch k {
	case SortRatio:
		return func(a, b *Txn) bool {
			ra, oka := a.Ratio(now)
			rb, okb := b.Ratio(now)
			if oka != okb {
				return oka
			}
			if oka && ra != rb {
				return ra > rb
			}
			return byID(a, b)
		}
	case SortAge:
		return func(a, b *Txn) bool {
			aa, oka := a.Age(now)
			ab, okb := b.Age(now)
			if oka != okb {
				return oka
			}
			if oka && aa != ab {
				return aa > ab
			}
			return byID(a, b)
		}
	case SortState:
		return func(a, b *Txn) bool {
			if ra, rb := stateRank[a.State], stateRank[b.State]; ra != rb {
				return ra < rb
			}
			return byID(a, b)
		}
	}
	return byID
}
