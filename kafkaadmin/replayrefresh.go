package kafkaadmin

import (
	"context"
	"time"

	"github.com/txnscope/txnscope/model"
)

// RefreshReplayed is Refresh for a caller that replays the coordinators'
// log anyway (a snapshot's history): one read of the log from its start,
// up to the end the refresh's own partition scan saw, gives both the events
// at or after since (the newest limit, as Replay) and every id's row, so no
// id is listed or described. At 2,000,000 ids the listing and the describes
// were 23 s of a 55 s snapshot.
//
// The rows are listed and described as by Refresh instead when the log
// cannot give them: a record that could not be read stands between an id
// and its row, or ACLs hide ids that the log would show. Source.Why then
// says why. The replay is nil, with why saying so, when the log could not
// be read at all (no READ on it, kfake); the error is the cluster's, as
// Refresh's.
func (c *Client) RefreshReplayed(ctx context.Context, since time.Time, limit int) (snap *model.Snapshot, r *model.Replayed, why string, err error) {
	// The ACL probe's answer must be in before the rows are chosen.
	if brokers, _, err := c.clusterMetadata(withSilentNodes(ctx)); err == nil {
		c.brokerSettings(ctx, brokers)
	}
	why = "the coordinators' log was not read"
	rows := func(ctx context.Context, early *earlyScan) (*model.Snapshot, []model.Event, model.Source, bool) {
		var ends map[int32]int64
		select {
		case got := <-early.ends:
			if got.err != nil {
				why = logWhy(got.err)
				return nil, nil, model.Source{}, false
			}
			ends = got.ends
		case <-ctx.Done():
			why = ctx.Err().Error()
			return nil, nil, model.Source{}, false
		}
		rp, res, _, err := c.replayLog(ctx, ends, since, limit)
		if err != nil {
			why = err.Error()
			return nil, nil, model.Source{}, false
		}
		r, why = &res, ""
		c.mu.Lock()
		hidden := c.settings.idsHidden
		c.mu.Unlock()
		if hidden {
			return nil, nil, model.Source{Why: "ACLs hide some transactional ids, which the log would show"}, false
		}
		s, ok := rp.Snapshot(func(p int32) int32 {
			l, _ := early.meta.leaderOf(tp{Topic: txnStateTopic, Partition: p})
			return l
		})
		if !ok {
			return nil, nil, model.Source{Why: model.UnreadLine(res.Unread)}, false
		}
		return s, nil, model.Source{Log: true}, true
	}
	snap, err = c.refresh(ctx, nil, -1, rows)
	return snap, r, why, err
}
