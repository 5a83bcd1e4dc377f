package kafkaadmin

import (
	"context"
	"fmt"

	"github.com/txnscope/txnscope/model"
)

// Every action on a transactional id re-reads it just before its request
// (model.SameTransaction), and one that rests on Flink's checkpoints asks
// that evidence again too: the planning's answers are never reused.

// rereadTxn describes id at its coordinator. fresh.StartTime() is the coordinator's
// start timestamp whatever the state, so that a transaction being aborted is
// still recognised.
func (c *Client) rereadTxn(ctx context.Context, id string) (fresh model.Txn, found bool, err error) {
	d := c.describeChunk(ctx, []string{id})[id]
	switch {
	case d.denied != "":
		return model.Txn{}, false, fmt.Errorf("%s to re-read %s: %s (%s)", model.NoPermission, id, d.denied, needDescribe)
	case d.err != "":
		return model.Txn{}, false, fmt.Errorf("could not re-read %s: %s", id, d.err)
	case d.gone:
		return model.Txn{}, false, nil
	}
	fresh = d.txn
	fresh.SetStart(d.start)
	return fresh, true, nil
}

// reverify asks a's checkpoint evidence again for fresh, the transaction as
// just re-read, records what was read (whether the request goes on it or is
// refused for it), checks it (model.CheckEvidence), and re-reads the
// transaction once more: asking Flink takes up to the timeout, and nothing
// but the request itself may come between the last look and the send.
func (c *Client) reverify(ctx context.Context, a model.Action, rec model.Recorder, fresh model.Txn) (model.Txn, error) {
	if a.Reverify == nil {
		return fresh, fmt.Errorf("refused: there is no checkpoint evidence to read again before sending")
	}
	ev, err := a.Reverify(ctx, fresh)
	if err != nil {
		return fresh, fmt.Errorf("refused: the checkpoint evidence could not be read again: %w", err)
	}
	rec.Rests(ev)
	if err := model.CheckEvidence(a, ev); err != nil {
		return fresh, err
	}
	fresh, found, err := c.rereadTxn(ctx, a.TransactionalID)
	if err != nil {
		return fresh, fmt.Errorf("refused: %w", err)
	}
	return fresh, model.SameTransaction(a, fresh, found)
}
