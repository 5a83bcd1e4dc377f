// Package jsonout is the output schema of -o json (docs/snapshot.schema.json):
// the documents snapshot and the one-shot commands print, made from model
// values. Field names are a public contract; nothing here decides anything.
package jsonout

import (
	"time"

	"github.com/txnscope/txnscope/model"
)

// The snapshot -o json schema. Field names are a public contract (README).
type (
	SnapshotJSON struct {
		// Schema is SchemaVersion.
		Schema             int         `json:"schema"`
		TakenAt            time.Time   `json:"taken_at"`
		Bootstrap          string      `json:"bootstrap"`
		BrokerMaxTimeoutMs *int64      `json:"broker_max_timeout_ms"`
		History            HistoryJSON `json:"history"`
		// Jobs are the ids grouped by the job that names them (ExportJobs).
		Jobs []JobJSON `json:"jobs"`
		// PinnedPartitions, StuckGroups and Hanging are the partitions and
		// groups views (ExportPins).
		PinnedPartitions []PinnedPartitionJSON `json:"pinned_partitions"`
		StuckGroups      []StuckGroupJSON      `json:"stuck_groups"`
		Hanging          []HangingJSON         `json:"hanging"`
		Transactions     []TxnJSON             `json:"transactions"`
		Partitions       []PartitionJSON       `json:"partitions"`
		// Replay is what the coordinators' log holds since a time (snapshot
		// --since); absent otherwise.
		Replay *ReplayJSON `json:"replay,omitempty"`
		// Hidden is Snapshot.Hidden (ACLs hide some transactional ids).
		Hidden string `json:"hidden,omitempty"`
		// Unanswered are the brokers that did not answer (absent when all did).
		Unanswered []UnansweredJSON `json:"unanswered_brokers,omitempty"`
		// Flink is each JobManager given with --flink (absent without).
		Flink *FlinkSourcesJSON `json:"flink,omitempty"`
	}
	TxnJSON struct {
		TransactionalID string `json:"transactional_id"`
		// TransactionalIDBase64 is set when the id is not UTF-8 (Base64).
		TransactionalIDBase64 string                 `json:"transactional_id_base64,omitempty"`
		State                 model.State            `json:"state"`
		ProducerID            int64                  `json:"producer_id"`
		ProducerEpoch         int16                  `json:"producer_epoch"`
		Coordinator           int32                  `json:"coordinator"`
		TimeoutMs             int32                  `json:"timeout_ms"`
		StartTime             *time.Time             `json:"start_time"`
		AgeMs                 *int64                 `json:"age_ms"`
		TimeoutRatio          *float64               `json:"timeout_ratio"`
		Partitions            []model.TopicPartition `json:"partitions"`
		CommitsSeen           int                    `json:"commits_seen"`
		AbortsSeen            int                    `json:"aborts_seen"`
		// The outcomes whose minute is less than 5 (60) minutes old
		// (IDStats.Window).
		Commits5m  int `json:"commits_5m"`
		Aborts5m   int `json:"aborts_5m"`
		Commits60m int `json:"commits_60m"`
		Aborts60m  int `json:"aborts_60m"`
		// RecentTransactions are the id's last finished transactions, oldest
		// first, [] when none.
		RecentTransactions []FinishedTxnJSON `json:"recent_transactions"`
		// Problems are the list's problem lines (Problems), [] when none.
		Problems []string `json:"problems"`
	}
	// HistoryJSON says where the history comes from (Snapshot.Source).
	HistoryJSON struct {
		// Source is "coordinator log" or "polls".
		Source string `json:"source"`
		// Why the log is not the source ("" when it is).
		Why string `json:"why"`
		// LogSince is the oldest record the log still holds, null when unknown.
		LogSince *time.Time `json:"log_since"`
		// WindowSince is where the replayed history starts (snapshot: an hour
		// ago, or --since), null when it is not a replay: every judgement
		// that rests on history (lingering, not committing, cadences) rests
		// on this stretch of the log.
		WindowSince *time.Time `json:"window_since"`
	}
	// FinishedTxnJSON is one finished transaction (FinishedTxn); begin,
	// duration_ms and partitions are null when the source did not tell.
	UnansweredJSON struct {
		Broker int32  `json:"broker"`
		Error  string `json:"error"`
	}
	FinishedTxnJSON struct {
		Begin      *time.Time `json:"begin"`
		End        time.Time  `json:"end"`
		DurationMs *int64     `json:"duration_ms"`
		// Outcome is who ended it: "committed", "aborted" (by its producer),
		// "aborted at timeout", "fenced" or "force-terminated".
		Outcome       model.EventKind `json:"outcome"`
		Partitions    *int32          `json:"partitions"`
		ProducerID    int64           `json:"producer_id"`
		ProducerEpoch int16           `json:"producer_epoch"`
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
func Export(s *model.Snapshot, h *model.History, now time.Time) SnapshotJSON {
	return ExportQuery(s, h, model.Query{}, now)
}

// ExportQuery is Export with the problems judged under q (its CheckpointInterval).
// It holds the whole document; a writer that must not (500k ids) writes
// ExportFrame and streams ExportTxn and ExportPartition into it, so that both
// forms come from the same conversions.
func ExportQuery(s *model.Snapshot, h *model.History, q model.Query, now time.Time) SnapshotJSON {
	out := ExportFrame(s, h, q, now)
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
func ExportFrame(s *model.Snapshot, h *model.History, q model.Query, now time.Time) SnapshotJSON {
	out := SnapshotJSON{
		Schema:       SchemaVersion,
		Jobs:         ExportJobs(s, h, q, now),
		TakenAt:      s.TakenAt.UTC(),
		Bootstrap:    s.Bootstrap,
		Hidden:       s.Hidden,
		Transactions: []TxnJSON{},
		Partitions:   []PartitionJSON{},
		Flink:        ExportFlinkSources(q.Flink),
	}
	if s.BrokerMaxTimeoutMs > 0 {
		v := s.BrokerMaxTimeoutMs
		out.BrokerMaxTimeoutMs = &v
	}
	for _, b := range s.Unanswered {
		out.Unanswered = append(out.Unanswered, UnansweredJSON{Broker: b.ID, Error: b.Err})
	}
	out.PinnedPartitions, out.StuckGroups, out.Hanging = ExportPins(s, now)
	out.History = HistoryJSON{Source: "polls", Why: s.Source.Why}
	if s.Source.Log {
		out.History.Source = "coordinator log"
	}
	if !s.Source.Since.IsZero() {
		t := s.Source.Since.UTC()
		out.History.LogSince = &t
	}
	if !s.Source.Window.IsZero() {
		t := s.Source.Window.UTC()
		out.History.WindowSince = &t
	}
	return out
}

// exportFinished is the id's finished transactions, [] when none.
func exportFinished(st model.IDStats) []FinishedTxnJSON {
	fs := st.Finished()
	out := make([]FinishedTxnJSON, 0, len(fs))
	for _, f := range fs {
		j := FinishedTxnJSON{End: f.End().UTC(), Outcome: f.Kind, ProducerID: f.ProducerID, ProducerEpoch: f.ProducerEpoch}
		if b, ok := f.Begun(); ok {
			b = b.UTC()
			j.Begin = &b
		}
		if d, ok := f.Duration(); ok {
			ms := d.Milliseconds()
			j.DurationMs = &ms
		}
		if f.Parts >= 0 {
			p := f.Parts
			j.Partitions = &p
		}
		out = append(out, j)
	}
	return out
}

// ExportTxn is one transaction of the document; s and q judge its problems.
func ExportTxn(t *model.Txn, h *model.History, s *model.Snapshot, q model.Query, now time.Time) TxnJSON {
	st := h.Stats(t.ID)
	j := TxnJSON{
		TransactionalID: t.ID, TransactionalIDBase64: Base64(t.ID), State: t.State, ProducerID: t.ProducerID, ProducerEpoch: t.ProducerEpoch,
		Coordinator: t.Coordinator, TimeoutMs: t.TimeoutMs, Partitions: t.Partitions,
		CommitsSeen: st.Commits, AbortsSeen: st.Aborts,
		Problems:           model.Problems(*t, st, s, q, now),
		RecentTransactions: exportFinished(st),
	}
	win := st.Window(now)
	j.Commits5m, j.Aborts5m, j.Commits60m, j.Aborts60m = win.Commits5m, win.Aborts5m, win.Commits60m, win.Aborts60m
	if j.Problems == nil {
		j.Problems = []string{}
	}
	if j.Partitions == nil {
		j.Partitions = []model.TopicPartition{}
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
func ExportPartition(p *model.Partition) PartitionJSON {
	pj := PartitionJSON{Topic: p.Topic, Partition: p.Partition, Leader: p.Leader,
		HighWatermark: p.HighWatermark, LastStableOffset: p.LastStableOffset, Producers: []ProducerJSON{}, Error: p.Err}
	if p.ProducersDenied {
		pj.Producers = nil // unknown, not none
	}
	for _, pr := range p.Producers {
		prj := ProducerJSON{ProducerID: pr.ProducerID, ProducerEpoch: pr.ProducerEpoch, LastSequence: pr.LastSequence,
			LastTimestamp: -1, CoordinatorEpoch: pr.CoordinatorEpoch}
		if pr.LastWriteMs != 0 {
			prj.LastTimestamp = pr.LastWriteMs
		}
		if pr.CurrentTxnStartOffset >= 0 {
			o := pr.CurrentTxnStartOffset
			prj.CurrentTxnStartOffset = &o
		}
		pj.Producers = append(pj.Producers, prj)
	}
	return pj
}
