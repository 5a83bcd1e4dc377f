package model_test

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/txnscope/txnscope/model"
)

// fuzzIDs are few on purpose, so that two snapshots built from random bytes
// share most of their ids and Diff compares rather than only adds.
var fuzzIDs = []string{"job-0-1", "job-0-2", "job-1-1", "job-1-2", "a", "", "İd-ß-0-9", "job-0-9223372036854775807"}

var fuzzStates = []model.State{model.Empty, model.Ongoing, model.PrepareCommit, model.PrepareAbort,
	model.CompleteCommit, model.CompleteAbort, model.Dead, model.PrepareEpochFence, model.NoState, model.StateOf("Bogus")}

var fuzzKinds = []model.EventKind{model.Began, model.Committed, model.Aborted, model.TimedOut, model.Fenced, model.Ended}

// reader hands out the fuzzer's bytes; past the end it yields zeros, so every
// input decodes to something.
type reader struct{ b []byte }

func (r *reader) next() int {
	if len(r.b) == 0 {
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return int(v)
}

var fuzzT0 = time.Date(2026, 3, 14, 3, 0, 0, 0, time.UTC)

// decodeSnapshot builds a snapshot as kafkaadmin hands it over: sorted by id,
// one row per id (the first of duplicates wins).
func decodeSnapshot(b []byte, at time.Time) *model.Snapshot {
	r := &reader{b: b}
	s := &model.Snapshot{TakenAt: at, EpochBumpsOnEnd: r.next()&1 == 1}
	for n := r.next() % 12; n > 0; n-- {
		t := model.Txn{
			ID:            fuzzIDs[r.next()%len(fuzzIDs)],
			State:         fuzzStates[r.next()%len(fuzzStates)],
			ProducerID:    int64(r.next()%4) - 1,
			ProducerEpoch: int16(r.next() % 5),
			Coordinator:   int32(r.next() % 3),
			TimeoutMs:     int32(r.next()) * 1000,
			Described:     r.next()&1 == 1,
		}
		switch r.next() % 4 {
		case 1:
			t.ProducerEpoch = 32767 // the largest epoch: a bump past it must not overflow
		case 2:
			t.ProducerID = 1 << 40
		}
		if f := r.next(); f&1 == 1 {
			t.SetStart(at.Add(-time.Duration(f) * time.Second))
		}
		if r.next()&1 == 1 {
			t.Err = "describe: COORDINATOR_NOT_AVAILABLE"
		}
		t.SetOutcome(fuzzStates[r.next()%len(fuzzStates)])
		t.SetPrevOutcome(fuzzStates[r.next()%len(fuzzStates)])
		for p := r.next() % 3; p > 0; p-- {
			t.Partitions = append(t.Partitions, model.TopicPartition{Topic: "orders", Partition: int32(r.next() % 4)})
		}
		s.Txns = append(s.Txns, t)
	}
	s.Sort()
	s.Txns = slices.CompactFunc(s.Txns, func(a, b model.Txn) bool { return a.ID == b.ID })
	return s
}

func clone(s *model.Snapshot) *model.Snapshot {
	c := *s
	c.Txns = slices.Clone(s.Txns)
	for i := range c.Txns {
		c.Txns[i].Partitions = slices.Clone(c.Txns[i].Partitions)
	}
	return &c
}

// FuzzDiff: whatever two polls hold, Diff does not panic, reports only ids the
// newer poll has, with that poll's producer id and epoch, in id order, leaves
// both snapshots as they were, and finds nothing between a poll and itself.
// History takes the events in without panicking either.
func FuzzDiff(f *testing.F) {
	// Seeds beyond testdata/fuzz/FuzzDiff: a poll and the same ids one step on.
	f.Add([]byte{0, 3, 0, 1, 1, 0, 0, 60, 1, 0, 9, 0, 0, 0, 1, 0}, []byte{0, 3, 0, 5, 1, 0, 0, 60, 1, 0, 0, 0, 0, 0, 0}, uint16(2000))
	f.Add([]byte{1, 2, 1, 7, 2, 1, 1, 30, 1, 1, 3}, []byte{1, 2, 1, 1, 2, 3, 1, 30, 1, 0, 5}, uint16(65535))
	f.Fuzz(func(t *testing.T, a, b []byte, gapMs uint16) {
		prev := decodeSnapshot(a, fuzzT0)
		next := decodeSnapshot(b, fuzzT0.Add(time.Duration(gapMs)*time.Millisecond))
		prevCopy, nextCopy := clone(prev), clone(next)

		evs := model.Diff(prev, next)
		if !reflect.DeepEqual(prev, prevCopy) || !reflect.DeepEqual(next, nextCopy) {
			t.Fatal("Diff changed its inputs")
		}
		if again := model.Diff(prev, next); !reflect.DeepEqual(evs, again) {
			t.Fatalf("Diff is not deterministic: %v then %v", evs, again)
		}
		last := ""
		for _, e := range evs {
			n, ok := next.Txn(e.ID)
			if !ok {
				t.Fatalf("event about %q, which the newer poll does not have: %+v", e.ID, e)
			}
			if e.ProducerID != n.ProducerID || e.ProducerEpoch != n.ProducerEpoch {
				t.Fatalf("event %+v does not carry the producer the poll reported (%d/%d)", e, n.ProducerID, n.ProducerEpoch)
			}
			if !slices.Contains(fuzzKinds, e.Kind) {
				t.Fatalf("unknown event kind %q", e.Kind)
			}
			if e.ID < last {
				t.Fatalf("events out of id order: %q after %q", e.ID, last)
			}
			if e.EpochJump < 0 {
				t.Fatalf("negative epoch jump: %+v", e)
			}
			last = e.ID
		}
		for _, s := range []*model.Snapshot{prev, next} {
			if self := model.Diff(s, s); len(self) != 0 {
				t.Fatalf("a poll diffed with itself yields %v", self)
			}
		}
		if model.Diff(nil, next) != nil || model.Diff(prev, nil) != nil {
			t.Fatal("a missing poll must yield nothing")
		}
		h := model.NewHistory(8)
		h.Baseline(prev)
		h.Add(evs)
		for _, tx := range next.Txns {
			h.Stats(tx.ID)
		}
	})
}
