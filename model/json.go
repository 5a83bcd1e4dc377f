package model

import "time"

// The snapshot -o json schema. Field names are a public contract (README).
type (
	SnapshotJSON struct {
		TakenAt            time.Time       `json:"taken_at"`
		Bootstrap          string          `json:"bootstrap"`
		BrokerMaxTimeoutMs *int64          `json:"broker_max_timeout_ms"`
		Transactions       []TxnJSON       `json:"transactions"`
		Partitions         []PartitionJSON `json:"partitions"`
		// Hidden is Snapshot.Hidden (ACLs hide some transactional ids).
		Hidden string `json:"hidden,omitempty"`
	}
	TxnJSON struct {
		TransactionalID string           `json:"transactional_id"`
		State           State            `json:"state"`
		ProducerID      int64            `json:"producer_id"`
		ProducerEpoch   int16            `json:"producer_epoch"`
		Coordinator     int32            `json:"coordinator"`
		TimeoutMs       int32            `json:"timeout_ms"`
		StartTime       *time.Time       `json:"start_time"`
		AgeMs           *int64           `json:"age_ms"`
		TimeoutRatio    *float64         `json:"timeout_ratio"`
		Partitions      []TopicPartition `json:"partitions"`
		CommitsSeen     int              `json:"commits_seen"`
		AbortsSeen      int              `json:"aborts_seen"`
		// Problems are the list's problem lines (Problems), [] when none.
		Problems []string `json:"problems"`
	}
	PartitionJSON struct {
		Topic            string `json:"topic"`
		Partition        int32  `json:"partition"`
		Leader           int32  `json:"leader"`
		HighWatermark    int64  `json:"high_watermark"`
		LastStableOffset int64  `json:"last_stable_offset"`
		// Producers is null when they could not be read (Error says why).
		Producers []ProducerJSON `json:"producers"`
		Error     string         `json:"error,omitempty"`
	}
	ProducerJSON struct {
		ProducerID            int64  `json:"producer_id"`
		ProducerEpoch         int16  `json:"producer_epoch"`
		LastSequence          int32  `json:"last_sequence"`
		LastTimestamp         int64  `json:"last_timestamp"`
		CoordinatorEpoch      int32  `json:"coordinator_epoch"`
		CurrentTxnStartOffset *int64 `json:"current_txn_start_offset"`
	}
)

// Export turns a snapshot into its JSON form; now is the time ages are measured at.
func Export(s *Snapshot, h *History, now time.Time) SnapshotJSON {
	return ExportQuery(s, h, Query{}, now)
}

// ExportQuery is Export with the problems judged under q (its CheckpointInterval).
// It holds the whole document; a writer that must not (500k ids) writes
// ExportFrame and streams ExportTxn and ExportPartition into it, so that both
// forms come from the same conversions.
func ExportQuery(s *Snapshot, h *History, q Query, now time.Time) SnapshotJSON {
	out := ExportFrame(s)
	out.Transactions = make([]TxnJSON, 0, len(s.Txns))
	out.Partitions = make([]PartitionJSON, 0, len(s.Partitions))
	for i := range s.Txns {
		out.Transactions = append(out.Transactions, ExportTxn(&s.Txns[i], h, s, q, now))
	}
	for i := range s.Partitions {
		out.Partitions = append(out.Partitions, ExportPartition(&s.Partitions[i]))
	}
	return out
}

// ExportFrame is the document without its rows: Transactions and Partitions
// are empty (encoded as []), everything else is set.
func ExportFrame(s *Snapshot) SnapshotJSON {
	out := SnapshotJSON{
		TakenAt:      s.TakenAt.UTC(),
		Bootstrap:    s.Bootstrap,
		Hidden:       s.Hidden,
		Transactions: []TxnJSON{},
		Partitions:   []PartitionJSON{},
	}
	if s.BrokerMaxTimeoutMs > 0 {
		v := s.BrokerMaxTimeoutMs
		out.BrokerMaxTimeoutMs = &v
	}
	return out
}

// ExportTxn is one transaction of the document; s and q judge its problems.
func ExportTxn(t *Txn, h *History, s *Snapshot, q Query, now time.Time) TxnJSON {
	st := h.Stats(t.ID)
	j := TxnJSON{
		TransactionalID: t.ID, State: t.State, ProducerID: t.ProducerID, ProducerEpoch: t.ProducerEpoch,
		Coordinator: t.Coordinator, TimeoutMs: t.TimeoutMs, Partitions: t.Partitions,
		CommitsSeen: st.Commits, AbortsSeen: st.Aborts,
		Problems: Problems(*t, st, s, q, now),
	}
	if j.Problems == nil {
		j.Problems = []string{}
	}
	if j.Partitions == nil {
		j.Partitions = []TopicPartition{}
	}
	if t.HasStart() {
		ts := t.StartTime().UTC()
		j.StartTime = &ts
	}
	if a, ok := t.Age(now); ok {
		ms := a.Milliseconds()
		j.AgeMs = &ms
	}
	if r, ok := t.Ratio(now); ok {
		r := r // escaping from the if alone: the rows without a ratio allocate nothing
		j.TimeoutRatio = &r
	}
	return j
}

// ExportPartition is one partition of the document.
func ExportPartition(p *Partition) PartitionJSON {
	pj := PartitionJSON{Topic: p.Topic, Partition: p.Partition, Leader: p.Leader,
		HighWatermark: p.HighWatermark, LastStableOffset: p.LastStableOffset, Producers: []ProducerJSON{}, Error: p.Err}
	if p.ProducersDenied {
		pj.Producers = nil // unknown, not none
	}
	for _, pr := range p.Producers {
		prj := ProducerJSON{ProducerID: pr.ProducerID, ProducerEpoch: pr.ProducerEpoch, LastSequence: pr.LastSequence,
			LastTimestamp: -1, CoordinatorEpoch: pr.CoordinatorEpoch}
		if !pr.LastTimestamp.IsZero() {
			prj.LastTimestamp = pr.LastTimestamp.UnixMilli()
		}
		if pr.CurrentTxnStartOffset >= 0 {
			o := pr.CurrentTxnStartOffset
			prj.CurrentTxnStartOffset = &o
		}
		pj.Producers = append(pj.Producers, prj)
	}
	return pj
}
