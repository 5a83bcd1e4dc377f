package model

import (
	"fmt"
	"time"
)

// Under transaction version 2 every commit and abort bumps the producer
// epoch. The coordinator keeps 32767 (Short.MaxValue) for fencing: the end of
// the transaction at epoch EpochRotatesAt gives the id a new producer id at
// epoch 0 (it rotates). A producer that keeps its id forever (Flink's POOLING
// slots, a Kafka Streams thread) gets there: at one checkpoint every 10 s, in
// about four days. Flink's committables carry the producer id and epoch of
// their transaction (FLINK-40689): a checkpoint taken before the rotation
// names a producer id the coordinator no longer has.
const EpochRotatesAt = 32766

// The epoch warning: an id past half its epochs that rotates within
// EpochWarnWithin at its rate, or one past EpochWarnAt whatever its rate (a
// rate is known only once two of its transactions were seen ending). The
// half keeps a job that checkpoints every second, which rotates every nine
// hours, from being warned of all the time.
const (
	EpochWarnWithin = 24 * time.Hour
	EpochWarnHalf   = 1 << 14
	EpochWarnAt     = 30000
)

// EpochOutlook is where one id's producer epoch stands against the rotation.
type EpochOutlook struct {
	ID         string
	ProducerID int64
	Epoch      int16
	// PerHour is how fast the epoch rose over the id's recent transactions
	// of this producer id (0: not known, or it did not rise).
	PerHour float64
	// Rotates is when the producer id rotates at that rate (zero: not known).
	Rotates time.Time
}

// Left is how many more transactions of this producer id end, the one
// whose end rotates it included: an id at epoch e runs its next
// transaction at e, and its end bumps it (Kafka 4.4: the end at
// EpochRotatesAt is written at 32767 with the next producer id, and
// completes on it at epoch 0).
func (o EpochOutlook) Left() int { return max(EpochRotatesAt+1-int(o.Epoch), 0) }

// Warn reports whether the rotation is near enough to say so.
func (o EpochOutlook) Warn(now time.Time) bool {
	if o.ID == "" {
		return false
	}
	return o.Epoch >= EpochWarnAt || o.Epoch >= EpochWarnHalf && !o.Rotates.IsZero() && o.Rotates.Sub(now) <= EpochWarnWithin
}

// Sooner reports whether o rotates before p: by time when both rates are
// known, else by the higher epoch.
func (o EpochOutlook) Sooner(p EpochOutlook) bool {
	switch {
	case o.ID == "" || p.ID == "":
		return p.ID == "" && o.ID != ""
	case !o.Rotates.IsZero() && !p.Rotates.IsZero():
		return o.Rotates.Before(p.Rotates)
	}
	return o.Epoch > p.Epoch
}

// String says it in a line: "epoch 31200 of 32766, 1566 transactions left,
// ~340/h: rotates in ~4h36m".
func (o EpochOutlook) String(now time.Time) string {
	s := fmt.Sprintf("%s at epoch %d of %d, %d %s left", o.ID, o.Epoch, EpochRotatesAt, o.Left(), plural(o.Left(), "transaction", "transactions"))
	if o.Rotates.IsZero() {
		return s + " (rate not known yet)"
	}
	return s + fmt.Sprintf(", %s: the producer id rotates in ~%s", perHour(o.PerHour), short(max(o.Rotates.Sub(now), 0).Round(time.Minute)))
}

func perHour(v float64) string {
	if v >= 10 {
		return fmt.Sprintf("~%.0f/h", v)
	}
	return fmt.Sprintf("~%.1f/h", v)
}

// OutlookOf is t's epoch outlook from fin, its recent finished transactions
// (newest last, History's Finished). The rate is the rise of the epoch over
// those of t's producer id: none (TV1 commits keep the epoch), or fewer than
// two, say nothing of it.
func OutlookOf(t Txn, fin []FinishedTxn) EpochOutlook {
	o := EpochOutlook{ID: t.ID, ProducerID: t.ProducerID, Epoch: t.ProducerEpoch}
	first, last := -1, -1
	for i, f := range fin {
		if f.ProducerID != t.ProducerID {
			continue
		}
		if first < 0 {
			first = i
		}
		last = i
	}
	if first < 0 || first == last {
		return o
	}
	a, b := fin[first], fin[last]
	rise, span := int(b.ProducerEpoch)-int(a.ProducerEpoch), b.EndMs-a.EndMs
	if rise <= 0 || span <= 0 {
		return o
	}
	o.PerHour = float64(rise) / (float64(span) / float64(time.Hour/time.Millisecond))
	left := float64(max(EpochRotatesAt+1-int(max(t.ProducerEpoch, b.ProducerEpoch)), 0))
	o.Rotates = b.End().Add(time.Duration(left / o.PerHour * float64(time.Hour)))
	return o
}

// RotatedAway reports whether a committable's producer id is one the
// coordinator rotated away from: its epoch was at the end of the range and
// the id has another producer id now. A producer id changes only when its
// epochs run out (an InitProducerId keeps it and bumps the epoch), so a
// committable far from the end with another producer id is another story.
func RotatedAway(cm *Committable, pid int64) bool {
	return cm != nil && cm.ProducerID != pid && cm.Epoch >= EpochWarnAt
}

// rotated reports whether n's producer id is the rotation of p's: under
// transaction version 2, p near the end of its epochs and n on another
// producer id. A new producer on the id would have kept p's producer id
// (InitProducerId bumps the epoch), so this is no takeover.
func rotated(p, n Txn, tv2 bool) bool {
	return tv2 && p.ProducerID >= 0 && n.ProducerID >= 0 && n.ProducerID != p.ProducerID && p.ProducerEpoch >= EpochWarnAt
}

func rotatedEvent(at time.Time, p, n Txn) Event {
	return ev(at, n, Rotated, fmt.Sprintf("producer id %d→%d: epoch %d ran out", p.ProducerID, n.ProducerID, EpochRotatesAt))
}
