package model

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestHangingCandidate(t *testing.T) {
	now := time.UnixMilli(1_800_000_000_000)
	threshold := 15 * time.Minute
	tests := []struct {
		name string
		p    Producer
		want bool
	}{
		{"idempotent producer, no transaction, long idle", Producer{CurrentTxnStartOffset: -1, LastWriteMs: WriteMs(now.Add(-time.Hour))}, false},
		{"open transaction just begun", Producer{CurrentTxnStartOffset: 10, LastWriteMs: WriteMs(now.Add(-time.Second))}, false},
		{"open transaction exactly at the threshold is not over it", Producer{CurrentTxnStartOffset: 10, LastWriteMs: WriteMs(now.Add(-threshold))}, false},
		{"open transaction one millisecond over", Producer{CurrentTxnStartOffset: 10, LastWriteMs: WriteMs(now.Add(-threshold - time.Millisecond))}, true},
		{"start offset 0 is an open transaction", Producer{CurrentTxnStartOffset: 0, LastWriteMs: WriteMs(now.Add(-time.Hour))}, true},
		{"unknown last timestamp counts as very old (as kafka-transactions.sh)", Producer{CurrentTxnStartOffset: 3}, true},
		{"client clock ahead of ours", Producer{CurrentTxnStartOffset: 3, LastWriteMs: WriteMs(now.Add(time.Hour))}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := HangingCandidate(tt.p, now, threshold); got != tt.want {
				t.Errorf("HangingCandidate = %v, want %v", got, tt.want)
			}
		})
	}
	// A zero threshold makes any open transaction older than a millisecond a
	// candidate: what a test of a freshly made hanging transaction needs.
	if !HangingCandidate(Producer{CurrentTxnStartOffset: 1, LastWriteMs: WriteMs(now.Add(-2 * time.Millisecond))}, now, 0) {
		t.Error("a zero threshold must take any open transaction")
	}
}

func TestFindHanging(t *testing.T) {
	now := time.UnixMilli(1_800_000_000_000)
	threshold := 15 * time.Minute
	old := now.Add(-20 * time.Minute)
	fresh := now.Add(-time.Minute)
	orders0 := TopicPartition{"orders", 0}
	orders1 := TopicPartition{"orders", 1}
	pay0 := TopicPartition{"payments", 0}
	row := func(tp TopicPartition, pid int64, epoch int16, start int64, last time.Time) ProducerOn {
		return ProducerOn{TopicPartition: tp, Producer: Producer{ProducerID: pid, ProducerEpoch: epoch, CurrentTxnStartOffset: start,
			LastWriteMs: WriteMs(last), CoordinatorEpoch: -1, LastSequence: 4}}
	}
	txn := func(id string, pid int64, epoch int16, st State, tps ...TopicPartition) *Txn {
		return &Txn{ID: id, ProducerID: pid, ProducerEpoch: epoch, State: st, Partitions: tps, Described: true}
	}
	type want struct {
		tp     TopicPartition
		pid    int64
		reason HangingReason
		id     string
	}
	tests := []struct {
		name   string
		rows   []ProducerOn
		owners map[int64]Owner
		want   []want
	}{
		{
			name: "idempotent producers with no transaction are never hanging",
			rows: []ProducerOn{row(orders0, 1, 0, -1, old), row(orders0, 2, 0, -1, old)},
		},
		{
			name: "no transactional id owns the producer",
			rows: []ProducerOn{row(orders0, 7, 0, 40, old)},
			want: []want{{orders0, 7, NoOwner, ""}},
		},
		{
			name:   "the owning id is not found any more",
			rows:   []ProducerOn{row(orders0, 7, 0, 40, old)},
			owners: map[int64]Owner{7: {ID: "job-0-3"}},
			want:   []want{{orders0, 7, OwnerNotFound, "job-0-3"}},
		},
		{
			name:   "the owner's transaction does not list the partition",
			rows:   []ProducerOn{row(orders0, 7, 2, 40, old)},
			owners: map[int64]Owner{7: {ID: "job-0-3", Txn: txn("job-0-3", 7, 2, Ongoing, orders1)}},
			want:   []want{{orders0, 7, NotInTxn, "job-0-3"}},
		},
		{
			name:   "the owner's transaction lists the partition: the coordinator will end it",
			rows:   []ProducerOn{row(orders0, 7, 2, 40, old)},
			owners: map[int64]Owner{7: {ID: "job-0-3", Txn: txn("job-0-3", 7, 2, Ongoing, orders0, orders1)}},
		},
		{
			name:   "PrepareAbort still waiting for this partition's marker is not hanging",
			rows:   []ProducerOn{row(orders0, 7, 2, 40, old)},
			owners: map[int64]Owner{7: {ID: "job-0-3", Txn: txn("job-0-3", 7, 2, PrepareAbort, orders0)}},
		},
		{
			name:   "a producer whose epoch moved on: its id committed since, the partition was left open",
			rows:   []ProducerOn{row(orders0, 7, 2, 40, old)},
			owners: map[int64]Owner{7: {ID: "job-0-3", Txn: txn("job-0-3", 7, 5, CompleteCommit)}},
			want:   []want{{orders0, 7, NotInTxn, "job-0-3"}},
		},
		{
			name:   "a producer whose epoch moved on into a transaction that lists the partition: its marker ends both",
			rows:   []ProducerOn{row(orders0, 7, 2, 40, old)},
			owners: map[int64]Owner{7: {ID: "job-0-3", Txn: txn("job-0-3", 7, 5, Ongoing, orders0)}},
		},
		{
			name: "several open producers on one partition: only the unaccounted old one",
			rows: []ProducerOn{
				row(orders0, 9, 1, 50, old),   // owned, listed: fine
				row(orders0, 7, 0, 40, old),   // nobody owns it
				row(orders0, 8, 0, 60, fresh), // under the threshold: not even a candidate
				row(orders0, 6, 0, -1, old),   // idempotent
			},
			owners: map[int64]Owner{9: {ID: "job-1-3", Txn: txn("job-1-3", 9, 1, Ongoing, orders0)}},
			want:   []want{{orders0, 7, NoOwner, ""}},
		},
		{
			name: "candidates under and over the threshold",
			rows: []ProducerOn{
				row(orders0, 7, 0, 40, now.Add(-threshold-time.Second)),
				row(orders1, 8, 0, 40, now.Add(-threshold+time.Second)),
			},
			want: []want{{orders0, 7, NoOwner, ""}},
		},
		{
			name:   "one producer hanging on one partition and fine on another",
			rows:   []ProducerOn{row(pay0, 7, 3, 5, old), row(orders1, 7, 3, 9, old), row(orders0, 7, 3, 2, old)},
			owners: map[int64]Owner{7: {ID: "job-0-3", Txn: txn("job-0-3", 7, 3, Ongoing, orders1)}},
			want:   []want{{orders0, 7, NotInTxn, "job-0-3"}, {pay0, 7, NotInTxn, "job-0-3"}},
		},
		{
			name:   "an owner that could not be described is never reported on a guess",
			rows:   []ProducerOn{row(orders0, 7, 0, 40, old)},
			owners: map[int64]Owner{7: {ID: "job-0-3", Err: "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"}},
		},
		{
			name: "sorted by topic, partition, producer id",
			rows: []ProducerOn{row(pay0, 3, 0, 1, old), row(orders1, 9, 0, 1, old), row(orders1, 2, 0, 1, old), row(orders0, 5, 0, 1, old)},
			want: []want{{orders0, 5, NoOwner, ""}, {orders1, 2, NoOwner, ""}, {orders1, 9, NoOwner, ""}, {pay0, 3, NoOwner, ""}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FindHanging(tt.rows, now, threshold, tt.owners)
			var gotW []want
			for _, h := range got {
				gotW = append(gotW, want{h.TopicPartition, h.ProducerID, h.Reason, h.TransactionalID})
				if h.Duration != h.IdleFor(now) || h.Duration <= threshold {
					t.Errorf("%v: duration %s", h.TopicPartition, h.Duration)
				}
			}
			if !reflect.DeepEqual(gotW, tt.want) {
				t.Errorf("got  %v\nwant %v", gotW, tt.want)
			}
		})
	}
}

func TestFindHangingKeepsTheRow(t *testing.T) {
	now := time.UnixMilli(1_800_000_000_000)
	p := Producer{ProducerID: 7, ProducerEpoch: 3, LastSequence: 11, CoordinatorEpoch: 4, CurrentTxnStartOffset: 40,
		LastWriteMs: WriteMs(now.Add(-20*time.Minute - 30*time.Second))}
	got := FindHanging([]ProducerOn{{TopicPartition{"orders", 0}, p}}, now, DefaultMaxTxnTimeout, nil)
	if len(got) != 1 || got[0].Producer != p {
		t.Fatalf("got %+v", got)
	}
	if got[0].Duration != 20*time.Minute+30*time.Second {
		t.Errorf("duration %s", got[0].Duration)
	}
	if ms := got[0].LastTimestampMs(); ms != now.Add(-20*time.Minute-30*time.Second).UnixMilli() {
		t.Errorf("last timestamp %d", ms)
	}
	if ms := (Producer{}).LastTimestampMs(); ms != -1 {
		t.Errorf("unknown last timestamp = %d, want -1", ms)
	}
}

func TestCandidatePIDs(t *testing.T) {
	now := time.UnixMilli(1_800_000_000_000)
	old := now.Add(-time.Hour)
	rows := []ProducerOn{
		{TopicPartition{"a", 0}, Producer{ProducerID: 9, CurrentTxnStartOffset: 1, LastWriteMs: WriteMs(old)}},
		{TopicPartition{"a", 1}, Producer{ProducerID: 3, CurrentTxnStartOffset: 1, LastWriteMs: WriteMs(old)}},
		{TopicPartition{"a", 2}, Producer{ProducerID: 9, CurrentTxnStartOffset: 1, LastWriteMs: WriteMs(old)}},
		{TopicPartition{"a", 3}, Producer{ProducerID: 4, CurrentTxnStartOffset: -1, LastWriteMs: WriteMs(old)}},
		{TopicPartition{"a", 4}, Producer{ProducerID: 5, CurrentTxnStartOffset: 1, LastWriteMs: WriteMs(now)}},
	}
	if got := CandidatePIDs(rows, now, DefaultMaxTxnTimeout); !reflect.DeepEqual(got, []int64{3, 9}) {
		t.Errorf("CandidatePIDs = %v, want [3 9]", got)
	}
}

func TestOwnersOf(t *testing.T) {
	txns := []Txn{
		{ID: "a", ProducerID: 1, State: Ongoing, Described: true, Partitions: []TopicPartition{{"t", 0}}},
		{ID: "b", ProducerID: 2, State: Ongoing, Err: "describe: TRANSACTIONAL_ID_AUTHORIZATION_FAILED"},
		{ID: "c", ProducerID: 3, State: Empty},
	}
	o := OwnersOf(txns)
	if o[1].ID != "a" || o[1].Txn == nil || o[1].Err != "" {
		t.Errorf("described owner: %+v", o[1])
	}
	if o[2].Txn != nil || !strings.Contains(o[2].Err, "AUTHORIZATION") {
		t.Errorf("failed describe: %+v", o[2])
	}
	if o[3].Err == "" {
		t.Errorf("never described: %+v", o[3])
	}
	// Through FindHanging: only the partition the described owner does not list.
	now := time.Now()
	old := now.Add(-time.Hour)
	var rows []ProducerOn
	for pid := int64(1); pid <= 4; pid++ {
		for p := int32(0); p < 2; p++ {
			rows = append(rows, ProducerOn{TopicPartition{"t", p}, Producer{ProducerID: pid, CurrentTxnStartOffset: 0, LastWriteMs: WriteMs(old)}})
		}
	}
	var got []string
	for _, h := range FindHanging(rows, now, DefaultMaxTxnTimeout, o) {
		got = append(got, fmt.Sprintf("%d@%d:%s", h.ProducerID, h.Partition, h.Reason))
	}
	want := []string{"4@0:" + string(NoOwner), "1@1:" + string(NotInTxn), "4@1:" + string(NoOwner)}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}

func TestPartitionRows(t *testing.T) {
	p := Partition{TopicPartition: TopicPartition{"t", 2}, Producers: []Producer{{ProducerID: 1}, {ProducerID: 2}}}
	rows := p.Rows()
	if len(rows) != 2 || rows[1].TopicPartition != p.TopicPartition || rows[1].ProducerID != 2 {
		t.Errorf("Rows = %+v", rows)
	}
}
