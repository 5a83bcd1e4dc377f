package model

import (
	"slices"
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
	// Loc is the time zone of the times in problems' texts, the screen's
	// clock's; nil is UTC, as in the JSON.
	Loc *time.Location
	// Flink is what the JobManagers said, for the JSON's jobs (nil: no
	// --flink); the UI hands it to the jobs' Grouping instead.
	Flink *FlinkView
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
	if p, ok := prefixProblem(t, st, now); ok {
		out = append(out, p)
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
	var rows []int
	if needle == "" && q.Filter == FilterAll {
		rows = make([]int, 0, len(s.Txns))
	}
	// Rows without a sort value keep id order (Txns is sorted by id) after
	// all rows with one: only those, 1 % of Flink's ids by age/timeout, are
	// sorted. Keys are computed once per row: at 100k rows, recomputing
	// ratios inside the comparison dominated the cost.
	var keyed []sortRow
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
		if r := sortKey(t, i, q.Sort, now); r.has {
			keyed = append(keyed, r)
		} else {
			rows = append(rows, i)
		}
	}
	slices.SortFunc(keyed, func(a, b sortRow) int {
		if a.v != b.v {
			if a.v > b.v {
				return -1
			}
			return 1
		}
		return a.i - b.i
	})
	rest := len(rows)
	rows = slices.Grow(rows, len(keyed))[:rest+len(keyed)]
	copy(rows[len(keyed):], rows[:rest])
	for k, r := range keyed {
		rows[k] = r.i
	}
	return rows
}

// sortRow orders rows with a value before rows without one, larger values
// first, then by id (by index, since Snapshot.Txns is sorted by id).
type sortRow struct {
	i   int
	has bool
	v   float64
}

func sortKey(t *Txn, i int, k SortKey, now time.Time) sortRow {
	r := sortRow{i: i}
	if (k == SortRatio || k == SortAge) && !t.State.Open() {
		return r // no age: most of a Flink cluster's ids, looked at every refresh
	}
	switch k {
	case SortRatio:
		r.v, r.has = t.Ratio(now)
	case SortAge:
		a, ok := t.Age(now)
		r.v, r.has = float64(a), ok
	case SortState:
		r.v, r.has = -float64(stateRank[t.State]), true
	}
	return r
}
