package kafkaadmin_test

import (
	"context"
	"crypto/rand"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/model"
)

// fill writes kib KiB of incompressible records to one partition, outside any
// transaction, in 16 KiB batches.
func fill(t testing.TB, bootstrap []string, topic string, partition int32, kib int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatalf("filler: %v", err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for done := 0; done < kib; done += 16 {
		recs := make([]*kgo.Record, 16)
		for i := range recs {
			v := make([]byte, 1<<10)
			rand.Read(v)
			recs[i] = &kgo.Record{Topic: topic, Partition: partition, Value: v}
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatalf("filler: %v", err)
		}
	}
}

// history counts what Diff reports between two snapshots, as the UI does.
func history(prev, next *model.Snapshot, id string) model.IDStats {
	h := model.NewHistory(16)
	h.Baseline(prev)
	h.Add(model.Diff(prev, next))
	return h.Stats(id)
}

func wantOnly(t testing.TB, prev, next *model.Snapshot, id string, want ...model.EventKind) {
	t.Helper()
	if got := kinds(prev, next, id); !slices.Equal(got, want) {
		t.Fatalf("Diff for %s = %v, want %v", id, got, want)
	}
}

// TestForceTerminatedFarFromItsStart is the demo's observation: a transaction force-terminated
// after other producers wrote more than one small fetch's worth to its partition. Reading 16 KiB
// read_committed from its start, kfake listed no aborted transaction and txnscope said committed
// (1 commit, 0 aborts) although the log holds its ABORT marker. The marker is now read, or,
// beyond reach, the leader's index of aborted transactions is asked.
func TestForceTerminatedFarFromItsStart(t *testing.T) {
	t.Parallel()
	for _, kib := range []int{96, 512} {
		_, boot := kafkatest.NewCluster(t)
		const id = "reports-backfill-0-1"
		kafkatest.OpenTxn(t, boot, id, "reports", 10*time.Minute)
		fill(t, boot, "reports", 0, kib)
		a := newAdmin(t, boot)
		s1 := refresh(t, a, nil)
		if r := execute(t, a, forceTerminate(txnOf(t, s1, id))); !r.OK() {
			t.Fatalf("force-terminate: %s", r.Summary())
		}
		s2 := refresh(t, a, s1)
		if o := txnOf(t, s2, id).Outcome(); o != model.CompleteAbort {
			t.Errorf("%d KiB: outcome read from the log %q, want CompleteAbort", kib, o)
		}
		wantOnly(t, s1, s2, id, model.Fenced)
		if st := history(s1, s2, id); st.Commits != 0 || st.Aborts != 1 || st.Last != model.Fenced {
			t.Errorf("%d KiB: %d commits · %d aborts, last %q; want 0 · 1, fenced", kib, st.Commits, st.Aborts, st.Last)
		}
	}
}

// TestOutcomeFromMarker: a transaction ended by its own producer, with other data between its
// first offset and its marker, is read as what its marker says.
func TestOutcomeFromMarker(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		commit bool
		want   model.EventKind
		state  model.State
	}{
		{"committed", true, model.Committed, model.CompleteCommit},
		{"aborted", false, model.Aborted, model.CompleteAbort},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, boot := kafkatest.NewCluster(t)
			const id = "orders-enricher-v1-0-9"
			p := kafkatest.OpenTxn(t, boot, id, "orders", time.Minute)
			fill(t, boot, "orders", 0, 64)
			a := newAdmin(t, boot)
			s1 := refresh(t, a, nil)
			kafkatest.End(t, p, tc.commit)
			s2 := refresh(t, a, s1)
			if o := txnOf(t, s2, id).Outcome(); o != tc.state {
				t.Errorf("outcome %q, want %q", o, tc.state)
			}
			wantOnly(t, s1, s2, id, tc.want)
		})
	}
}

// TestMarkerOutOfReach: when the marker lies beyond what one ending may read, a commit is
// ended, counted as nothing; an abort is still told by the leader's index of aborted
// transactions. The read stops at its bound: four fetches walking the log, one asking the index.
func TestMarkerOutOfReach(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		commit  bool
		outcome model.State
		want    model.EventKind
		aborts  int
	}{
		{true, model.NoState, model.Ended, 0},
		{false, model.CompleteAbort, model.Aborted, 1},
	} {
		c, boot := kafkatest.NewCluster(t)
		const id = "payments-dedup-v3-1-4"
		p := kafkatest.OpenTxn(t, boot, id, "payments", time.Minute)
		fill(t, boot, "payments", 0, 512)
		a := newAdmin(t, boot)
		s1 := refresh(t, a, nil)
		kafkatest.End(t, p, tc.commit)
		fetches := countRequests(c, kmsg.Fetch)
		s2 := refresh(t, a, s1)
		if o := txnOf(t, s2, id).Outcome(); o != tc.outcome {
			t.Errorf("commit=%v: outcome %q, want %q", tc.commit, o, tc.outcome)
		}
		wantOnly(t, s1, s2, id, tc.want)
		if st := history(s1, s2, id); st.Commits != 0 || st.Aborts != tc.aborts || st.Last != tc.want {
			t.Errorf("commit=%v: %d commits · %d aborts, last %q; want 0 · %d, %s", tc.commit, st.Commits, st.Aborts, st.Last, tc.aborts, tc.want)
		}
		if n := fetches.Load(); n != markerFetches+1 {
			t.Errorf("commit=%v: %d fetches for one ending, want %d", tc.commit, n, markerFetches+1)
		}
	}
}

// markerFetches is kafkaadmin's bound on the fetches that walk one ending's log.
const markerFetches = 4
