package model

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// SameTransaction refuses unless fresh, the id as just re-read, is still the
// very transaction a was planned on: same producer id, epoch, state, start
// time and partitions. found is false when the id is gone. Every action on
// a transactional id (force-terminate, commit, a resolve's steps) re-checks
// with it just before its request; the error says what changed, and what
// that means for what a meant to do.
func SameTransaction(a Action, fresh Txn, found bool) error {
	// The most telling difference first: what the transaction became, then
	// whether another one began, then the epoch alone (a fence).
	sameStart := fresh.StartTime().Equal(a.Start)
	switch {
	case !found:
		return fmt.Errorf("refused: %s is no longer known to its coordinator (expired or deleted)", a.TransactionalID)
	case fresh.ProducerID != a.ProducerID && a.ProducerEpoch >= EpochWarnAt:
		return fmt.Errorf("refused: producer id changed %d→%d since it was shown: the coordinator rotated it, its epochs having run out at epoch %d; "+
			"the transaction shown ended then", a.ProducerID, fresh.ProducerID, EpochRotatesAt)
	case fresh.ProducerID != a.ProducerID:
		return fmt.Errorf("refused: producer id changed %d→%d since it was shown: another producer took the id", a.ProducerID, fresh.ProducerID)
	case fresh.State != a.State && (sameStart || fresh.State == Empty):
		if a.Kind == Commit {
			return fmt.Errorf("refused: it is %s now%s%s", fresh.State, commitMeaning(fresh.State), epochNote(a, fresh))
		}
		return fmt.Errorf("refused: state changed %s→%s since it was shown%s%s", a.State, fresh.State, stateMeaning(fresh.State), epochNote(a, fresh))
	case !sameStart:
		return fmt.Errorf("refused: this is a newer transaction of %s: it started at %s, the one shown started at %s; "+
			"the one shown has ended%s", a.TransactionalID, ClockMs(fresh.StartTime()), ClockMs(a.Start), epochNote(a, fresh))
	case fresh.ProducerEpoch != a.ProducerEpoch:
		return fmt.Errorf("refused: producer epoch changed %d→%d since it was shown: the producer was fenced", a.ProducerEpoch, fresh.ProducerEpoch)
	case !slices.Equal(fresh.Partitions, a.Partitions):
		return fmt.Errorf("refused: its partitions changed since they were shown (%s); look again", partitionDiff(a.Partitions, fresh.Partitions))
	case a.Kind == ForceTerminate && !fresh.State.Abortable():
		return fmt.Errorf("refused: %s is %s, nothing to abort", a.TransactionalID, fresh.State)
	}
	return nil
}

func epochNote(a Action, fresh Txn) string {
	if fresh.ProducerEpoch == a.ProducerEpoch {
		return ""
	}
	return fmt.Sprintf(" (epoch %d→%d)", a.ProducerEpoch, fresh.ProducerEpoch)
}

func stateMeaning(s State) string {
	switch s {
	case PrepareCommit:
		return ": it is committing"
	case CompleteCommit:
		return ": it committed"
	case PrepareAbort, PrepareEpochFence:
		return ": it is being aborted already"
	case CompleteAbort:
		return ": it was aborted already"
	case Empty:
		return ": it ended"
	}
	return ""
}

// Aborting reports whether fresh shows a's transaction aborted, or being
// aborted, by its coordinator: the same producer and start, a higher epoch (a
// fence bumps it) and an abort under way or done. After a force-terminate was
// answered CONCURRENT_TRANSACTIONS, that is the request having taken effect.
func Aborting(a Action, fresh Txn) bool {
	return abortedUp(a, fresh) && fresh.StartTime().Equal(a.Start)
}

// AbortingNewer reports whether fresh shows a transaction of a's producer
// that began after the one a was planned on being aborted one epoch or more
// up: what a fence leaves when it landed after the one shown had ended and
// the next begun.
func AbortingNewer(a Action, fresh Txn) bool {
	return abortedUp(a, fresh) && fresh.StartTime().After(a.Start)
}

func abortedUp(a Action, fresh Txn) bool {
	switch fresh.State {
	case PrepareEpochFence, PrepareAbort, CompleteAbort:
		return fresh.ProducerID == a.ProducerID && fresh.ProducerEpoch > a.ProducerEpoch
	}
	return false
}

// CheckAbortPartition refuses unless the producer still has the very open
// transaction a was planned on at the partition (same epoch, coordinator
// epoch and start offset), no coordinator lists the partition in an open
// transaction of that producer, and, unless the operator set it aside, the
// producer is still idle past the idle rule. owner is the transaction the
// coordinators now list for the producer id, if any.
func CheckAbortPartition(a Action, fresh Partition, found bool, owner *Txn, now time.Time) error {
	if !found {
		return fmt.Errorf("refused: %s-%d could not be re-read", a.Topic, a.Partition)
	}
	pr, ok := fresh.Producer(a.ProducerID)
	switch {
	case !ok || pr.CurrentTxnStartOffset < 0:
		return fmt.Errorf("refused: producer %d no longer has an open transaction on %s-%d", a.ProducerID, a.Topic, a.Partition)
	case pr.ProducerEpoch != a.ProducerEpoch:
		return fmt.Errorf("refused: producer epoch changed %d→%d since it was shown", a.ProducerEpoch, pr.ProducerEpoch)
	case pr.CurrentTxnStartOffset != a.StartOffset:
		return fmt.Errorf("refused: this is a newer transaction: it starts at offset %d, the one shown at %d", pr.CurrentTxnStartOffset, a.StartOffset)
	case pr.CoordinatorEpoch != a.CoordinatorEpoch:
		return fmt.Errorf("refused: coordinator epoch changed %d→%d since it was shown: its coordinator moved and wrote to it", a.CoordinatorEpoch, pr.CoordinatorEpoch)
	case owner != nil && owner.State.Open() && slices.Contains(owner.Partitions, a.TopicPartition):
		// Whatever its epoch: under transaction version 2 a transaction being
		// committed is listed one epoch up while the partition still shows
		// it at its own, and a marker now would break its atomicity.
		return fmt.Errorf("refused: the coordinator lists this partition in %s (%s, epoch %d); use force-terminate, or wait for it to end",
			owner.ID, owner.State, owner.ProducerEpoch)
	case owner == nil && fresh.OwnersHidden:
		// A producer id belongs to one transactional id: a visible owner
		// settles it, but none visible proves nothing when ids are hidden.
		return fmt.Errorf("refused: %s, so producer %d's transaction may belong to one you cannot see and be live, not hanging; "+
			"aborting it needs a principal allowed to DESCRIBE every transactional id", HiddenIDs, a.ProducerID)
	case !a.IdleWaived && a.MinIdle <= 0:
		return fmt.Errorf("refused: no idle threshold was set for the abort and the rule was not set aside")
	case !a.IdleWaived && !idleOver(pr, now, a.MinIdle):
		return fmt.Errorf("refused: %s", a.notIdle(pr, now))
	}
	return nil
}

// ClockMs is a time of day to the millisecond: transactions of one producer
// may begin within the same second.
func ClockMs(t time.Time) string {
	if t.IsZero() {
		return "an unknown time"
	}
	return t.Format("15:04:05.000")
}

func partitionDiff(was, now []TopicPartition) string {
	var added, gone []string
	for _, tp := range now {
		if !slices.Contains(was, tp) {
			added = append(added, fmt.Sprintf("%s-%d", tp.Topic, tp.Partition))
		}
	}
	for _, tp := range was {
		if !slices.Contains(now, tp) {
			gone = append(gone, fmt.Sprintf("%s-%d", tp.Topic, tp.Partition))
		}
	}
	var parts []string
	if len(added) > 0 {
		parts = append(parts, "now also "+strings.Join(added, ", "))
	}
	if len(gone) > 0 {
		parts = append(parts, "no longer "+strings.Join(gone, ", "))
	}
	return strings.Join(parts, "; ")
}
