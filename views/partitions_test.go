package views

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/txnscope/txnscope/model"
)

func TestPinWords(t *testing.T) {
	pr := model.Producer{ProducerID: 7, CurrentTxnStartOffset: 10}
	owner := model.Txn{ID: "job-0-1", State: model.Ongoing}
	for _, c := range []struct {
		name         string
		pin          model.Pin
		owner, label string
	}{
		{"held by its transaction", model.Pin{Pinner: pr, HasPinner: true, Owner: owner, HasOwner: true, Blocking: true}, "job-0-1", "  "},
		{"owner does not hold it", model.Pin{Pinner: pr, HasPinner: true, Owner: owner, HasOwner: true}, "job-0-1 (not holding)", "! "},
		{"no id owns the producer", model.Pin{Pinner: pr, HasPinner: true}, "no transactional id", "! "},
		{"no pinner", model.Pin{}, "unknown producer", "! "},
		{"read error", model.Pin{Partition: model.Partition{Err: "producers: TIMEOUT"}}, "error: producers: TIMEOUT", "! "},
		{"hanging wins", model.Pin{Hanging: true, Stuck: []model.StuckGroup{{Group: "g"}}}, "unknown producer", "H!"},
		{"stuck groups", model.Pin{Blocking: true, Pinner: pr, HasPinner: true, Owner: owner, HasOwner: true,
			Stuck: []model.StuckGroup{{Group: "g"}}}, "job-0-1", "!!"},
	} {
		if got := PinOwner(&c.pin); got != c.owner {
			t.Errorf("%s: owner %q, want %q", c.name, got, c.owner)
		}
		if got := PinMarker(&c.pin); got != c.label {
			t.Errorf("%s: marker %q, want %q", c.name, got, c.label)
		}
	}
	at := time.Date(2026, 3, 14, 3, 0, 0, 0, time.UTC)
	p := model.Pin{Since: at, AtLeast: true}
	if got := PinSince(&p, at.Add(90*time.Second)); got != "≥1m30s" {
		t.Errorf("PinSince %q", got)
	}
}

// TestPinsAndGroupsFitAnySize: the new views are exactly w×h whatever the
// size and the number of rows, and only the visible window is drawn.
func TestPinsAndGroupsFitAnySize(t *testing.T) {
	at := time.Date(2026, 3, 14, 3, 0, 0, 0, time.UTC)
	var pins []model.Pin
	var groups []model.BlockedGroup
	rows := make([]int, 5000)
	for i := range rows {
		rows[i] = i
		pins = append(pins, model.Pin{
			Partition: model.Partition{TopicPartition: model.TopicPartition{Topic: fmt.Sprintf("topic-with-a-long-name-%d", i), Partition: int32(i)},
				HighWatermark: 1000, LastStableOffset: int64(i % 1000)},
			Since: at.Add(-time.Duration(i) * time.Second), Hanging: i%3 == 0, HasPinner: true,
			Pinner: model.Producer{ProducerID: int64(i), CurrentTxnStartOffset: int64(i % 1000)},
			Stuck:  []model.StuckGroup{{Group: "g"}},
		})
		groups = append(groups, model.BlockedGroup{Group: fmt.Sprintf("group-%d", i), Since: at, Hanging: i%2 == 0,
			Partitions: []model.TopicPartition{{Topic: "t"}}, Blockers: []string{"orders-enricher-v1-2-41"}})
	}
	st := PlainStyles()
	for w := 1; w <= 200; w += 13 {
		for h := 1; h <= 60; h += 7 {
			for name, frame := range map[string]string{
				"pins":       Partitions(PartitionsData{Pins: pins, Rows: rows, Cursor: 4000, Top: 3990, Now: at, Scanned: 9000, Group: "billing"}, w, h, st),
				"pins-empty": Partitions(PartitionsData{Empty: "nothing pinned"}, w, h, st),
				"groups":     Groups(GroupsData{Groups: groups, Cursor: 10, Top: 5, Now: at, Err: "consumer groups: denied"}, w, h, st),
				"detail":     PartitionDetail(PartitionDetailData{Pin: pins[3], Now: at, CanAbort: true, Orphans: []model.Producer{pins[3].Pinner}}, w, h, st),
			} {
				lines := strings.Split(frame, "\n")
				if len(lines) != h {
					t.Fatalf("%s %d×%d: %d lines", name, w, h, len(lines))
				}
				for i, l := range lines {
					if ansi.StringWidth(l) != w {
						t.Fatalf("%s %d×%d: line %d is %d cells", name, w, h, i, ansi.StringWidth(l))
					}
				}
			}
		}
	}
	frame := Partitions(PartitionsData{Pins: pins, Rows: rows, Cursor: 4000, Top: 3990, Now: at}, 160, 20, st)
	if !strings.Contains(frame, "topic-with-a-long-name-3990-3990") || strings.Contains(frame, "topic-with-a-long-name-3989-") {
		t.Errorf("the window does not start at row 3990:\n%s", frame)
	}
}
