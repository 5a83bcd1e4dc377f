package model

import (
	"fmt"
	"strings"
)

// PinQuery narrows the partitions view, as Query narrows the list.
type PinQuery struct {
	// Group, when set, keeps the partitions that consumer group waits on.
	Group string
	// Text keeps the partitions whose topic-partition, or the id owning their
	// pinner, contains it, ignoring case (as the list's filter does).
	Text string
}

// PinRows are the indices into pins (kept in their order, longest pinned
// first) that q selects; groups are BlockedGroups(pins).
func PinRows(pins []Pin, groups []BlockedGroup, q PinQuery) []int {
	var keep map[TopicPartition]bool
	if q.Group != "" {
		keep = map[TopicPartition]bool{}
		for _, g := range groups {
			if g.Group == q.Group {
				for _, tp := range g.Partitions {
					keep[tp] = true
				}
			}
		}
	}
	needle := strings.ToLower(q.Text)
	var rows []int
	for i, p := range pins {
		if keep != nil && !keep[p.TopicPartition] {
			continue
		}
		if needle != "" && !strings.Contains(strings.ToLower(fmt.Sprintf("%s-%d", p.Topic, p.TopicPartition.Partition)), needle) &&
			!(p.HasOwner && strings.Contains(strings.ToLower(p.Owner.ID), needle)) {
			continue
		}
		rows = append(rows, i)
	}
	return rows
}
