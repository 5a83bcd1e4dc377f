package model

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ActionKind names the ways txnscope can end a transaction.
type ActionKind string

const (
	// ForceTerminate sends InitProducerId for the transactional.id to its
	// coordinator: the open transaction is aborted and the epoch bumped.
	ForceTerminate ActionKind = "force-terminate"
	// AbortPartition sends WriteTxnMarkers (abort) for one partition to its leader.
	AbortPartition ActionKind = "abort-partition"
	// Commit sends EndTxn (commit) with the transaction's own producer id
	// and epoch to its coordinator: what Flink's committer would have sent.
	Commit ActionKind = "commit"
)

// Action is an abort the operator asked for, carrying everything that tells
// the transaction they looked at from any other: the executor re-reads the
// target and compares all of it just before every request it sends
// (SameTransaction, CheckAbortPartition). Build one with
// PlanForceTerminate or PlanAbortPartition.
type Action struct {
	Kind ActionKind

	// Force-terminate. Under transaction version 1 a producer keeps its id and
	// epoch from one transaction to the next: only Start (and the partitions)
	// tell them apart.
	TransactionalID string
	State           State
	Start           time.Time // the coordinator's start of the open transaction
	Partitions      []TopicPartition
	// Coordinator and TimeoutMs say where and what to send; a coordinator
	// that moves does not make it another transaction.
	Coordinator int32
	TimeoutMs   int32

	// Abort on a partition: the producer's open transaction there, as the
	// leader reports it.
	TopicPartition
	Leader           int32
	CoordinatorEpoch int32
	StartOffset      int64
	LastWrite        time.Time // the producer's last write when planned (zero: unknown); a commit's too
	// MinIdle is the idle rule: the producer must not have written for
	// longer than this (the brokers' transaction.max.timeout.ms), or its
	// transaction may be live and merely not listed (yet) by a coordinator.
	// IdleWaived is set only when the operator explicitly asked to send anyway.
	MinIdle    time.Duration
	IdleWaived bool

	// Commit: the force-terminate's fields, and what it rests on. Verdict
	// and FlinkState are the evidence when planned; Reverify reads it again
	// before every request (nil only when Unverified: the operator's word).
	Verdict    Verdict
	FlinkState string
	Unverified bool
	Reverify   Reverify

	// All.
	ProducerID    int64
	ProducerEpoch int16
}

// RestsOnFlink reports whether a's request rests on Flink's checkpoint
// evidence, read again before it goes: a commit not on the operator's word,
// and a resolve's force-terminate.
func (a Action) RestsOnFlink() bool {
	return a.Reverify != nil || a.Kind == Commit && !a.Unverified
}

// Target is the thing acted on, as written in the audit log.
func (a Action) Target() string {
	if a.Kind != AbortPartition {
		return a.TransactionalID
	}
	return fmt.Sprintf("%s-%d", a.Topic, a.Partition)
}

// Wire says exactly what will be sent, to the broker planned.
func (a Action) Wire() string {
	switch a.Kind {
	case ForceTerminate:
		return a.WireTo(a.Coordinator, a.TimeoutMs)
	case Commit:
		return a.WireTo(a.Coordinator, 0)
	}
	return a.WireTo(a.Leader, 0)
}

// WireTo is the request as it goes out to broker (the coordinator or leader
// found by the re-read just before), with the transaction timeout sent
// (force-terminate; 0 leaves it out). The id is quoted as Go does, so no id
// can pass for the end of the request and the start of another. A commit's
// request version is chosen as it goes (CommitWire); here it is left out.
func (a Action) WireTo(broker, timeoutMs int32) string {
	if a.Kind == Commit {
		return fmt.Sprintf("EndTxn(COMMIT, transactional.id %s, producer id %d, epoch %d) to coordinator broker %d",
			strconv.Quote(a.TransactionalID), a.ProducerID, a.ProducerEpoch, broker)
	}
	if a.Kind == ForceTerminate {
		timeout := ""
		if timeoutMs > 0 {
			timeout = fmt.Sprintf(", transaction timeout %d ms", timeoutMs)
		}
		return fmt.Sprintf("InitProducerId(transactional.id %s, producer id -1, epoch -1%s) to coordinator broker %d",
			strconv.Quote(a.TransactionalID), timeout, broker)
	}
	return fmt.Sprintf("WriteTxnMarkers(ABORT, producer id %d, epoch %d, coordinator epoch %d, %s-%d) to leader broker %d",
		a.ProducerID, a.ProducerEpoch, max(a.CoordinatorEpoch, 0), a.Topic, a.Partition, broker)
}

// Consequences are what the operator must know before confirming.
func (a Action) Consequences() []string {
	if a.Kind == Commit {
		return a.commitConsequences()
	}
	if a.Kind == ForceTerminate {
		return []string{
			"The live producer holding this id is fenced: a Flink job fails and restores from its last checkpoint.",
			fmt.Sprintf("The coordinator aborts this open transaction of %s and bumps its epoch past %d.", a.TransactionalID, a.ProducerEpoch),
			"Records written in it are discarded; read_committed consumers move past them.",
			"If Flink had already pre-committed this transaction, that checkpoint's output is lost.",
		}
	}
	return []string{
		fmt.Sprintf("The leader writes an ABORT marker for producer %d on %s-%d only; the coordinator is not told.", a.ProducerID, a.Topic, a.Partition),
		fmt.Sprintf("The records from offset %d of that transaction are discarded; the LSO moves on.", a.StartOffset),
		"Use it for a hanging transaction the coordinator no longer knows; a pre-committed Flink transaction's data is lost.",
	}
}

// Facts identify the transaction being confirmed, one "label  value" line
// each: the dialog and the one-shot prompt both show them.
func (a Action) Facts(now time.Time, loc *time.Location) []string {
	if a.Kind != AbortPartition {
		facts := []string{
			// Whole, wrapped if need be: a title may be clipped, and Flink
			// ids differ only in their last characters.
			"id           " + a.TransactionalID,
			fmt.Sprintf("transaction  %s since %s, timeout %s", a.State, stamp(a.Start, now, loc), Short(time.Duration(a.TimeoutMs)*time.Millisecond)),
			fmt.Sprintf("producer     id %d, epoch %d, coordinator broker %d", a.ProducerID, a.ProducerEpoch, a.Coordinator),
			"partitions   " + partitionList(a.Partitions),
		}
		if a.Kind == Commit && a.Unverified && JobOf(a.TransactionalID).Job.Family != FlinkSink {
			facts = append(facts, "last write   "+stamp(a.LastWrite, now, loc))
		}
		if a.Kind == Commit {
			facts = append(facts, a.verdictFact())
		}
		if a.Verdict.Kind != "" && !a.Unverified {
			facts = append(facts, a.basisFact())
		}
		return facts
	}
	idle := "set aside: its producer may still be live"
	if !a.IdleWaived {
		idle = fmt.Sprintf("must stay idle over %s (transaction.max.timeout.ms)", Short(a.MinIdle))
	}
	return []string{
		fmt.Sprintf("partition    %s-%d, leader broker %d", a.Topic, a.Partition, a.Leader),
		fmt.Sprintf("producer     id %d, epoch %d, coordinator epoch %d", a.ProducerID, a.ProducerEpoch, a.CoordinatorEpoch),
		fmt.Sprintf("transaction  open from offset %d; last write %s", a.StartOffset, stamp(a.LastWrite, now, loc)),
		"idle         " + idle,
	}
}

// stamp is a time as the operator reads it: the clock with milliseconds (two
// transactions of one producer may start in the same second), the date when
// it is not today, and how long ago.
func stamp(t, now time.Time, loc *time.Location) string {
	if t.IsZero() {
		return "an unknown time"
	}
	if loc == nil {
		loc = time.Local
	}
	layout := "15:04:05.000 MST"
	if y, m, d := t.In(loc).Date(); y != now.In(loc).Year() || m != now.In(loc).Month() || d != now.In(loc).Day() {
		layout = "2006-01-02 15:04:05.000 MST"
	}
	return fmt.Sprintf("%s (%s ago)", t.In(loc).Format(layout), Short(now.Sub(t)))
}

// Short is a duration rounded for reading: 850ms, 12s, 4m12s, 3h05m.
func Short(d time.Duration) string {
	switch {
	case d < 0:
		return "-" + Short(-d)
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(time.Second).String()
	case d < time.Hour:
		d = d.Round(time.Second)
		return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	}
	d = d.Round(time.Minute)
	return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
}

func partitionList(tps []TopicPartition) string {
	if len(tps) == 0 {
		return "none listed"
	}
	const show = 6
	parts := make([]string, 0, show+1)
	for i, tp := range tps {
		if i == show {
			parts = append(parts, fmt.Sprintf("… and %d more", len(tps)-show))
			break
		}
		parts = append(parts, fmt.Sprintf("%s-%d", tp.Topic, tp.Partition))
	}
	return strings.Join(parts, ", ")
}

// ConfirmWord is what the operator types to send a; no single key can. An
// abort that sets aside the idle rule takes a longer phrase, so it is never
// sent by habit.
func (a Action) ConfirmWord() string {
	if a.Kind == Commit {
		return "commit"
	}
	if a.Kind == AbortPartition && a.IdleWaived {
		return "abort anyway"
	}
	return "abort"
}

// needs names the ACL the broker checks for the action (README, "needs").
func (a Action) needs() string {
	if a.Kind == Commit {
		return "EndTxn needs WRITE on the transactional id"
	}
	if a.Kind == ForceTerminate {
		return "InitProducerId needs WRITE on the transactional id"
	}
	return "WriteTxnMarkers needs CLUSTER_ACTION or ALTER on the cluster"
}
