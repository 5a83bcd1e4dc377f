package model

import (
	"fmt"
	"strings"
	"time"
)

// ActionKind names the two ways txnscope can end a transaction.
type ActionKind string

const (
	// ForceTerminate sends InitProducerId for the transactional.id to its
	// coordinator: the open transaction is aborted and the epoch bumped.
	ForceTerminate ActionKind = "force-terminate"
	// AbortPartition sends WriteTxnMarkers (abort) for one partition to its leader.
	AbortPartition ActionKind = "abort-partition"
)

// Action is an abort the user asked for, with the state it was decided on.
type Action struct {
	Kind ActionKind
	// Force-terminate.
	TransactionalID string
	Coordinator     int32
	State           State
	// Abort on a partition.
	TopicPartition
	Leader           int32
	CoordinatorEpoch int32
	StartOffset      int64
	// Both.
	ProducerID    int64
	ProducerEpoch int16
}

// Target is the thing acted on, as written in the audit log.
func (a Action) Target() string {
	if a.Kind == ForceTerminate {
		return a.TransactionalID
	}
	return fmt.Sprintf("%s-%d", a.Topic, a.Partition)
}

// Wire says exactly what will be sent.
func (a Action) Wire() string {
	if a.Kind == ForceTerminate {
		return fmt.Sprintf("InitProducerId(transactional.id=%q, producer id -1, epoch -1) to coordinator broker %d",
			a.TransactionalID, a.Coordinator)
	}
	ce := a.CoordinatorEpoch
	if ce < 0 {
		ce = 0 // what kafka-transactions.sh sends too
	}
	return fmt.Sprintf("WriteTxnMarkers(ABORT, producer id %d, epoch %d, coordinator epoch %d, %s-%d) to leader broker %d",
		a.ProducerID, a.ProducerEpoch, ce, a.Topic, a.Partition, a.Leader)
}

// Consequences are what the operator must know before confirming.
func (a Action) Consequences() []string {
	if a.Kind == ForceTerminate {
		return []string{
			fmt.Sprintf("The coordinator aborts the open transaction of %s and bumps its epoch past %d.", a.TransactionalID, a.ProducerEpoch),
			"Records written in it are discarded; read_committed consumers move past them.",
			"The live producer holding this id is fenced: a Flink job fails and restores from its last checkpoint.",
			"If Flink had already pre-committed this transaction, that checkpoint's output is lost.",
		}
	}
	return []string{
		fmt.Sprintf("The leader writes an ABORT marker for producer %d on %s-%d only; the coordinator is not told.", a.ProducerID, a.Topic, a.Partition),
		fmt.Sprintf("The records from offset %d of that transaction are discarded; the LSO moves on.", a.StartOffset),
		"Use it for a hanging transaction the coordinator no longer knows; a pre-committed Flink transaction's data is lost.",
	}
}

// CheckForceTerminate refuses when the transaction changed since the user chose
// to abort it. fresh is the id as just re-read; found is false when it is gone.
func CheckForceTerminate(a Action, fresh Txn, found bool) error {
	switch {
	case !found:
		return fmt.Errorf("refused: %s is no longer known to the coordinator", a.TransactionalID)
	case fresh.ProducerID != a.ProducerID:
		return fmt.Errorf("refused: producer id changed %d→%d since you confirmed", a.ProducerID, fresh.ProducerID)
	case fresh.ProducerEpoch != a.ProducerEpoch:
		return fmt.Errorf("refused: producer epoch changed %d→%d since you confirmed", a.ProducerEpoch, fresh.ProducerEpoch)
	case fresh.State != a.State:
		return fmt.Errorf("refused: state changed %s→%s since you confirmed", a.State, fresh.State)
	case !fresh.State.Abortable():
		return fmt.Errorf("refused: %s is %s, nothing to abort", a.TransactionalID, fresh.State)
	}
	return nil
}

// CheckAbortPartition refuses unless the producer still has the same open
// transaction on the partition and the coordinator still does not list it.
// owner is the transaction the coordinator now lists for that producer id, if any.
func CheckAbortPartition(a Action, fresh Partition, found bool, owner *Txn) error {
	if !found {
		return fmt.Errorf("refused: %s-%d could not be re-read", a.Topic, a.Partition)
	}
	pr, ok := fresh.Producer(a.ProducerID)
	switch {
	case !ok || pr.CurrentTxnStartOffset < 0:
		return fmt.Errorf("refused: producer %d no longer has an open transaction on %s-%d", a.ProducerID, a.Topic, a.Partition)
	case pr.ProducerEpoch != a.ProducerEpoch:
		return fmt.Errorf("refused: producer epoch changed %d→%d since you confirmed", a.ProducerEpoch, pr.ProducerEpoch)
	case pr.CurrentTxnStartOffset != a.StartOffset:
		return fmt.Errorf("refused: open transaction now starts at offset %d, not %d", pr.CurrentTxnStartOffset, a.StartOffset)
	case owner != nil && owner.State.Open() && owner.ProducerEpoch == a.ProducerEpoch && contains(owner.Partitions, a.TopicPartition):
		return fmt.Errorf("refused: the coordinator lists this partition in %s; use force-terminate", owner.ID)
	case owner == nil && fresh.OwnersHidden:
		// A producer id belongs to one transactional id: a visible owner
		// settles it, but none visible proves nothing when ids are hidden.
		return fmt.Errorf("refused: %s, so producer %d's transaction may belong to one you cannot see and be live, not hanging; "+
			"aborting it needs a principal allowed to DESCRIBE every transactional id", HiddenIDs, a.ProducerID)
	}
	return nil
}

func contains(tps []TopicPartition, tp TopicPartition) bool {
	for _, x := range tps {
		if x == tp {
			return true
		}
	}
	return false
}

// Orphans returns the producers with an open transaction on p that no open
// transaction listed by the coordinator accounts for: the candidates for an
// abort on the partition (KIP-664's hanging transactions).
func Orphans(p Partition, byPID map[int64]*Txn) []Producer {
	var out []Producer
	for _, pr := range p.Producers {
		if pr.CurrentTxnStartOffset < 0 {
			continue
		}
		t := byPID[pr.ProducerID]
		if t != nil && t.State.Open() && contains(t.Partitions, p.TopicPartition) {
			continue
		}
		out = append(out, pr)
	}
	return out
}

// ByProducerID indexes the transactions of s by producer id.
func ByProducerID(s *Snapshot) map[int64]*Txn {
	m := make(map[int64]*Txn, len(s.Txns))
	for i := range s.Txns {
		m[s.Txns[i].ProducerID] = &s.Txns[i]
	}
	return m
}

// Result is the outcome of one abort attempt.
type Result struct {
	Action Action
	At     time.Time
	// Refused is set when the re-check stopped the request before it was sent.
	Refused bool
	// Sent is set once the request went out.
	Sent bool
	// ErrorCode is the broker's error name when it answered with one.
	ErrorCode string
	// Err is any failure, in words.
	Err string
	// Unknown is set when the request may or may not have taken effect
	// (timeout, dropped connection).
	Unknown bool
}

// OK reports a request sent and answered without error.
func (r Result) OK() bool { return r.Sent && r.Err == "" && r.ErrorCode == "" && !r.Unknown }

// Summary is one line for the UI and the audit log.
func (r Result) Summary() string {
	switch {
	case r.Refused:
		return r.Err
	case r.Unknown:
		return "unknown outcome, re-check: " + r.Err
	case strings.HasSuffix(r.ErrorCode, "_AUTHORIZATION_FAILED"):
		return "refused by the broker: " + r.ErrorCode + ": " + r.Err + " (" + r.Action.needs() + ")"
	case r.ErrorCode != "":
		return "broker answered " + r.ErrorCode + ": " + r.Err
	case r.Err != "":
		return "failed: " + r.Err
	}
	return "sent; the broker accepted it"
}

// needs names the ACL the broker checks for the action (README, "needs").
func (a Action) needs() string {
	if a.Kind == ForceTerminate {
		return "InitProducerId needs WRITE on the transactional id"
	}
	return "WriteTxnMarkers needs CLUSTER_ACTION or ALTER on the cluster"
}
