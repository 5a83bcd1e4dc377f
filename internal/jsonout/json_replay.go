package jsonout

import (
	"time"

	"github.com/txnscope/txnscope/model"
)

type (
	// ReplayJSON is a replay of the coordinators' log (snapshot --since).
	ReplayJSON struct {
		// Since is the start of the window asked for.
		Since time.Time `json:"since"`
		// CompleteSince is the time from which the log still holds every
		// transition; before it, only the last record of each id (compaction).
		// Never earlier than a record that could not be read.
		CompleteSince *time.Time `json:"complete_since"`
		// NeverCompacted: every partition still holds every record it ever
		// had, so CompleteSince is OldestRecord and nothing older existed.
		NeverCompacted bool `json:"never_compacted"`
		// OldestRecord is the time of the oldest record the log holds.
		OldestRecord *time.Time `json:"oldest_record"`
		// Unreadable are the records that could not be read, by partition
		// and kind; [] when none.
		Unreadable []UnreadJSON `json:"unreadable"`
		// Limit: at most this many events, the newest, are listed.
		Limit  int         `json:"limit"`
		Events []EventJSON `json:"events"`
	}
	// UnreadJSON is what one partition of the log held, of one kind, that
	// could not be read.
	UnreadJSON struct {
		Partition int32 `json:"partition"`
		// Kind is "newer version" (a newer Kafka's: upgrade txnscope) or
		// "corrupt" (no Kafka writes it).
		Kind        model.UnreadKind `json:"kind"`
		Count       int              `json:"count"`
		FirstOffset int64            `json:"first_offset"`
		LastOffset  int64            `json:"last_offset"`
		// Why is why the first could not be read.
		Why string `json:"why"`
	}
	// EventJSON is one event, with the coordinator's time.
	EventJSON struct {
		At              time.Time `json:"at"`
		TransactionalID string    `json:"transactional_id"`
		// TransactionalIDBase64 is set when the id is not UTF-8 (Base64).
		TransactionalIDBase64 string          `json:"transactional_id_base64,omitempty"`
		Kind                  model.EventKind `json:"kind"`
		ProducerID            int64           `json:"producer_id"`
		ProducerEpoch         int16           `json:"producer_epoch"`
		// Begin, DurationMs and Partitions describe the transaction an
		// ending event ends; null for the other events.
		Begin      *time.Time `json:"begin"`
		DurationMs *int64     `json:"duration_ms"`
		Partitions *int32     `json:"partitions"`
		Detail     string     `json:"detail"`
	}
)

// ExportReplay is a replay's JSON.
func ExportReplay(r model.Replayed, since time.Time, limit int) *ReplayJSON {
	out := &ReplayJSON{Since: since.UTC(), Limit: limit, Events: make([]EventJSON, 0, len(r.Events)),
		NeverCompacted: r.Whole, Unreadable: make([]UnreadJSON, 0, len(r.Unread))}
	if !r.Complete.IsZero() {
		t := r.Complete.UTC()
		out.CompleteSince = &t
	}
	if !r.Oldest.IsZero() {
		t := r.Oldest.UTC()
		out.OldestRecord = &t
	}
	for _, u := range r.Unread {
		out.Unreadable = append(out.Unreadable, UnreadJSON(u))
	}
	for _, e := range r.Events {
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
