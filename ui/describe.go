package ui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/txnscope/txnscope/model"
)

// describeBatch is how many pending ids one Describe asks for at least: a
// broker describes 50,000 ids in about 0.1 s. Each batch costs a copy of the
// snapshot and its screens' data, so a bigger load takes a quarter of its ids
// at a time (batchOf): a fixed size made the load grow with the square of
// the ids (ten copies of 500,000 rows). The first batch of a load is
// firstBatch, the rows on screen and the open ones, soon.
const (
	describeBatch = 50000
	firstBatch    = 2000
	loadBatches   = 4
)

// batchOf is how many of total ids one batch describes when a load takes
// batches of at least min.
func batchOf(total, min, batches int) int {
	return max(min, (total+batches-1)/batches)
}

// describedMsg is one describe batch, filled into the snapshot it was taken
// from (base) off the UI goroutine; events are the state changes the
// descriptions revealed.
type describedMsg struct {
	gen    uint64
	base   *model.Snapshot
	data   cluster
	events []model.Event
	err    error
}

// describe asks for the next batch of pending rows: the ones on screen
// first, then the open ones, then the rest (model.NextPending).
func (m *Model) describe() tea.Cmd {
	m.poll.gen++
	m.poll.tick++
	m.poll.busy, m.poll.batch, m.poll.busySince = true, true, m.now
	n := batchOf(m.data.sum.Total, m.batch, m.batches)
	if m.data.sum.Pending == m.data.sum.Total {
		n = min(n, firstBatch)
	}
	gen, base, admin, ctx, track, now := m.poll.gen, m.data.snap, m.o.Admin, m.ctx, m.pinTrack, m.o.Now
	first, q, jobs, flink := m.onScreen(), m.listQuery(), m.jobsOn(), m.data.flink
	next := model.NextPending
	if base.Source.Reading {
		next = model.NextPendingOpen
	}
	return func() tea.Msg {
		ids := next(base, first, n)
		d, err := admin.Describe(ctx, ids)
		if err != nil {
			return describedMsg{gen: gen, base: base, err: err}
		}
		next, evs := model.Fill(base, d)
		return describedMsg{gen: gen, base: base, data: newCluster(next, track, now(), q, jobs, flink), events: evs}
	}
}

// described takes a batch in. One from an older generation, or filled into
// a snapshot that is no longer the one shown, is dropped: it would put older
// data over newer.
func (m *Model) described(msg describedMsg) tea.Cmd {
	if msg.gen != m.poll.gen || !m.poll.busy || !m.poll.batch {
		return nil
	}
	m.poll.busy, m.poll.batch = false, false
	if msg.base != m.data.snap {
		return m.next()
	}
	if msg.err != nil {
		if m.ctx.Err() != nil {
			return nil // quitting
		}
		m.failed(msg.err)
		return m.next()
	}
	before := m.data.sum.Pending
	m.hist.Add(msg.events)
	m.swap(msg.data)
	// An answer that left every row pending would be asked again forever.
	m.poll.stalled = m.data.sum.Pending >= before
	return m.next()
}

// listQuery is the transaction list's query now, for a command to sort its
// rows off the UI goroutine.
func (m *Model) listQuery() model.Query {
	if l, ok := m.screens[screenList].(*listScreen); ok {
		return l.query
	}
	return model.Query{}
}

// toDescribe reports whether a describe batch has ids to ask for: any
// pending one, or while the log is read (which will describe the rest, at
// 2,000,000 ids after about 24 s, where describing them too kept two more
// copies of every row alive), an open one or one on screen.
func (m *Model) toDescribe() bool {
	switch sum := m.data.sum; {
	case sum.Pending == 0:
		return false
	case !sum.Source.Reading || sum.PendingOpen > 0:
		return true
	}
	for _, id := range m.onScreen() {
		if t, ok := m.data.snap.Txn(id); ok && t.Pending {
			return true
		}
	}
	return false
}

// onScreen are the ids the transaction list shows now, to describe first.
func (m *Model) onScreen() []string {
	l, ok := m.screens[screenList].(*listScreen)
	if !ok || m.data.snap == nil {
		return nil
	}
	w, n := &l.win, m.listRows()
	out := make([]string, 0, n)
	for i := w.top; i < len(w.rows) && i < w.top+n; i++ {
		out = append(out, m.data.snap.Txns[w.rows[i]].ID)
	}
	return out
}
