package cli

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/jsonout"
	"github.com/txnscope/txnscope/model"
)

// The rows written without reflection are byte for byte encoding/json's,
// indented and escaped as streamJSON does, for rows of every shape: and a
// row the fast writer does not take (a string that needs escaping, a time or
// a ratio encoding/json refuses or writes otherwise) is left to it.
func TestPlainRowsAreEncodingJSONs(t *testing.T) {
	strs := []string{"", "flink-sink-3-17", "orders", `a"b`, `back\slash`, "esc\x1bape", "tab\t", "ünï", "\u202e", "\x7f", "\xff", "x y"}
	floats := []float64{0, 0.5, 1, 1.25, 2.0000001, 1e-7, 1.5e-9, 1e21, 3e22, 123456789.125, -0.75, math.NaN(), math.Inf(1)}
	times := []time.Time{time.Unix(1_700_000_000, 123456789).UTC(), time.UnixMilli(1_700_000_000_000).UTC(), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Unix(5, 0).In(time.FixedZone("x", 3600))}
	rng := rand.New(rand.NewPCG(7, 11))
	pick := func() string { // mostly plain: most rows are
		if rng.IntN(10) < 9 {
			return strs[rng.IntN(3)]
		}
		return strs[rng.IntN(len(strs))]
	}
	tm := func() *time.Time {
		if rng.IntN(3) == 0 {
			return nil
		}
		x := times[rng.IntN(len(times))]
		if rng.IntN(4) > 0 {
			x = times[rng.IntN(2)]
		}
		return &x
	}
	i64 := func() *int64 {
		if rng.IntN(3) == 0 {
			return nil
		}
		x := rng.Int64N(1<<40) - 1<<39
		return &x
	}
	fast := 0
	for i := range 5000 {
		j := jsonout.TxnJSON{TransactionalID: pick(), State: model.StateOf(pick()), ProducerID: rng.Int64N(1<<50) - 1, ProducerEpoch: int16(rng.IntN(1 << 15)),
			Coordinator: int32(rng.IntN(5)) - 1, TimeoutMs: int32(rng.IntN(1 << 30)), StartTime: tm(), AgeMs: i64(),
			CommitsSeen: rng.IntN(1000), AbortsSeen: rng.IntN(10), Commits5m: rng.IntN(9), Aborts5m: rng.IntN(9), Commits60m: rng.IntN(99), Aborts60m: rng.IntN(9),
			Partitions: []model.TopicPartition{}, Problems: []string{}, RecentTransactions: []jsonout.FinishedTxnJSON{}}
		if i%3 == 0 {
			j.TransactionalIDBase64 = pick()
		}
		if rng.IntN(2) == 0 {
			f := floats[rng.IntN(len(floats))]
			j.TimeoutRatio = &f
		}
		for range rng.IntN(3) {
			j.Partitions = append(j.Partitions, model.TopicPartition{Topic: pick(), Partition: int32(rng.IntN(100))})
		}
		for range rng.IntN(3) {
			j.Problems = append(j.Problems, pick())
		}
		for range rng.IntN(3) {
			f := jsonout.FinishedTxnJSON{Begin: tm(), End: times[rng.IntN(len(times))], DurationMs: i64(), Outcome: model.EventKind(pick()),
				ProducerID: rng.Int64N(1000), ProducerEpoch: int16(rng.IntN(100))}
			if rng.IntN(2) == 0 {
				p := int32(rng.IntN(50))
				f.Partitions = &p
			}
			j.RecentTransactions = append(j.RecentTransactions, f)
		}
		want, encErr := newValueEncoder().encode(&j, "    ")
		got, ok := appendTxnRow([]byte("kept"), &j)
		if !ok {
			if string(got) != "kept" {
				t.Fatalf("a row it does not take is appended: %q", got)
			}
			continue
		}
		if encErr != nil {
			t.Fatalf("took a row encoding/json refuses (%v): %+v", encErr, j)
		}
		fast++
		if !bytes.Equal(got[len("kept"):], want) {
			t.Fatalf("row %d:\n%s\nwant\n%s", i, got[len("kept"):], want)
		}
	}
	if fast < 500 {
		t.Fatalf("only %d of 5000 rows written the fast way: the test says little", fast)
	}
}

// The same for the partitions' rows.
func TestPlainPartitionRowsAreEncodingJSONs(t *testing.T) {
	strs := []string{"", "orders", "bench-scale", `a"b`, "esc\x1bape", "ünï", "\u2028", "\x7f"}
	rng := rand.New(rand.NewPCG(3, 5))
	pick := func() string {
		if rng.IntN(10) < 8 {
			return strs[rng.IntN(3)]
		}
		return strs[rng.IntN(len(strs))]
	}
	fast := 0
	for i := range 3000 {
		p := jsonout.PartitionJSON{Topic: pick(), Partition: int32(rng.IntN(100)), Leader: int32(rng.IntN(4)) - 1,
			HighWatermark: rng.Int64N(1 << 40), LastStableOffset: rng.Int64N(1<<40) - 1, Error: pick()}
		switch rng.IntN(3) {
		case 0: // unknown: nil
		case 1:
			p.Producers = []jsonout.ProducerJSON{}
		default:
			for range 1 + rng.IntN(3) {
				pr := jsonout.ProducerJSON{ProducerID: rng.Int64N(1 << 40), ProducerEpoch: int16(rng.IntN(1 << 15)), LastSequence: int32(rng.IntN(1<<20)) - 1,
					LastTimestamp: rng.Int64N(1<<41) - 1, CoordinatorEpoch: int32(rng.IntN(9))}
				if rng.IntN(2) == 0 {
					o := rng.Int64N(1 << 30)
					pr.CurrentTxnStartOffset = &o
				}
				p.Producers = append(p.Producers, pr)
			}
		}
		want, err := newValueEncoder().encode(&p, "    ")
		if err != nil {
			t.Fatal(err)
		}
		got, ok := appendPartitionRow([]byte("kept"), &p)
		if !ok {
			if string(got) != "kept" {
				t.Fatalf("a row it does not take is appended: %q", got)
			}
			continue
		}
		fast++
		if !bytes.Equal(got[len("kept"):], want) {
			t.Fatalf("row %d:\n%s\nwant\n%s", i, got[len("kept"):], want)
		}
	}
	if fast < 1000 {
		t.Fatalf("only %d of 3000 rows written the fast way: the test says little", fast)
	}
}
