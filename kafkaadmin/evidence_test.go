package kafkaadmin

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/model"
)

// TestTrailScan: from the mark, the producer's first marker ends the
// transaction confirmed; anything of the producer after it is a newer
// transaction, aborted when an ABORT marker of the producer follows, open
// when records follow its last marker. Other producers do not count.
func TestTrailScan(t *testing.T) {
	const (
		pid, other = 7, 9
		abort      = kmsg.ControlRecordKeyTypeAbort
		commit     = kmsg.ControlRecordKeyTypeCommit
	)
	e := ending{pid: pid, epoch: 3, start: 10}
	shown := batch(10, 2, pid, 3, false, 0) // 10-11
	for _, tc := range []struct {
		name string
		raw  []byte
		want trail // at and whole aside
		bad  bool
	}{
		{"committed, nothing newer", cat(shown, batch(12, 1, other, 0, false, 0), batch(13, 1, pid, 3, true, commit)),
			trail{ended: model.CompleteCommit, endedAt: 13, endedEpoch: 3, newerAt: -1, dataAt: -1, abortAt: -1, commitAt: -1}, false},
		{"committed, a newer one aborted (the race)", cat(shown, batch(12, 1, pid, 3, true, commit), batch(13, 2, pid, 3, false, 0), batch(15, 1, pid, 3, true, abort)),
			trail{ended: model.CompleteCommit, endedAt: 12, endedEpoch: 3, newerAt: 13, dataAt: 13, abortAt: 15, commitAt: -1}, false},
		{"transaction version 2: markers carry the bumped epochs", cat(shown, batch(12, 1, pid, 4, true, commit), batch(13, 1, pid, 4, false, 0), batch(14, 1, pid, 5, true, abort)),
			trail{ended: model.CompleteCommit, endedAt: 12, endedEpoch: 4, newerAt: 13, dataAt: 13, abortAt: 14, commitAt: -1}, false},
		{"committed, a newer one open", cat(shown, batch(12, 1, pid, 3, true, commit), batch(13, 1, other, 0, false, 0), batch(14, 1, pid, 3, false, 0)),
			trail{ended: model.CompleteCommit, endedAt: 12, endedEpoch: 3, newerAt: 14, dataAt: 14, abortAt: -1, commitAt: -1, open: true}, false},
		{"a newer one committed too", cat(shown, batch(12, 1, pid, 3, true, commit), batch(13, 1, pid, 3, false, 0), batch(14, 1, pid, 3, true, commit)),
			trail{ended: model.CompleteCommit, endedAt: 12, endedEpoch: 3, newerAt: 13, dataAt: 13, abortAt: -1, commitAt: 14}, false},
		{"a second COMMIT with no records before it: a retry's, not a newer one's", cat(shown, batch(12, 1, pid, 3, true, commit), batch(13, 1, pid, 3, true, commit)),
			trail{ended: model.CompleteCommit, endedAt: 12, endedEpoch: 3, newerAt: 13, dataAt: -1, abortAt: -1, commitAt: -1}, false},
		{"an ABORT with no records before it: a newer one that wrote nothing here", cat(shown, batch(12, 1, pid, 3, true, commit), batch(13, 1, pid, 4, true, abort)),
			trail{ended: model.CompleteCommit, endedAt: 12, endedEpoch: 3, newerAt: 13, dataAt: -1, abortAt: 13, commitAt: -1}, false},
		{"aborted, nothing newer", cat(shown, batch(12, 1, pid, 4, true, abort)),
			trail{ended: model.CompleteAbort, endedAt: 12, endedEpoch: 4, newerAt: -1, dataAt: -1, abortAt: -1, commitAt: -1}, false},
		{"still open", cat(shown, batch(12, 1, other, 0, true, abort)),
			trail{newerAt: -1, dataAt: -1, abortAt: -1, commitAt: -1, endedAt: -1}, false},
		{"a marker from before the mark's epoch: not this producer's story", cat(shown, batch(12, 1, pid, 2, true, commit)),
			trail{newerAt: -1, dataAt: -1, abortAt: -1, commitAt: -1, endedAt: -1}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTrail(tp{Topic: "orders"})
			_, _, bad := tr.scan(tc.raw, e, e.start, 100)
			tc.want.at = tr.at
			if tr != tc.want || bad != tc.bad {
				t.Errorf("trail %+v bad %v\nwant  %+v bad %v", tr, bad, tc.want, tc.bad)
			}
		})
	}
}

// TestEvidenceJudge: what the result may say from the trails and the id
// re-read after the answer. "Nothing was aborted" needs proof (the id still
// at the epoch of the COMMIT marker: any fence bumps it); a newer
// transaction that was or may have been aborted is named, unknown; a
// committed transaction with nothing newer in the logs read is unknown too,
// for the newer one may have written elsewhere.
func TestEvidenceJudge(t *testing.T) {
	start := time.UnixMilli(1795953588000)
	o0, o1 := tp{Topic: "orders", Partition: 0}, tp{Topic: "orders", Partition: 1}
	a := model.Action{Kind: model.ForceTerminate, TransactionalID: "job-0-1", ProducerID: 7, ProducerEpoch: 3, Start: start,
		Partitions: []tp{o0, o1}}
	committed := func(at tp) trail {
		tr := newTrail(at)
		tr.ended, tr.endedAt, tr.endedEpoch, tr.whole = model.CompleteCommit, 12, 3, true
		return tr
	}
	aborted := committed(o0)
	aborted.ended, aborted.endedEpoch = model.CompleteAbort, 4
	newerAborted := committed(o0)
	newerAborted.newerAt, newerAborted.dataAt, newerAborted.abortAt = 13, 13, 15
	newerOpen := committed(o1)
	newerOpen.newerAt, newerOpen.dataAt, newerOpen.open = 13, 13, true
	cut := committed(o1)
	cut.whole = false
	txn := func(state model.State, epoch int16, startAt time.Time, parts ...tp) model.Txn {
		x := model.Txn{ID: a.TransactionalID, ProducerID: 7, ProducerEpoch: epoch, State: state, Partitions: parts}
		x.SetStart(startAt)
		return x
	}
	later := start.Add(40 * time.Millisecond)
	empty := txn(model.Empty, 4, time.Time{})

	for _, tc := range []struct {
		name   string
		fence  bool
		trails []trail
		fresh  model.Txn
		found  bool
		want   verdict
		says   string
	}{
		{"the race: a newer transaction's ABORT follows the COMMIT", false, []trail{newerAborted, committed(o1)}, empty, true,
			verdict{unknown: true}, "a newer transaction of job-0-1 began after it (at offset 13 of orders-0) and has an ABORT marker at offset 15: this request most likely aborted it"},
		{"a newer one without an end", false, []trail{committed(o0), newerOpen}, empty, true,
			verdict{unknown: true}, "began after it (at offset 13 of orders-1) and no end of it could be read: this request may have aborted it"},
		{"a newer one open now, at the coordinator too: not aborted", true, []trail{committed(o0), newerOpen}, txn(model.Ongoing, 3, later, o1), true,
			verdict{}, "the id is still at epoch 3, which a fence would have bumped: nothing was aborted"},
		{"a newer one open now after a restart: not this request's", true, []trail{aborted, newerOpen}, txn(model.Ongoing, 5, later, o1), true,
			verdict{aborted: true}, "its ABORT marker is in the log"},
		{"committed, nothing newer, id at the same epoch: proof", true, []trail{committed(o0), committed(o1)}, txn(model.CompleteCommit, 3, start), true,
			verdict{}, "nothing was aborted"},
		{"committed, nothing newer read, epoch moved", false, []trail{committed(o0), committed(o1)}, empty, true,
			verdict{unknown: true}, "the request fenced its producer; nothing of a newer transaction of job-0-1 follows it in the log of orders-0, orders-1, but a newer one open elsewhere would have been aborted"},
		{"committed, one log not read to its end", false, []trail{committed(o0), cut}, empty, true,
			verdict{unknown: true}, "follows it in the log of orders-0 (orders-1 could not be read to the end)"},
		{"committed, the id not re-read: no proof", true, []trail{committed(o0), committed(o1)}, model.Txn{}, false,
			verdict{unknown: true}, "the id could not be re-read at that epoch since"},
		{"committed, epoch moved after a CONCURRENT_TRANSACTIONS", true, []trail{committed(o0), committed(o1)}, empty, true,
			verdict{unknown: true}, "the id has moved to epoch 4 since"},
		{"aborted, then a newer one aborted: this request's or its own", true, []trail{func() trail {
			tr := newerAborted
			tr.ended = model.CompleteAbort
			return tr
		}()}, empty, true, verdict{unknown: true}, "the one shown was aborted (its ABORT marker is at offset 12 of orders-0); a newer transaction of job-0-1 began after it (at offset 13 of orders-0) and has an ABORT marker at offset 15: this request may have aborted it"},
		{"aborted, nothing newer", false, []trail{aborted, committed(o1)}, empty, true, verdict{aborted: true}, "its ABORT marker is in the log"},
		{"the coordinator shows a newer one being aborted", true, []trail{newTrail(o0)}, txn(model.PrepareAbort, 4, later, o0), true,
			verdict{unknown: true}, "this request most likely aborted the newer one"},
		{"nothing readable", false, []trail{newTrail(o0), newTrail(o1)}, empty, true, verdict{unknown: true}, "its COMMIT or ABORT marker could not be read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := evidence{a: a, trails: tc.trails, fresh: tc.fresh, found: tc.found}.judge(tc.fence)
			if v.aborted != tc.want.aborted || v.unknown != tc.want.unknown || !strings.Contains(v.text, tc.says) {
				t.Errorf("verdict %+v\nwant aborted %v unknown %v, saying %q", v, tc.want.aborted, tc.want.unknown, tc.says)
			}
			if v.unknown && strings.Contains(v.text, "nothing was aborted") {
				t.Errorf("an unknown verdict says nothing was aborted: %s", v.text)
			}
		})
	}
}
