package integration

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/txnscope/txnscope/model"
)

// TestTxnLogMatchesDumpLog: kafkaadmin.ReadTxnLog decodes the coordinators' log exactly as Kafka's
// own kafka-dump-log.sh --transaction-log-decoder does, over the same segments: a commit, an abort
// and a timeout abort, every record field by field, in the same order at the same offsets, under
// both transaction versions.
func TestTxnLogMatchesDumpLog(t *testing.T) {
	t.Parallel()
	for _, cv := range clientVersions() {
		t.Run(cv.name, func(t *testing.T) {
			t.Parallel()
			testTxnLogMatchesDumpLog(t, cv.opts)
		})
	}
}

func testTxnLogMatchesDumpLog(t *testing.T, opts []kgo.Opt) {
	bootstrap, dataDir := Bootstrap(t), DataDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	tp := topicOn(ctx, t, newAdmin(t, bootstrap))
	commit, abort, timeout := name(t, "commit"), name(t, "abort"), name(t, "timeout")
	ids := []string{commit, abort, timeout}

	c := producer(t, bootstrap, commit, time.Minute, opts...)
	openTxn(ctx, t, c, tp, 1, "c")
	endTxn(ctx, t, c, true)
	a := producer(t, bootstrap, abort, time.Minute, opts...)
	openTxn(ctx, t, a, tp, 1, "a")
	endTxn(ctx, t, a, false)
	to := producer(t, bootstrap, timeout, 2*time.Second, opts...)
	openTxn(ctx, t, to, tp, 1, "t")

	sc := newScope(t, bootstrap)
	var read map[string][]model.TxnLogRecord
	for {
		read = map[string][]model.TxnLogRecord{}
		err := sc.c.ReadTxnLog(ctx, func(r model.TxnLogRecord) {
			if slices.Contains(ids, r.ID) {
				read[r.ID] = append(read[r.ID], r)
			}
		})
		if err != nil {
			t.Fatalf("ReadTxnLog: %v", err)
		}
		if rs := read[timeout]; len(rs) > 0 && rs[len(rs)-1].State == model.CompleteAbort {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the coordinator did not abort %s at its timeout: %+v", timeout, read[timeout])
		case <-time.After(500 * time.Millisecond):
		}
	}

	var parts []int32
	for _, id := range ids {
		if len(read[id]) == 0 {
			t.Fatalf("ReadTxnLog has no record of %s", id)
		}
		parts = append(parts, read[id][0].Partition)
	}
	all, err := DumpTxnLog(ctx, dataDir, parts...)
	if err != nil {
		t.Fatalf("DumpTxnLog: %v", err)
	}
	dumped := map[string][]model.TxnLogRecord{}
	for _, r := range all {
		if slices.Contains(ids, r.ID) {
			dumped[r.ID] = append(dumped[r.ID], r)
		}
	}
	for _, id := range ids {
		got, want := read[id], dumped[id]
		if len(got) != 4 || len(got) != len(want) {
			t.Errorf("%s: ReadTxnLog has %d records, the dump %d (want 4 each):\n%s", id, len(got), len(want), listRecords(got, want))
			continue
		}
		for i := range got {
			for _, d := range fieldDiffs(got[i], want[i]) {
				t.Errorf("%s record %d (offset %d): %s", id, i, want[i].Offset, d)
			}
		}
	}
}

// fieldDiffs names each field where ReadTxnLog's record differs from the dump's.
func fieldDiffs(got, want model.TxnLogRecord) []string {
	var out []string
	g, w := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := range g.NumField() {
		if !reflect.DeepEqual(g.Field(i).Interface(), w.Field(i).Interface()) {
			out = append(out, fmt.Sprintf("%s: ReadTxnLog %v, dump %v", g.Type().Field(i).Name, g.Field(i), w.Field(i)))
		}
	}
	return out
}

func listRecords(got, want []model.TxnLogRecord) string {
	s := ""
	for _, r := range got {
		s += fmt.Sprintf("  ReadTxnLog %+v\n", r)
	}
	for _, r := range want {
		s += fmt.Sprintf("  dump       %+v\n", r)
	}
	return s
}
