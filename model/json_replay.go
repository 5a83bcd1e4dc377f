package model

import "time"

type (
	// ReplayJSON is a replay of the coordinators' log (snapshot --since).
	ReplayJSON struct {
		// Since is the start of the window asked for.
		Since time.Time `json:"since"`
		// CompleteSince is the time from which the log still holds every
		// transition; before it, only the last record of each id (compaction).
		CompleteSince *time.Time `json:"complete_since"`
		// OldestRecord is the time of the oldest record the log holds.
		OldestRecord *time.Time `json:"oldest_record"`
		// Limit: at most this many events, the newest, are listed.
		Limit  int         `json:"limit"`
		Events []EventJSON `json:"events"`
	}
	// EventJSON is one event, with the coordinator's time.
	EventJSON struct {
		At              time.Time `json:"at"`
		TransactionalID string    `json:"transactional_id"`
		// TransactionalIDBase64 is set when the id is not UTF-8 (Base64).
		TransactionalIDBase64 string    `json:"transactional_id_base64,omitempty"`
		Kind                  EventKind `json:"kind"`
		ProducerID            int64     `json:"producer_id"`
		ProducerEpoch         int16     `json:"producer_epoch"`
		// Begin, DurationMs and Partitions describe the transaction an
		// ending event ends; null for the other events.
		Begin      *time.Time `json:"begin"`
		DurationMs *int64     `json:"duration_ms"`
		Partitions *int32     `json:"partitions"`
		Detail     string     `json:"detail"`
	}
)

// ExportReplay is a replay's JSON: evs oldest first.
func ExportReplay(evs []Event, since, complete, oldest time.Time, limit int) *ReplayJSON {
	out := &ReplayJSON{Since: since.UTC(), Limit: limit, Events: make([]EventJSON, 0, len(evs))}
	if !complete.IsZero() {
		t := complete.UTC()
		out.CompleteSince = &t
	}
	if !oldest.IsZero() {
		t := oldest.UTC()
		out.OldestRecord = &t
	}
	for _, e := range evs {
		j := EventJSON{At: e.At.UTC(), TransactionalID: e.ID, TransactionalIDBase64: Base64(e.ID), Kind: e.Kind, ProducerID: e.ProducerID,
			ProducerEpoch: e.ProducerEpoch, Detail: e.Detail}
		if e.Kind.Ends() && e.Logged {
			p := e.Parts
			j.Partitions = &p
			if !e.Begun.IsZero() {
				b, d := e.Begun.UTC(), e.At.Sub(e.Begun).Milliseconds()
				j.Begin, j.DurationMs = &b, &d
			}
		}
		out.Events = append(out.Events, j)
	}
	return out
}
