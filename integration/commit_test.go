package integration

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/audit"
	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/model"
)

// The tests of this file commit an abandoned transaction on the real broker,
// as txnscope does for a Flink transaction whose checkpoint completed and
// whose commit was lost, under both transaction versions, and try to make
// the commit hit another transaction, rest on stale evidence, or go
// unaudited.

// checkpointed is evidence that always says checkpointed, as a JobManager of
// a FAILED job would; calls counts the re-reads.
func checkpointed(calls *atomic.Int32) model.Reverify {
	return func(context.Context, model.Txn) (model.CommitEvidence, error) {
		if calls != nil {
			calls.Add(1)
		}
		return model.CommitEvidence{Verdict: model.Verdict{Kind: model.Checkpointed, Checkpoint: 7, CompletedIn: 7,
			Evidence: "the test says checkpoint 7 completed"}, FlinkState: "FAILED", At: time.Now()}, nil
	}
}

func planCommit(t *testing.T, tx model.Txn, rv model.Reverify) model.Action {
	t.Helper()
	ev, err := rv(context.Background(), tx)
	if err != nil {
		t.Fatal(err)
	}
	a, err := model.PlanCommit(tx, ev, false)
	if err != nil {
		t.Fatalf("plan on %+v: %v", tx, err)
	}
	a.Reverify = rv
	return a
}

// resend sends EndTxn(commit) at the transaction's own producer id and epoch
// from a new client at version v: what a restored Flink committer does with
// the producer id and epoch in its checkpoint.
func resend(ctx context.Context, t *testing.T, bootstrap string, coordinator int32, id string, pid int64, epoch, v int16) error {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrEndTxnRequest()
	req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = id, pid, epoch, true
	resp, err := cl.Broker(int(coordinator)).Request(ctx, pinnedEndTxn{req, v})
	if err != nil {
		t.Fatal(err)
	}
	return kerr.ErrorForCode(resp.(*kmsg.EndTxnResponse).ErrorCode)
}

type pinnedEndTxn struct {
	*kmsg.EndTxnRequest
	max int16
}

func (r pinnedEndTxn) MaxVersion() int16 { return r.max }

// TestRealKafkaCommit: an abandoned Ongoing transaction is committed with
// one EndTxn v4, under either transaction version; the result is read from
// its COMMIT marker; read_committed consumers then see its records once; the
// commit a restored Flink committer resends (v4, the producer id and epoch
// of its checkpoint) is then accepted as a retry, not refused.
func TestRealKafkaCommit(t *testing.T) {
	t.Parallel()
	for _, cv := range clientVersions() {
		t.Run(cv.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			bootstrap, adm, tp, id, _ := abandoned(ctx, t, 3, "checkpointed", cv.opts...)
			sc := newScope(t, bootstrap)
			tx := txnOf(t, sc.poll(ctx), id)
			var calls atomic.Int32
			r := sc.execute(ctx, planCommit(t, tx, checkpointed(&calls)))
			t.Logf("%s: %s: %s", cv.name, r.Request, r.Summary())
			switch {
			case !r.OK() || r.Sends != 1:
				t.Fatalf("result %+v: want one request, committed", r)
			case !strings.Contains(r.Request, ", v4) to coordinator broker"):
				t.Errorf("request %q: want EndTxn v4", r.Request)
			case !strings.Contains(r.After, "its COMMIT marker is at offset"):
				t.Errorf("the outcome must come from the COMMIT marker: %s", r.Summary())
			case calls.Load() != 2:
				t.Errorf("the evidence was read %d times: want once to plan and once just before the request", calls.Load())
			}
			if got := consume(ctx, t, bootstrap, tp, true, "checkpointed-2"); len(got) != 3 {
				t.Errorf("read_committed sees %v, want the 3 records once", got)
			}
			if hwm, lso := offsetsOf(ctx, t, adm, tp); hwm != lso {
				t.Errorf("the LSO %d is still behind the high watermark %d", lso, hwm)
			}
			if err := resend(ctx, t, bootstrap, tx.Coordinator, id, tx.ProducerID, tx.ProducerEpoch, 4); err != nil {
				t.Errorf("the producer's own committer resending its commit got %v: a restored Flink job would log a failed commit", err)
			}
		})
	}
}

// TestRealKafkaCommitRefused: between the look and the request, the
// transaction ends and the next one begins (version 1: same producer id and
// epoch), or the coordinator aborts it (a fence, as its timeout would), or
// the checkpoint evidence turns, or the audit log cannot be written: nothing
// is sent, and nothing of the cluster moves.
func TestRealKafkaCommitRefused(t *testing.T) {
	t.Parallel()
	type setup struct {
		name   string
		before func(ctx context.Context, t *testing.T, p *kgo.Client, tp model.TopicPartition, bootstrap, id string)
		rv     func(*atomic.Int32) model.Reverify
		rec    *kafkatest.Journal
		want   string
	}
	flip := func(calls *atomic.Int32) model.Reverify {
		ok := checkpointed(calls)
		return func(ctx context.Context, tx model.Txn) (model.CommitEvidence, error) {
			ev, _ := ok(ctx, tx)
			if calls.Load() > 1 {
				ev.FlinkState = "RESTARTING" // the job came back: its committer commits it
			}
			return ev, nil
		}
	}
	for _, s := range []setup{
		{name: "turned over", before: func(ctx context.Context, t *testing.T, p *kgo.Client, tp model.TopicPartition, _, _ string) {
			endTxn(ctx, t, p, true)
			openTxn(ctx, t, p, tp, 1, "next")
		}, want: "refused: this is a newer transaction of"},
		{name: "fenced meanwhile", before: func(ctx context.Context, t *testing.T, _ *kgo.Client, _ model.TopicPartition, bootstrap, id string) {
			fence(ctx, t, bootstrap, id)
		}, want: "nothing to commit"},
		{name: "the job came back", rv: flip, want: "refused: Flink says its job is RESTARTING"},
		{name: "audit log unwritable", rec: &kafkatest.Journal{FailSending: errors.New("write audit.log: no space left on device")}, want: "no space left on device; nothing sent"},
	} {
		for _, cv := range clientVersions() {
			t.Run(s.name+"/"+cv.name, func(t *testing.T) {
				t.Parallel()
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				bootstrap, adm, tp, id, p := abandoned(ctx, t, 2, "shown", cv.opts...)
				sc := newScope(t, bootstrap)
				tx := txnOf(t, sc.poll(ctx), id)
				var calls atomic.Int32
				rv := checkpointed(&calls)
				if s.rv != nil {
					rv = s.rv(&calls)
				}
				a := planCommit(t, tx, rv)
				if s.before != nil {
					s.before(ctx, t, p, tp, bootstrap, id)
				}
				hwm, lso := offsetsOf(ctx, t, adm, tp)
				var r model.Result
				if s.rec != nil {
					r = sc.c.Execute(ctx, a, s.rec)
					if len(s.rec.Tries()) != 0 {
						t.Errorf("requests recorded: %v", s.rec.Tries())
					}
				} else {
					r = sc.execute(ctx, a)
				}
				t.Logf("%s: %s", cv.name, r.Summary())
				if !r.Refused || r.Sent || r.Sends != 0 || !strings.Contains(r.Summary(), s.want) {
					t.Fatalf("result %+v\nwant refused before anything was sent, saying %q", r, s.want)
				}
				if h, l := offsetsOf(ctx, t, adm, tp); h != hwm || l != lso {
					t.Errorf("offsets moved during the refused attempt: HWM %d→%d LSO %d→%d", hwm, h, lso, l)
				}
			})
		}
	}
}

// fence initializes id from a new producer: the coordinator aborts its open
// transaction and bumps the epoch, as its timeout or a restarted job does.
func fence(ctx context.Context, t *testing.T, bootstrap, id string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID, req.TransactionTimeoutMillis = kmsg.StringPtr(id), 60000
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		if err := kerr.ErrorForCode(resp.ErrorCode); err == nil {
			return
		} else if !errors.Is(err, kerr.ConcurrentTransactions) {
			t.Fatalf("InitProducerId: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestRealKafkaCommitHeldTurnover: the EndTxn is held on the wire after the
// last re-check while the producer commits the one shown and writes a newer
// transaction. Under version 1 (same producer id and epoch) the request then
// commits the newer one: the result must say so, as unknown, never as the
// one shown committed. Under version 2 the epoch moved and the coordinator
// refuses it: nothing committed, the newer one untouched.
func TestRealKafkaCommitHeldTurnover(t *testing.T) {
	t.Parallel()
	for _, cv := range clientVersions() {
		t.Run(cv.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			bootstrap, _, tp, id, p := abandoned(ctx, t, 2, "shown", cv.opts...)
			px := newProxy(t, bootstrap)
			sc := newScope(t, px.addr())
			tx := txnOf(t, sc.poll(ctx), id)
			held, release := holdFirst(t, px, kmsg.EndTxn)
			wait, path := sc.executeHeld(ctx, planCommit(t, tx, checkpointed(nil)))
			waitClosed(ctx, t, held, "the EndTxn on the wire")
			endTxn(ctx, t, p, true)
			openTxn(ctx, t, p, tp, 1, "newer")
			close(release)
			r := wait()
			t.Logf("%s: answers %v: %s", cv.name, px.codes(kmsg.EndTxn), r.Summary())
			if r.OK() || px.count(kmsg.EndTxn) != 1 {
				t.Fatalf("result %+v (%d EndTxn sent): a commit that may have hit another transaction is never OK, never resent", r, px.count(kmsg.EndTxn))
			}
			switch cv.name {
			case "txn-v1":
				if !r.Unknown || !strings.Contains(r.Err, "may have committed it before its producer meant to") {
					t.Errorf("want unknown, naming the newer transaction's COMMIT marker: %s", r.Summary())
				}
			case "txn-v2":
				if r.Unknown || r.ErrorCode != "PRODUCER_FENCED" || !strings.Contains(r.Err, "nothing was committed") {
					t.Errorf("want PRODUCER_FENCED, nothing committed: %s", r.Summary())
				}
				endTxn(ctx, t, p, true) // the newer one is its producer's still
			}
			if lines := readAudit(t, path); len(lines) != 2 || lines[0].Phase != "attempt" || lines[1].Outcome == "sent" {
				t.Errorf("audit log: %+v", lines)
			}
		})
	}
}

// TestRealKafkaCommitInterrupted: a signal while the EndTxn is on the wire
// leaves the outcome unknown, on record, and the request is never sent again.
func TestRealKafkaCommitInterrupted(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	bootstrap, _, _, id, _ := abandoned(ctx, t, 2, "shown")
	px := newProxy(t, bootstrap)
	sc := newScope(t, px.addr())
	tx := txnOf(t, sc.poll(ctx), id)
	held, release := holdFirst(t, px, kmsg.EndTxn)
	sig, stop := context.WithCancel(ctx)
	path := filepath.Join(t.TempDir(), "audit.log")
	log := audit.New(path)
	if err := log.Open(); err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	a := planCommit(t, tx, checkpointed(nil))
	done := make(chan model.Result, 1)
	go func() { done <- sc.c.Execute(sig, a, log.Begin("integration", a)) }()
	waitClosed(ctx, t, held, "the EndTxn on the wire")
	stop() // SIGTERM
	var r model.Result
	select {
	case r = <-done:
	case <-ctx.Done():
		t.Fatal("Execute did not return after the signal")
	}
	close(release)
	time.Sleep(500 * time.Millisecond)
	if !r.Unknown || r.Sends != 1 || px.count(kmsg.EndTxn) != 1 || !strings.Contains(r.Err, "interrupted while the request") {
		t.Fatalf("result %+v (%d EndTxn): want one request, outcome unknown", r, px.count(kmsg.EndTxn))
	}
	if lines := readAudit(t, path); len(lines) != 2 || lines[1].Outcome != "unknown" {
		t.Errorf("audit log: %+v", lines)
	}
}

// abandoned is a transaction left Ongoing with n records of value on a new
// one-partition topic, by a producer that will not end it: the transaction a
// dead Flink job leaves.
func abandoned(ctx context.Context, t *testing.T, n int, value string, opts ...kgo.Opt) (bootstrap string, adm *kadm.Client, tp model.TopicPartition, id string, p *kgo.Client) {
	t.Helper()
	bootstrap = Bootstrap(t)
	adm = newAdmin(t, bootstrap)
	tp = topicOn(ctx, t, adm)
	waitTopic(ctx, t, adm, tp.Topic, 1)
	id = name(t, "commit")
	p = producer(t, bootstrap, id, 10*time.Minute, opts...)
	openTxn(ctx, t, p, tp, n, value)
	return bootstrap, adm, tp, id, p
}
