package model

// TxnPartition is one partition as seen from one transaction: its offsets and
// producers, who holds its LSO, and which producers there no coordinator
// accounts for (what an abort on the partition could end). The detail of a
// transaction shows one per row; the partition detail one with no
// transaction of its own (PinnedPartition).
type TxnPartition struct {
	TopicPartition
	Part  Partition // offsets and producers; meaningful when Known
	Known bool
	// Listed is false for a partition the coordinator does not list in this
	// transaction although its producer has an open transaction there.
	Listed bool
	Own    Producer // this transaction's producer on the partition
	HasOwn bool
	// PinsLSO: this transaction's start offset is what holds the LSO back.
	PinsLSO   bool
	Pinner    Producer
	HasPinner bool
	PinnerID  string           // the id the coordinator lists for the pinner's producer id
	Orphans   []Producer       // open here, accounted for by no open transaction
	Owners    map[int64]string // transactional.id per producer id, for the producer pane
}

// Abortable reports whether an abort on this partition is possible.
func (p TxnPartition) Abortable() bool { return len(p.Orphans) > 0 }

// AbortTarget is the hanging producer an abort on this partition ends,
// preferring pid (the transaction the operator is looking at), then the
// producer pinning the LSO (see AbortTarget). The detail's hint and the
// dialog both ask here, so they cannot name different producers.
func (p TxnPartition) AbortTarget(pid int64) (Producer, bool) {
	var pinner *Producer
	if p.HasPinner {
		pinner = &p.Pinner
	}
	return AbortTarget(p.Orphans, pid, pinner)
}

// MaybeHidden reports whether pid, open here with no listed transaction
// accounting for it, may belong to a transactional id ACLs hide from us:
// none we can see owns it, and some are hidden.
func (p TxnPartition) MaybeHidden(pid int64) bool {
	return p.Part.OwnersHidden && p.Owners[pid] == ""
}

// MaybeOnly reports whether every hanging candidate here may be owned by an
// id ACLs hide: possibly hanging, and an abort would be refused.
func (p TxnPartition) MaybeOnly() bool {
	for _, o := range p.Orphans {
		if !p.MaybeHidden(o.ProducerID) {
			return false
		}
	}
	return len(p.Orphans) > 0
}

// TxnPartitions are t's partitions in s: those its coordinator lists, in
// partition order, then every partition where t's producer has an open
// transaction the coordinator does not list for it (the hanging candidates).
func TxnPartitions(t Txn, s *Snapshot, byPID map[int64]*Txn) []TxnPartition {
	if t.Pending {
		return nil // which partitions are its own is not known yet
	}
	var out []TxnPartition
	listed := make(map[TopicPartition]bool, len(t.Partitions))
	tps := append([]TopicPartition(nil), t.Partitions...)
	SortPartitions(tps)
	for _, tp := range tps {
		listed[tp] = true
		p, ok := s.Partition(tp)
		out = append(out, txnPartition(t, tp, p, ok, true, byPID))
	}
	for _, p := range s.Partitions {
		if listed[p.TopicPartition] {
			continue
		}
		if pr, ok := p.Producer(t.ProducerID); !ok || pr.CurrentTxnStartOffset < 0 {
			continue
		}
		out = append(out, txnPartition(t, p.TopicPartition, p, true, false, byPID))
	}
	return out
}

func txnPartition(t Txn, tp TopicPartition, p Partition, known, listed bool, byPID map[int64]*Txn) TxnPartition {
	dp := TxnPartition{TopicPartition: tp, Part: p, Known: known, Listed: listed}
	if !known {
		return dp
	}
	dp.Own, dp.HasOwn = p.Producer(t.ProducerID)
	dp.Pinner, dp.HasPinner = p.Pinner()
	dp.PinsLSO = dp.HasPinner && dp.Pinner.ProducerID == t.ProducerID
	dp.Orphans = Orphans(p, byPID)
	dp.Owners = Owners(p, byPID)
	if dp.HasPinner {
		dp.PinnerID = dp.Owners[dp.Pinner.ProducerID]
	}
	return dp
}

// PinnedPartition is a pinned partition as the partition detail and its
// abort take it: no transaction of its own, only who pins it and who is
// open there. byPID nil (no refresh yet) leaves the orphans unknown.
func PinnedPartition(p Pin, byPID map[int64]*Txn) TxnPartition {
	tp := TxnPartition{TopicPartition: p.TopicPartition, Part: p.Partition, Known: true,
		Pinner: p.Pinner, HasPinner: p.HasPinner, Owners: map[int64]string{}}
	if byPID != nil {
		tp.Orphans = Orphans(p.Partition, byPID)
		tp.Owners = Owners(p.Partition, byPID)
	}
	return tp
}

// Owners names the transactional id the coordinators list for each producer
// of p; producers no listed id owns are absent.
func Owners(p Partition, byPID map[int64]*Txn) map[int64]string {
	out := map[int64]string{}
	for _, pr := range p.Producers {
		if o := byPID[pr.ProducerID]; o != nil {
			out[pr.ProducerID] = o.ID
		}
	}
	return out
}
