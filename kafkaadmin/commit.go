package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/model"
)

// maxCommitAttempts bounds the EndTxn requests of one commit: only answers
// that say the coordinator did nothing are retried, each after a re-read.
const maxCommitAttempts = 10

// commit sends EndTxn(commit) to the transaction's coordinator with the
// producer id and epoch of its committable (the transaction's own, when the
// verdict rests on Flink's statistics or the operator's word): the request
// Flink's committer would have sent had it lived. Before every request the transaction is re-read and must
// still be the very one confirmed (model.SameTransaction), and the checkpoint
// evidence is read afresh and must still say checkpointed
// (model.CheckCommitEvidence), so that no commit rests on one old answer.
//
// Kafka offers no conditional commit: under transaction version 1 a
// producer that committed the one shown and began the next, with the same
// producer id and epoch, would have that next one committed by a request on
// its way. The logs of the partitions, from marks noted before the re-check,
// tell afterwards what the request hit.
func (c *Client) commit(ctx context.Context, a model.Action, rec model.Recorder) model.Result {
	switch {
	case a.TransactionalID == "":
		return refused("refused: no transactional.id given")
	case !a.Unverified && a.Reverify == nil:
		return refused("refused: the commit has no checkpoint evidence to re-read before sending; nothing sent")
	}
	start := time.Now()
	marks := c.noteMarks(ctx, a)
	// Asked before the re-check: nothing but the request itself may come
	// between the last look and the send.
	version, why := c.endTxnVersion(ctx, a.Coordinator)
	var r model.Result
	for try := 1; ; try++ {
		if try > 1 && c.committing(ctx, a) {
			// A coordinator that resigns as it writes PrepareCommit answers
			// NOT_COORDINATOR; CONCURRENT_TRANSACTIONS may be the commit
			// completing: the very transaction committing now is done, and
			// its markers say so.
			done := model.Result{Sent: true, Sends: r.Sends, Request: r.Request}
			done = c.afterCommit(ctx, a, marks, done)
			done.After = "the coordinator answered " + r.ErrorCode + " and the re-read shows it committing; " + done.After
			return done
		}
		fresh, stop := c.beforeCommit(ctx, a, rec, r, try, start)
		if stop != nil {
			return *stop
		}
		req := kmsg.NewPtrEndTxnRequest()
		// The committable's producer id and epoch, which the re-check just
		// found to be fresh's: what Flink's committer would send.
		pid, epoch := model.CommitTarget(a)
		if pid != fresh.ProducerID || epoch != fresh.ProducerEpoch {
			return model.Result{Refused: try == 1, Sent: r.Sends > 0, Sends: r.Sends, Request: r.Request,
				Err: fmt.Sprintf("refused: the committable is pid %d epoch %d, the transaction re-read is pid %d epoch %d", pid, epoch, fresh.ProducerID, fresh.ProducerEpoch)}
		}
		req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = a.TransactionalID, pid, epoch, true
		r.ErrorCode, r.Err = "", ""
		resp, next := c.send(ctx, rec, try, fresh.Coordinator, endTxnAt{req, version}, a.CommitWire(fresh.Coordinator, version)+" ("+why+")", r)
		r = next
		if resp == nil {
			return r
		}
		ke := kerr.ErrorForCode(resp.(*kmsg.EndTxnResponse).ErrorCode)
		if ke == nil {
			return c.afterCommit(ctx, a, marks, r)
		}
		if answered(&r, ke) {
			return r
		}
		switch {
		case errors.Is(ke, kerr.ConcurrentTransactions):
			// A transition of the id is under way: the re-read tells which.
			r.Err = "the coordinator is completing a transition of the id"
		case errors.Is(ke, kerr.CoordinatorLoadInProgress), errors.Is(ke, kerr.NotCoordinator), errors.Is(ke, kerr.CoordinatorNotAvailable):
			// Refused before the coordinator did anything.
		default:
			return c.commitRefused(ctx, a, r)
		}
		if !sleep(ctx, time.Duration(try)*100*time.Millisecond) {
			r.Err += "; interrupted before it was re-read"
			return r
		}
	}
}

// beforeCommit re-reads the transaction and its evidence before request
// number try and returns the transaction when the request may go; otherwise
// stop is how the commit ends: refused on the first try, and after an
// answer that did nothing, what the re-read showed.
func (c *Client) beforeCommit(ctx context.Context, a model.Action, rec model.Recorder, r model.Result, try int, start time.Time) (model.Txn, *model.Result) {
	end := func(err error) (model.Txn, *model.Result) {
		if try == 1 {
			return model.Txn{}, &model.Result{Refused: true, Err: err.Error(), JobWide: jobWide(err)}
		}
		r.Err += "; then it was re-read: " + trimRefused(err) + "; so it was not retried"
		r.JobWide = jobWide(err)
		return model.Txn{}, &r
	}
	fresh, found, err := c.rereadTxn(ctx, a.TransactionalID)
	if err != nil {
		return end(fmt.Errorf("refused: %w", err))
	}
	if err := model.SameTransaction(a, fresh, found); err != nil {
		return end(err)
	}
	if a.RestsOnFlink() {
		if fresh, err = c.reverify(ctx, a, rec, fresh); err != nil {
			return end(err)
		}
	}
	if try > maxCommitAttempts || try > 1 && time.Since(start) >= c.cfg.Timeout {
		r.Err += fmt.Sprintf("; gave up after %d requests, the transaction still open as it was", r.Sends)
		return model.Txn{}, &r
	}
	return fresh, nil
}

// jobWide reports a refusal that holds for the whole job (model.JobWideError).
func jobWide(err error) bool {
	var e *model.JobWideError
	return errors.As(err, &e)
}

// committing reports a's very transaction (its producer id and start) now
// PrepareCommit or CompleteCommit.
func (c *Client) committing(ctx context.Context, a model.Action) bool {
	fresh, found, err := c.rereadTxn(ctx, a.TransactionalID)
	return err == nil && found && fresh.ProducerID == a.ProducerID && fresh.StartTime().Equal(a.Start) &&
		(fresh.State == model.PrepareCommit || fresh.State == model.CompleteCommit)
}

// commitRefused reports an answer that refused the commit (the producer was
// fenced, the id is in another state), with what a re-read shows now.
func (c *Client) commitRefused(ctx context.Context, a model.Action, r model.Result) model.Result {
	fresh, found, err := c.rereadTxn(ctx, a.TransactionalID)
	switch {
	case err != nil:
		r.Err += "; it could not be re-read afterwards: " + err.Error()
	case !found:
		r.Err += "; it is no longer known to its coordinator"
	default:
		r.Err += fmt.Sprintf("; nothing was committed: now %s at epoch %d%s", fresh.State, fresh.ProducerEpoch, commitNow(a, fresh))
	}
	return r
}

// commitNow says what fresh means for the transaction confirmed.
func commitNow(a model.Action, fresh model.Txn) string {
	switch {
	case fresh.ProducerID != a.ProducerID || !fresh.StartTime().Equal(a.Start):
		return " (another transaction of the id)"
	case fresh.State == model.PrepareEpochFence || fresh.State == model.PrepareAbort || fresh.State == model.CompleteAbort:
		return " (aborted: its timeout, or a new producer fenced it; its records are lost)"
	}
	return ""
}

// markerWait is how long the outcome is awaited in the logs: the
// coordinator answers once PrepareCommit is written, and writes the markers
// after.
const markerWait = 5 * time.Second

// afterCommit reads what a commit answered without an error did, from the
// logs of the partitions of the one confirmed: its COMMIT marker, and
// nothing newer of the producer committed after it.
func (c *Client) afterCommit(ctx context.Context, a model.Action, marks []mark, r model.Result) model.Result {
	deadline := time.Now().Add(markerWait)
	for {
		if ctx.Err() != nil {
			r.Unknown, r.Err = true, "interrupted before the outcome could be read"
			return r
		}
		trails := c.readTrails(ctx, marks)
		fresh, found, err := c.rereadTxn(ctx, a.TransactionalID)
		now := "it could not be re-read afterwards"
		switch {
		case err == nil && found:
			now = fmt.Sprintf("now %s at epoch %d", fresh.State, fresh.ProducerEpoch)
		case err == nil:
			now = "it is no longer known to its coordinator"
		}
		v := judgeCommit(a, trails)
		if err == nil && found && newerCommitting(a, fresh) {
			// Its markers may not be written yet: the logs alone would show
			// only the one confirmed, committed by its producer before.
			v = commitVerdict{unknown: true, text: fmt.Sprintf("a newer transaction of %s (begun %s, same producer id and epoch) is %s at its coordinator: this request may have committed it before its producer meant to",
				a.TransactionalID, fresh.StartTime().UTC().Format("15:04:05.000"), fresh.State)}
		}
		switch {
		case v.unknown:
			r.Unknown, r.Err = true, v.text+"; "+now
			return r
		case v.committed && v.whole:
			r.After = v.text + "; " + now
			return r
		case v.aborted:
			r.Err = v.text + "; " + now
			return r
		case time.Now().Before(deadline) && sleep(ctx, 200*time.Millisecond):
			continue
		case v.committed:
			r.After = v.text + "; " + now
			return r
		case err == nil && found && fresh.ProducerID == a.ProducerID && fresh.StartTime().Equal(a.Start) &&
			(fresh.State == model.PrepareCommit || fresh.State == model.CompleteCommit):
			r.After = "the coordinator has it " + fresh.State.String() + "; " + v.text
			return r
		}
		r.Unknown, r.Err = true, "the coordinator answered without an error, but "+v.text+"; "+now
		return r
	}
}

// newerCommitting reports fresh, the id's transaction at its coordinator
// after the EndTxn, being committed while it is not the one confirmed but a
// later one of the same producer id and epoch: under transaction version 1
// nothing tells the coordinator which of the two a commit was meant for.
func newerCommitting(a model.Action, fresh model.Txn) bool {
	return fresh.ProducerID == a.ProducerID && fresh.ProducerEpoch == a.ProducerEpoch && !fresh.StartTime().IsZero() && !fresh.StartTime().Equal(a.Start) &&
		(fresh.State == model.PrepareCommit || fresh.State == model.CompleteCommit)
}

// A commitVerdict is what the logs say a commit did.
type commitVerdict struct {
	committed bool // the one confirmed has its COMMIT marker
	whole     bool // read on every one of its partitions
	aborted   bool // the one confirmed has its ABORT marker
	unknown   bool // a newer transaction was committed after it: maybe by this request
	text      string
}

func judgeCommit(a model.Action, trails []trail) commitVerdict {
	var v commitVerdict
	for _, tr := range trails {
		if tr.ended != model.NoState && tr.commitAt >= 0 {
			return commitVerdict{unknown: true, text: fmt.Sprintf("%s; a newer transaction of %s began after it (at offset %d of %s) and has a COMMIT marker at offset %d: this request may have committed it before its producer meant to",
				shownText(tr), a.TransactionalID, tr.newerAt, partText(tr.at), tr.commitAt)}
		}
	}
	read, committedAll := 0, true
	for _, tr := range trails {
		switch tr.ended {
		case model.CompleteAbort:
			return commitVerdict{aborted: true, text: fmt.Sprintf("its ABORT marker is at offset %d of %s: it was aborted before the commit arrived (its timeout, or a fence); its records are lost", tr.endedAt, partText(tr.at))}
		case model.CompleteCommit:
			read++
			if v.text == "" {
				v.text = fmt.Sprintf("its COMMIT marker is at offset %d of %s", tr.endedAt, partText(tr.at))
			}
		default:
			committedAll = false
		}
	}
	v.committed = read > 0
	v.whole = read > 0 && committedAll && len(trails) == len(a.Partitions)
	switch {
	case read == 0:
		v.text = "no COMMIT marker of it could be read yet"
	case !v.whole:
		v.text += fmt.Sprintf(" (read on %d of its %d partitions)", read, len(a.Partitions))
	case len(a.Partitions) > 1:
		v.text = fmt.Sprintf("its COMMIT markers are on all %d of its partitions (%s)", len(a.Partitions), strings.TrimPrefix(v.text, "its COMMIT marker is "))
	}
	return v
}

// endTxnAt is an EndTxn sent at no newer version than max: kgo would send
// the newest both sides speak (endTxnVersion says why not).
type endTxnAt struct {
	*kmsg.EndTxnRequest
	max int16
}

func (r endTxnAt) MaxVersion() int16 { return r.max }

// endTxnVersion is the EndTxn version to send, and why: v4, the request
// of a client that speaks transaction version 1, whatever the transaction's
// own client spoke. That is what a restored Flink job's committer sends for
// the same transaction (it resumes the producer id and epoch without
// initializing them), and on Kafka 4.4 its commit is then accepted as a
// retry. After a v5 commit (transaction version 2 bumps the epoch) Flink 2.2
// restored from the checkpoint logged "already fenced … most likely signals
// data loss" for records that were all there.
func (c *Client) endTxnVersion(ctx context.Context, coordinator int32) (int16, string) {
	lo, hi, err := c.endTxnRange(ctx, coordinator)
	switch {
	case err != nil:
		return 4, "the broker's versions could not be read: " + errText(err)
	case hi < 4:
		return hi, fmt.Sprintf("the coordinator serves EndTxn up to v%d", hi)
	case lo > 4:
		return lo, fmt.Sprintf("the coordinator serves EndTxn from v%d", lo)
	}
	return 4, "as a restored Flink committer sends it"
}

// endTxnRange asks broker which EndTxn versions it serves.
func (c *Client) endTxnRange(ctx context.Context, broker int32) (lo, hi int16, err error) {
	av, err := c.apiVersions(ctx, c.kgo.Broker(int(broker)))
	if err != nil {
		return 0, 0, err
	}
	for _, k := range av.ApiKeys {
		if k.ApiKey == int16(kmsg.EndTxn) {
			return k.MinVersion, k.MaxVersion, nil
		}
	}
	return 0, 0, errors.New("the broker does not serve EndTxn")
}
