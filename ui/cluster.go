package ui

import (
	"time"

	"github.com/txnscope/txnscope/model"
	"github.com/txnscope/txnscope/views"
)

// cluster is everything one refresh learnt, worked out off the UI goroutine
// (the refresh command builds it) and then swapped in whole: no screen ever
// sees half of one refresh and half of the next.
type cluster struct {
	snap *model.Snapshot // nil until the first refresh
	sum  views.Summary   // the header's counts
	// byPID holds the owners of the producers on snap's partitions, the
	// only ones the screens look up (model.ProducersOn).
	byPID map[int64]*model.Txn
	// pins, groups and hanging are the partitions and groups views' data;
	// pinSum the header's count of them.
	pins    []model.Pin
	groups  []model.BlockedGroup
	hanging map[string]bool
	pinSum  views.PinSummary
	// rows are the list's rows for the query rowsQuery, sorted here rather
	// than on the UI goroutine (500,000 rows take longer than a key may
	// wait); hasRows is false when the query needs the history (problems).
	rows      []int
	rowsQuery model.Query
	hasRows   bool
	// jobs is the jobs view's grouping (nil unless it was on view when the
	// refresh started: it is a pass over every id).
	jobs *model.Grouping
	// flink is the JobManagers' latest reading when the refresh started
	// (nil: no --flink, or none yet).
	flink *model.FlinkView
}

// listRows are the list's rows for q, when they were worked out with the rest.
func (c *cluster) listRows(q model.Query) ([]int, bool) {
	if !c.hasRows || c.rowsQuery != q {
		return nil, false
	}
	return c.rows, true
}

// newCluster derives what the screens need from snap, the list's rows for
// q included, and the jobs' grouping when jobs is set. track remembers since
// when each partition is pinned; only the refresh command touches it, and
// refreshes never overlap (poller), so it needs no lock.
func newCluster(snap *model.Snapshot, track *model.PinTracker, now time.Time, q model.Query, jobs bool, flink *model.FlinkView) cluster {
	track.Observe(snap)
	byPID := model.ProducersOn(snap)
	pins := model.PinsOf(snap, byPID, track, now)
	groups := model.BlockedGroups(pins)
	c := cluster{snap: snap, sum: views.Summarize(snap), byPID: byPID,
		pins: pins, groups: groups, hanging: model.HangingIDsOf(snap, byPID, pins),
		pinSum: views.PinSummary{Pinned: len(pins), Stuck: len(groups)}, flink: flink}
	for i := range pins {
		if pins[i].Hanging {
			c.pinSum.Hanging++
		}
	}
	if jobs {
		c.jobs = model.Group(snap, pins)
		c.jobs.Flink = flink
	}
	if q.Filter != model.FilterProblems {
		c.rows, c.rowsQuery, c.hasRows = model.Rows(snap, nil, q, now), q, true
	}
	return c
}
