package model

import (
	"testing"
	"time"
)

func TestPollEvery(t *testing.T) {
	listed := func(n int, log bool) *Snapshot {
		return &Snapshot{Txns: make([]Txn, n), Source: Source{Log: log}}
	}
	for _, tc := range []struct {
		name string
		base time.Duration
		snap *Snapshot
		want time.Duration
	}{
		{"no snapshot yet", 2 * time.Second, nil, 2 * time.Second},
		{"100k ids on polls: the interval", 2 * time.Second, listed(100_000, false), 2 * time.Second},
		{"500k ids on polls: a second per 100k", 2 * time.Second, listed(500_000, false), 5 * time.Second},
		{"250k ids on polls", 2 * time.Second, listed(250_000, false), 2500 * time.Millisecond},
		{"500k ids from the log: the interval", 2 * time.Second, listed(500_000, true), 2 * time.Second},
		{"1M ids from the log: the interval", 2 * time.Second, listed(1_000_000, true), 2 * time.Second},
		{"2M ids from the log: a second per 500k", 2 * time.Second, listed(2_000_000, true), 4 * time.Second},
		{"a longer interval stands", 10 * time.Second, listed(500_000, false), 10 * time.Second},
	} {
		if got := PollEvery(tc.base, tc.snap); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
