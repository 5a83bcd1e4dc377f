package model

import (
	"testing"
	"time"
	"unsafe"
)

// TestTxnSize pins the size of a row: a snapshot holds one Txn per id, and the
// TUI holds two snapshots while a refresh is taken in, so at 500,000 ids every
// byte here is a megabyte of heap (issue 11), two at 2,000,000 (issue 37). It
// was 152 bytes with the start as a time.Time and the outcomes as State
// strings, 104 with the state its name's string.
func TestTxnSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the size is pinned for 64-bit platforms")
	}
	if got := unsafe.Sizeof(Txn{}); got != 88 {
		t.Errorf("model.Txn is %d bytes, want 88: order the fields largest first and keep new ones small", got)
	}
}

func TestTxnStart(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 7, 250_999_999, time.UTC)
	tests := []struct {
		name string
		set  time.Time
		ms   int64
		want time.Time
	}{
		{"none", time.Time{}, 0, time.Time{}},
		{"kept to the millisecond, as the coordinator reports it", at, at.UnixMilli(), at.Truncate(time.Millisecond)},
		{"before 1970", time.UnixMilli(-1500), -1500, time.UnixMilli(-1500)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var x Txn
			x.SetStart(tt.set)
			got := x.StartTime()
			if x.StartUnixMs != tt.ms || !got.Equal(tt.want) || got.IsZero() != tt.want.IsZero() || x.HasStart() != !tt.want.IsZero() {
				t.Errorf("SetStart(%v): ms %d, StartTime %v, HasStart %v; want %d, %v", tt.set, x.StartUnixMs, got, x.HasStart(), tt.ms, tt.want)
			}
			if !got.IsZero() && got.Location() != time.Local {
				t.Errorf("StartTime is in %s, want the local zone like time.UnixMilli", got.Location())
			}
		})
	}
}

func TestTxnOutcomes(t *testing.T) {
	tests := []struct {
		set, want State
	}{
		{CompleteCommit, CompleteCommit},
		{CompleteAbort, CompleteAbort},
		{NoState, NoState},
		// Only the two Complete* states are ever read from a log.
		{Ongoing, NoState},
		{StateOf("Bogus"), NoState},
	}
	for _, tt := range tests {
		var x Txn
		x.SetOutcome(tt.set)
		if got := x.Outcome(); got != tt.want || x.PrevOutcome() != NoState {
			t.Errorf("SetOutcome(%q): Outcome %q, PrevOutcome %q; want %q and none", tt.set, got, x.PrevOutcome(), tt.want)
		}
		x = Txn{}
		x.SetPrevOutcome(tt.set)
		if got := x.PrevOutcome(); got != tt.want || x.Outcome() != NoState {
			t.Errorf("SetPrevOutcome(%q): PrevOutcome %q, Outcome %q; want %q and none", tt.set, got, x.Outcome(), tt.want)
		}
	}
}
