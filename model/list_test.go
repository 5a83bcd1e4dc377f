package model

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func ids(s *Snapshot, rows []int) string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = s.Txns[r].ID
	}
	return strings.Join(out, " ")
}

// listSnap: ratios at t0 are a=0.5, B=0.95 (danger), c=0.1, d=2 (past timeout),
// e unknown (no start), f idle, g idle with a fenced last outcome, h ratio 0.5 (tie with a).
func listSnap() (*Snapshot, *History) {
	s := snap(t0,
		Txn{ID: "orders-a", State: Ongoing, TimeoutMs: 60000, StartUnixMs: t0.Add(-30 * time.Second).UnixMilli()},
		Txn{ID: "Orders-B", State: PrepareCommit, TimeoutMs: 60000, StartUnixMs: t0.Add(-57 * time.Second).UnixMilli()},
		Txn{ID: "c", State: Ongoing, TimeoutMs: 100000, StartUnixMs: t0.Add(-10 * time.Second).UnixMilli()},
		Txn{ID: "d", State: Ongoing, TimeoutMs: 10000, StartUnixMs: t0.Add(-20 * time.Second).UnixMilli()},
		Txn{ID: "e", State: Ongoing, TimeoutMs: 60000},
		Txn{ID: "f", State: CompleteCommit, TimeoutMs: 60000},
		Txn{ID: "g", State: Empty, TimeoutMs: 60000},
		Txn{ID: "h", State: Ongoing, TimeoutMs: 120000, StartUnixMs: t0.Add(-60 * time.Second).UnixMilli()},
	)
	h := NewHistory(10)
	h.Add([]Event{{At: t0, ID: "g", Kind: Fenced}})
	return s, h
}

func TestRows(t *testing.T) {
	s, h := listSnap()
	tests := []struct {
		name string
		q    Query
		want string
	}{
		{"default: most urgent first, ties by id, no ratio last", Query{},
			"d Orders-B h orders-a c e f g"},
		{"by age, oldest first, no age last", Query{Sort: SortAge},
			"h Orders-B orders-a d c e f g"},
		{"by id", Query{Sort: SortID}, "Orders-B c d e f g h orders-a"},
		{"by state, attention first", Query{Sort: SortState}, "Orders-B c d e h orders-a f g"},
		{"substring is case-insensitive", Query{Text: "ORDERS"}, "Orders-B orders-a"},
		{"substring matches the middle", Query{Text: "rs-b", Sort: SortID}, "Orders-B"},
		{"no match", Query{Text: "zzz"}, ""},
		{"open only", Query{Filter: FilterOpen, Sort: SortID}, "Orders-B c d e h orders-a"},
		{"problems only", Query{Filter: FilterProblems}, "d Orders-B h orders-a g"},
		{"problems and text", Query{Filter: FilterProblems, Text: "g"}, "g"},
		{"checkpoint interval makes short timeouts problems", Query{Filter: FilterProblems, Sort: SortID, CheckpointInterval: 40 * time.Second},
			"Orders-B d e f g h orders-a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ids(s, Rows(s, h, tt.q, t0)); got != tt.want {
				t.Errorf("Rows = %q\nwant   %q", got, tt.want)
			}
		})
	}
}

func TestRowsNilHistory(t *testing.T) {
	s, _ := listSnap()
	if got := ids(s, Rows(s, nil, Query{Filter: FilterProblems}, t0)); got != "d Orders-B h orders-a" {
		t.Errorf("Rows = %q", got)
	}
	if got := Rows(&Snapshot{}, nil, Query{}, t0); len(got) != 0 {
		t.Errorf("empty snapshot rows = %v", got)
	}
}

func TestProblems(t *testing.T) {
	s := &Snapshot{BrokerMaxTimeoutMs: 900000}
	tests := []struct {
		name string
		t    Txn
		st   IDStats
		q    Query
		want []string
	}{
		{"healthy", Txn{State: Ongoing, TimeoutMs: 60000, StartUnixMs: t0.Add(-time.Second).UnixMilli()}, IDStats{Last: Committed}, Query{}, nil},
		{"per-id error", Txn{State: Empty, Err: "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"}, IDStats{}, Query{},
			[]string{"TRANSACTIONAL_ID_AUTHORIZATION_FAILED"}},
		{"half of timeout", Txn{State: Ongoing, TimeoutMs: 60000, StartUnixMs: t0.Add(-30 * time.Second).UnixMilli()}, IDStats{}, Query{},
			[]string{"over half of its timeout"}},
		{"past timeout", Txn{State: Ongoing, TimeoutMs: 60000, StartUnixMs: t0.Add(-60 * time.Second).UnixMilli()}, IDStats{}, Query{},
			[]string{"past its transaction.timeout.ms"}},
		{"being fenced", Txn{State: PrepareEpochFence}, IDStats{}, Query{}, []string{"being fenced"}},
		{"timeout above broker max", Txn{State: Empty, TimeoutMs: 900001}, IDStats{}, Query{},
			[]string{"timeout above the broker's transaction.max.timeout.ms"}},
		{"timeout at broker max is fine", Txn{State: Empty, TimeoutMs: 900000}, IDStats{}, Query{}, nil},
		{"timeout below 2x checkpoint interval", Txn{State: Empty, TimeoutMs: 119999}, IDStats{}, Query{CheckpointInterval: time.Minute},
			[]string{"timeout below 2× the checkpoint interval"}},
		{"timeout exactly 2x checkpoint interval", Txn{State: Empty, TimeoutMs: 120000}, IDStats{}, Query{CheckpointInterval: time.Minute}, nil},
		{"unknown timeout is not judged", Txn{State: Empty}, IDStats{}, Query{CheckpointInterval: time.Minute}, nil},
		{"last fenced", Txn{State: Empty}, IDStats{Last: Fenced}, Query{}, []string{"last transaction fenced"}},
		{"last timed out", Txn{State: Empty}, IDStats{Last: TimedOut}, Query{}, []string{"last transaction aborted at timeout"}},
		{"last aborted is not a problem", Txn{State: Empty}, IDStats{Last: Aborted}, Query{}, nil},
		{"several at once", Txn{State: PrepareEpochFence, TimeoutMs: 1000, StartUnixMs: t0.Add(-2 * time.Second).UnixMilli()}, IDStats{Last: Fenced},
			Query{CheckpointInterval: time.Second},
			[]string{"past its transaction.timeout.ms", "being fenced", "timeout below 2× the checkpoint interval", "last transaction fenced"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Problems(tt.t, tt.st, s, tt.q, t0)
			if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tt.want) {
				t.Errorf("Problems = %q want %q", got, tt.want)
			}
		})
	}
	// Without a snapshot (or an unknown broker max) the broker rule is skipped.
	if got := Problems(Txn{TimeoutMs: 999999999}, IDStats{}, nil, Query{}, t0); got != nil {
		t.Errorf("nil snapshot: %q", got)
	}
}

func TestSortKeyAndFilterCycle(t *testing.T) {
	k := SortRatio
	var names []string
	for i := 0; i < 5; i++ {
		names = append(names, k.String())
		k = k.Next()
	}
	if got := strings.Join(names, ","); got != "age/timeout,age,id,state,age/timeout" {
		t.Errorf("sort cycle = %s", got)
	}
	f := FilterAll
	names = nil
	for i := 0; i < 4; i++ {
		names = append(names, f.String())
		f = f.Next()
	}
	if got := strings.Join(names, ","); got != "all,open only,problems only,all" {
		t.Errorf("filter cycle = %s", got)
	}
}
