package model

import (
	"reflect"
	"testing"
)

func TestPinRows(t *testing.T) {
	pin := func(topic string, part int32, owner string) Pin {
		p := Pin{Partition: Partition{TopicPartition: TopicPartition{topic, part}}}
		if owner != "" {
			p.Owner, p.HasOwner = Txn{ID: owner}, true
		}
		return p
	}
	pins := []Pin{pin("audit", 0, ""), pin("orders", 3, "Enricher-1"), pin("orders", 13, "enricher-2"), pin("billing", 2, "")}
	groups := []BlockedGroup{
		{Group: "billing-etl", Partitions: []TopicPartition{{"billing", 2}, {"audit", 0}}},
		{Group: "other", Partitions: []TopicPartition{{"orders", 3}}},
	}
	for _, tc := range []struct {
		name string
		q    PinQuery
		want []int
	}{
		{"everything, in pin order", PinQuery{}, []int{0, 1, 2, 3}},
		{"a group keeps its partitions, still in pin order", PinQuery{Group: "billing-etl"}, []int{0, 3}},
		{"a group no longer blocked keeps nothing", PinQuery{Group: "gone"}, nil},
		{"topic-partition, any case", PinQuery{Text: "ORDERS-1"}, []int{2}},
		{"part of the owning id, any case", PinQuery{Text: "enricher"}, []int{1, 2}},
		{"no owner: only the partition matches", PinQuery{Text: "billing"}, []int{3}},
		{"group and text together", PinQuery{Group: "other", Text: "enricher-2"}, nil},
	} {
		if got := PinRows(pins, groups, tc.q); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: PinRows = %v, want %v", tc.name, got, tc.want)
		}
	}
}
