package integration

import (
	"context"
	"crypto/rand"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/model"
)

// TestScopeOutcomeFromMarker: when the coordinator does not say how a transaction ended (the
// id has moved on to its next transaction by the next poll, or a force-terminate left it Empty),
// txnscope reads the COMMIT or ABORT marker the transaction left on its partition, past other
// producers' data. Beyond what it reads, an abort is still found in the leader's index of
// aborted transactions; a commit is ended, counted as nothing. Both transaction versions: under
// version 2 the marker carries the bumped epoch.
func TestScopeOutcomeFromMarker(t *testing.T) {
	t.Parallel()
	for _, cv := range clientVersions() {
		for _, tc := range []struct {
			name    string
			fillKiB int
			end     string // "commit", "abort", "force-terminate"
			want    []model.EventKind
			commits int
			aborts  int
		}{
			{"committed", 64, "commit", []model.EventKind{model.Committed, model.Began}, 1, 0},
			{"aborted", 64, "abort", []model.EventKind{model.Aborted, model.Began}, 0, 1},
			// txnscope's force-terminate stops once the coordinator aborts (the
			// id rests in CompleteAbort one epoch up): on brokers that speak
			// transaction version 2 that is what the producer's own abort looks
			// like, whatever its client speaks, so it reads as aborted.
			{"force-terminated", 64, "force-terminate", []model.EventKind{model.Aborted}, 0, 1},
			// Beyond reach, a commit is ended; an abort is still in the leader's
			// index of aborted transactions.
			{"committed out of reach", 512, "commit", []model.EventKind{model.Ended, model.Began}, 0, 0},
			{"aborted out of reach", 512, "abort", []model.EventKind{model.Aborted, model.Began}, 0, 1},
			{"force-terminated out of reach", 512, "force-terminate", []model.EventKind{model.Aborted}, 0, 1},
		} {
			t.Run(cv.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				bootstrap := Bootstrap(t)
				ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
				defer cancel()
				tp := topicOn(ctx, t, newAdmin(t, bootstrap))
				id := name(t, "txn")
				p := producer(t, bootstrap, id, 10*time.Minute, cv.opts...)
				openTxn(ctx, t, p, tp, 3, "first")

				sc := newScope(t, bootstrap)
				s1 := sc.poll(ctx)
				open := txnOf(t, s1, id)
				if open.State != model.Ongoing || !partOf(t, s1, tp).Pinned() {
					t.Fatalf("%+v: want Ongoing, pinning its partition", open)
				}
				fillPartition(ctx, t, bootstrap, tp, tc.fillKiB)
				switch tc.end {
				case "force-terminate":
					if r := sc.execute(ctx, forceTerminate(open)); !r.OK() {
						t.Fatalf("force-terminate: %s", r.Summary())
					}
				default:
					// Ended and replaced before the next poll: the coordinator
					// shows only the next transaction.
					endTxn(ctx, t, p, tc.end == "commit")
					openTxn(ctx, t, p, tp, 1, "second")
				}
				s2 := sc.poll(ctx)
				if got := sc.kinds(id); !slices.Equal(got, tc.want) {
					t.Errorf("events %v, want %v; %s", got, tc.want, sc.describe(s2))
				}
				st := sc.hist.Stats(id)
				if st.Commits != tc.commits || st.Aborts != tc.aborts || st.Last != tc.want[0] {
					t.Errorf("%d commits · %d aborts, last %q; want %d · %d, %q", st.Commits, st.Aborts, st.Last,
						tc.commits, tc.aborts, tc.want[0])
				}
				m := firstMarker(ctx, t, bootstrap, tp, open.ProducerID)
				t.Logf("%s: epoch %d while open, %s marker at offset %d with epoch %d; now %s epoch %d",
					tc.end, open.ProducerEpoch, m.kind, m.offset, m.epoch, txnOf(t, s2, id).State, txnOf(t, s2, id).ProducerEpoch)
				// Kafka 4.4 writes the marker with the bumped epoch under version 2,
				// and for a force-terminate (the fence bumps, then aborts) under both.
				wantEpoch, wantKind := open.ProducerEpoch, "ABORT"
				if cv.name == "txn-v2" || tc.end == "force-terminate" {
					wantEpoch++
				}
				if tc.end == "commit" {
					wantKind = "COMMIT"
				}
				if m.epoch != wantEpoch || m.kind != wantKind {
					t.Errorf("marker %+v, want %s at epoch %d", m, wantKind, wantEpoch)
				}
			})
		}
	}
}

// fillPartition writes kib KiB of incompressible records to tp outside any transaction.
func fillPartition(ctx context.Context, t *testing.T, bootstrap string, tp model.TopicPartition, kib int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatalf("filler: %v", err)
	}
	defer cl.Close()
	for done := 0; done < kib; done += 16 {
		recs := make([]*kgo.Record, 16)
		for i := range recs {
			v := make([]byte, 1<<10)
			rand.Read(v)
			recs[i] = &kgo.Record{Topic: tp.Topic, Partition: tp.Partition, Value: v}
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatalf("filler: %v", err)
		}
	}
}

type marker struct {
	offset int64
	epoch  int16
	kind   string
}

// firstMarker reads tp from the start, control records included, for the first marker
// producer pid wrote.
func firstMarker(ctx context.Context, t *testing.T, bootstrap string, tp model.TopicPartition, pid int64) marker {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.KeepControlRecords(),
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{tp.Topic: {tp.Partition: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatalf("reader: %v", err)
	}
	defer cl.Close()
	for {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("no marker of producer %d in %s-%d: %v", pid, tp.Topic, tp.Partition, err)
		}
		for _, r := range fs.Records() {
			if !r.Attrs.IsControl() || r.ProducerID != pid {
				continue
			}
			var k kmsg.ControlRecordKey
			if err := k.ReadFrom(r.Key); err != nil {
				t.Fatalf("control record key %x: %v", r.Key, err)
			}
			kind := fmt.Sprint(k.Type)
			switch k.Type {
			case kmsg.ControlRecordKeyTypeCommit:
				kind = "COMMIT"
			case kmsg.ControlRecordKeyTypeAbort:
				kind = "ABORT"
			}
			return marker{offset: r.Offset, epoch: r.ProducerEpoch, kind: kind}
		}
	}
}
