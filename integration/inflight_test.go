package integration

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/model"
)

// logEntry is one record of a partition's log as a consumer sees it,
// control records (COMMIT and ABORT markers) included.
type logEntry struct {
	offset int64
	pid    int64
	epoch  int16
	marker string // "COMMIT" or "ABORT"; "" for data
	value  string
}

func (e logEntry) String() string {
	if e.marker != "" {
		return fmt.Sprintf("%d:%s(epoch %d)", e.offset, e.marker, e.epoch)
	}
	return fmt.Sprintf("%d:%s(epoch %d)", e.offset, e.value, e.epoch)
}

// readLog reads tp from the start to its high watermark, markers included;
// committed reads as read_committed consumers do (aborted records left out).
func readLog(ctx context.Context, t *testing.T, bootstrap string, tp model.TopicPartition, committed bool) []logEntry {
	t.Helper()
	hwm, _ := offsetsOf(ctx, t, newAdmin(t, bootstrap), tp)
	iso := kgo.ReadUncommitted()
	if committed {
		iso = kgo.ReadCommitted()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.FetchIsolationLevel(iso), kgo.KeepControlRecords(),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{tp.Topic: {tp.Partition: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var out []logEntry
	for last := int64(-1); last < hwm-1; {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("reading %s-%d to %d: %v; read %v", tp.Topic, tp.Partition, hwm, err, out)
		}
		fs.EachRecord(func(r *kgo.Record) {
			e := logEntry{offset: r.Offset, pid: r.ProducerID, epoch: r.ProducerEpoch, value: string(r.Value)}
			if r.Attrs.IsControl() {
				var k kmsg.ControlRecordKey
				if err := k.ReadFrom(r.Key); err == nil {
					e.marker, e.value = map[kmsg.ControlRecordKeyType]string{kmsg.ControlRecordKeyTypeAbort: "ABORT", kmsg.ControlRecordKeyTypeCommit: "COMMIT"}[k.Type], ""
				}
			}
			out = append(out, e)
			last = r.Offset
		})
	}
	return out
}

func values(log []logEntry) []string {
	var out []string
	for _, e := range log {
		if e.marker == "" {
			out = append(out, e.value)
		}
	}
	return out
}

// TestRealKafkaForceTerminateInFlightNewer stages the race of issue 19,
// item 4 on Kafka 4.4: the proxy holds txnscope's InitProducerId on the wire
// while the producer commits the transaction shown (T1) and begins T2,
// writing either to T1's partition or only to another one; then the request
// lands. What the broker does, recorded here (both transaction versions):
//
//   - It aborts T2 and answers CONCURRENT_TRANSACTIONS (never "no error", as
//     kfake does): the InitProducerId that finds a transaction Ongoing fences
//     it (PrepareEpochFence), aborts it and bumps the epoch once: under
//     version 1 from 0 to 1 (T1's commit kept 0); under version 2 from 1 to 2
//     (T1's commit bumped 0 to 1). The id then reads CompleteAbort at that
//     epoch, with T2's start time.
//   - T1's COMMIT marker carries T1's epoch as the commit left it (0 under
//     version 1, 1 under version 2); T2's ABORT marker the fenced epoch (1 /
//     2), on every partition T2 wrote to.
//   - T2's commit fails: PRODUCER_FENCED under version 1; under version 2
//     INVALID_TXN_STATE (the coordinator has T2 CompleteAbort at the fenced
//     epoch when its EndTxn v5 arrives).
//   - read_committed readers see T1's records only.
//
// txnscope re-reads after CONCURRENT_TRANSACTIONS, sees a newer transaction
// being aborted at a higher epoch and reports an unknown outcome naming it,
// with how T1 ended from its marker; T2's own ABORT marker is named when it
// is on a partition of T1.
func TestRealKafkaForceTerminateInFlightNewer(t *testing.T) {
	t.Parallel()
	for _, cv := range clientVersions() {
		for _, where := range []string{"same partition", "other partition"} {
			t.Run(cv.name+"/"+where, func(t *testing.T) {
				t.Parallel()
				bootstrap := Bootstrap(t)
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				adm := newAdmin(t, bootstrap)
				topic := topicWith(ctx, t, adm, 2)
				waitTopic(ctx, t, adm, topic, 2)
				p0, p1 := model.TopicPartition{Topic: topic, Partition: 0}, model.TopicPartition{Topic: topic, Partition: 1}
				t2at := p0
				if where == "other partition" {
					t2at = p1
				}
				id := name(t, "txn")
				p := producer(t, bootstrap, id, time.Minute, cv.opts...)
				openTxn(ctx, t, p, p0, 2, "t1")

				r, px, path := heldForceTerminate(ctx, t, bootstrap, id, func() {
					endTxn(ctx, t, p, true)
					time.Sleep(5 * time.Millisecond)
					openTxn(ctx, t, p, t2at, 1, "t2")
				})
				st, epoch := describeState(ctx, t, adm, id)
				commitErr := p.EndTransaction(ctx, kgo.TryCommit)
				log0, log2 := readLog(ctx, t, bootstrap, p0, false), readLog(ctx, t, bootstrap, t2at, false)
				committed := append(values(readLog(ctx, t, bootstrap, p0, true)), values(readLog(ctx, t, bootstrap, p1, true))...)
				t.Logf("%s, T2 on %s: answers %v; the id is now %s at epoch %d; T2's commit: %v\n%s-0: %v\n%s-%d: %v\nread_committed: %v\n%s",
					cv.name, where, px.codes(kmsg.InitProducerID), st, epoch, commitErr, topic, log0, topic, t2at.Partition, log2, committed, r.Summary())

				// The broker.
				t1Epoch, fenced, commitAnswer := int16(0), int16(1), kerr.ProducerFenced
				if cv.name == "txn-v2" {
					t1Epoch, fenced, commitAnswer = 1, 2, kerr.InvalidTxnState
				}
				if codes := px.codes(kmsg.InitProducerID); len(codes) != 1 || codes[0] != kerr.ConcurrentTransactions.Code {
					t.Errorf("InitProducerId answers %v, want one CONCURRENT_TRANSACTIONS", codes)
				}
				if st != "CompleteAbort" || epoch != fenced {
					t.Errorf("the id is %s at epoch %d, want CompleteAbort at epoch %d", st, epoch, fenced)
				}
				if !errors.Is(commitErr, commitAnswer) {
					t.Errorf("T2's commit: %v, want %s", commitErr, commitAnswer.Message)
				}
				if len(log0) < 3 || log0[2].marker != "COMMIT" || log0[2].epoch != t1Epoch {
					t.Errorf("%s-0: %v, want T1's two records and its COMMIT marker at epoch %d", topic, log0, t1Epoch)
				}
				if last := log2[len(log2)-1]; last.marker != "ABORT" || last.epoch != fenced || last.pid != log0[0].pid {
					t.Errorf("%s-%d ends with %v, want T2's ABORT marker at epoch %d", topic, t2at.Partition, last, fenced)
				}
				if strings.Join(committed, ",") != "t1-0,t1-1" {
					t.Errorf("read_committed reads %v, want T1's records only", committed)
				}

				// What txnscope says of it.
				if r.OK() || !r.Unknown || r.Sends != 1 {
					t.Errorf("result %q (unknown %v, %d sent): want one request, an unknown outcome", r.Summary(), r.Unknown, r.Sends)
				}
				want := []string{"unknown outcome, re-check: the coordinator answered CONCURRENT_TRANSACTIONS; a newer transaction of " + id,
					fmt.Sprintf("is being aborted, now CompleteAbort at epoch %d", fenced),
					fmt.Sprintf("the one shown had committed before the request arrived (its COMMIT marker is at offset 2 of %s-0)", topic),
					"this request most likely aborted the newer one and fenced its producer"}
				if where == "same partition" {
					want = append(want, fmt.Sprintf("(its ABORT marker is at offset %d of %s-0)", log0[len(log0)-1].offset, topic))
				}
				for _, w := range want {
					if !strings.Contains(r.Summary(), w) {
						t.Errorf("the result lacks %q: %s", w, r.Summary())
					}
				}
				if lines := readAudit(t, path); len(lines) != 2 || lines[1].Outcome != "unknown" || lines[1].Result != r.Summary() {
					t.Errorf("audit log: %+v", lines)
				}
			})
		}
	}
}
