package jsonout

import (
	"cmp"
	"time"

	"github.com/txnscope/txnscope/model"
)

type (
	// PinnedPartitionJSON is a partition whose LSO is below its high
	// watermark (Pin): who holds it, since when, and who waits.
	PinnedPartitionJSON struct {
		Topic            string `json:"topic"`
		Partition        int32  `json:"partition"`
		Leader           int32  `json:"leader"`
		HighWatermark    int64  `json:"high_watermark"`
		LastStableOffset int64  `json:"last_stable_offset"`
		HeldBack         int64  `json:"held_back"`
		// PinnedSince is when it was first seen pinned at this LSO;
		// PinnedSinceAtLeast: it already was in txnscope's first read.
		PinnedSince        *time.Time `json:"pinned_since"`
		PinnedSinceAtLeast bool       `json:"pinned_since_at_least"`
		// ProducerID and ProducerEpoch are the producer whose open
		// transaction starts at the LSO (null when unknown).
		ProducerID    *int64 `json:"producer_id"`
		ProducerEpoch *int16 `json:"producer_epoch"`
		// TransactionalID owns that producer (null: none visible); Blocking:
		// its open transaction holds the LSO (force-terminating it releases
		// the partition).
		TransactionalID *string `json:"transactional_id"`
		// TransactionalIDBase64 and StuckGroupsBase64 are the exact forms
		// of the ids and groups that are not UTF-8 (Base64, Base64List).
		TransactionalIDBase64 string    `json:"transactional_id_base64,omitempty"`
		Blocking              bool      `json:"blocking"`
		Hanging               bool      `json:"hanging"`
		MaybeHanging          bool      `json:"maybe_hanging"`
		Why                   []string  `json:"why"`
		StuckGroups           []string  `json:"stuck_groups"`
		StuckGroupsBase64     []*string `json:"stuck_groups_base64,omitempty"`
	}
	// StuckGroupJSON is a read_committed consumer group waiting at pinned
	// partitions (BlockedGroup).
	StuckGroupJSON struct {
		Group string `json:"group"`
		// GroupBase64 and BlockersBase64 are the exact forms of the group
		// and the ids that are not UTF-8 (Base64, Base64List).
		GroupBase64 string `json:"group_base64,omitempty"`
		State       string `json:"state"`
		// Type is the group's protocol: classic, consumer, share or streams.
		Type           string                 `json:"type"`
		Partitions     []model.TopicPartition `json:"partitions"`
		LagLSO         int64                  `json:"lag_lso"`
		LagHWM         int64                  `json:"lag_hwm"`
		Since          *time.Time             `json:"since"`
		Hanging        bool                   `json:"hanging"`
		Blockers       []string               `json:"blockers"`
		BlockersBase64 []*string              `json:"blockers_base64,omitempty"`
	}
	// HangingJSON is a partition holding a transaction no coordinator will
	// end (KIP-664): only WriteTxnMarkers frees it.
	HangingJSON struct {
		Topic       string   `json:"topic"`
		Partition   int32    `json:"partition"`
		ProducerIDs []int64  `json:"producer_ids"`
		Why         []string `json:"why"`
	}
)

// ExportPins is what the partitions and groups views show of s, as JSON:
// the pinned partitions (longest pinned first), the stuck groups, and the
// hanging partitions. A one-shot snapshot has seen each pin once: its
// pinned_since is the snapshot's time, at least.
func ExportPins(s *model.Snapshot, now time.Time) (pinned []PinnedPartitionJSON, stuck []StuckGroupJSON, hanging []HangingJSON) {
	tr := model.NewPinTracker()
	tr.Observe(s)
	pins := model.Pins(s, tr, now)
	pinned, stuck, hanging = []PinnedPartitionJSON{}, []StuckGroupJSON{}, []HangingJSON{}
	for _, p := range pins {
		j := PinnedPartitionJSON{Topic: p.Topic, Partition: p.TopicPartition.Partition, Leader: p.Leader,
			HighWatermark: p.HighWatermark, LastStableOffset: p.LastStableOffset, HeldBack: p.HighWatermark - p.LastStableOffset,
			PinnedSince: timeOrNil(p.Since), PinnedSinceAtLeast: p.AtLeast, Blocking: p.Blocking, Hanging: p.Hanging,
			MaybeHanging: p.MaybeHanging, Why: orEmpty(append(append([]string(nil), p.Why...), p.Maybe...)), StuckGroups: []string{}}
		if p.HasPinner {
			pid, epoch := p.Pinner.ProducerID, p.Pinner.ProducerEpoch
			j.ProducerID, j.ProducerEpoch = &pid, &epoch
		}
		if p.HasOwner {
			id := p.Owner.ID
			j.TransactionalID, j.TransactionalIDBase64 = &id, Base64(id)
		}
		for _, g := range p.Stuck {
			j.StuckGroups = append(j.StuckGroups, g.Group)
		}
		j.StuckGroupsBase64 = Base64List(j.StuckGroups)
		pinned = append(pinned, j)
		if p.Hanging {
			hanging = append(hanging, HangingJSON{Topic: p.Topic, Partition: p.TopicPartition.Partition,
				ProducerIDs: append([]int64{}, p.HangingPIDs...), Why: orEmpty(p.Why)})
		}
	}
	for _, g := range model.BlockedGroups(pins) {
		stuck = append(stuck, StuckGroupJSON{Group: g.Group, GroupBase64: Base64(g.Group), State: g.State, Type: cmp.Or(g.Type, model.GroupClassic), Partitions: append([]model.TopicPartition{}, g.Partitions...),
			LagLSO: g.LagLSO, LagHWM: g.LagHWM, Since: timeOrNil(g.Since), Hanging: g.Hanging, Blockers: orEmpty(g.Blockers), BlockersBase64: Base64List(g.Blockers)})
	}
	return pinned, stuck, hanging
}
