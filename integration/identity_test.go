package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/audit"
	"github.com/txnscope/txnscope/model"
)

// The tests of this file try, on the real broker, to make a force-terminate
// hit a transaction other than the one the operator confirmed (issue 9,
// observations 1 and 2), under both transaction versions: under version 1 a
// producer keeps its producer id and epoch from one transaction to the next;
// under version 2 every commit bumps the epoch.

// plan is what the dialog and the prompt plan from the row shown.
func plan(t *testing.T, tx model.Txn) model.Action {
	t.Helper()
	a, err := model.PlanForceTerminate(tx)
	if err != nil {
		t.Fatalf("plan on %+v: %v", tx, err)
	}
	return a
}

// clock is how a refusal prints a start time.
func clock(at time.Time) string { return at.Format("15:04:05.000") }

// TestRealKafkaTurnoverRefused: the operator confirms a force-terminate of an
// Ongoing transaction; before the request goes out, the producer commits it
// and begins the next one on the same partition. Nothing is sent, the
// refusal names what changed, and the producer commits its new transaction
// (it was neither fenced nor aborted).
func TestRealKafkaTurnoverRefused(t *testing.T) {
	t.Parallel()
	for _, cv := range clientVersions() {
		t.Run(cv.name, func(t *testing.T) {
			t.Parallel()
			bootstrap := Bootstrap(t)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			adm := newAdmin(t, bootstrap)
			tp := topicOn(ctx, t, adm)
			waitTopic(ctx, t, adm, tp.Topic, 1)
			id := name(t, "txn")
			p := producer(t, bootstrap, id, time.Minute, cv.opts...)
			openTxn(ctx, t, p, tp, 2, "shown")

			sc := newScope(t, bootstrap)
			seen := txnOf(t, sc.poll(ctx), id)
			act := plan(t, seen)

			endTxn(ctx, t, p, true)
			openTxn(ctx, t, p, tp, 1, "next")
			now := txnOf(t, sc.poll(ctx), id)
			if now.State != model.Ongoing || now.ProducerID != seen.ProducerID || now.StartTime().Equal(seen.StartTime()) {
				t.Fatalf("not a turnover: shown %+v, now %+v", seen, now)
			}
			hwm, lso := offsetsOf(ctx, t, adm, tp)

			r := sc.execute(ctx, act) // checks the audit log: no attempt line, one result
			t.Logf("%s: shown epoch %d start %s; now epoch %d start %s: %s", cv.name, seen.ProducerEpoch, clock(seen.StartTime()),
				now.ProducerEpoch, clock(now.StartTime()), r.Summary())
			if !r.Refused || r.Sent || r.Sends != 0 || r.OK() {
				t.Fatalf("result %+v: want refused before anything was sent", r)
			}
			var want string
			if cv.name == "txn-v1" {
				// Same producer id, epoch, state and partition: only the
				// start time tells the two apart.
				if now.ProducerEpoch != seen.ProducerEpoch || !equalParts(now.Partitions, seen.Partitions) {
					t.Fatalf("under transaction version 1 the next transaction should look the same but for its start: %+v then %+v", seen, now)
				}
				want = fmt.Sprintf("refused: this is a newer transaction of %s: it started at %s, the one shown started at %s", id, clock(now.StartTime()), clock(seen.StartTime()))
			} else {
				// The commit bumped the epoch (KIP-890): the refusal names
				// the newer transaction, and the epoch that moved with it.
				if now.ProducerEpoch != seen.ProducerEpoch+1 {
					t.Fatalf("under transaction version 2 the commit should bump the epoch: %d then %d", seen.ProducerEpoch, now.ProducerEpoch)
				}
				want = fmt.Sprintf("refused: this is a newer transaction of %s: it started at %s, the one shown started at %s; the one shown has ended (epoch %d→%d)",
					id, clock(now.StartTime()), clock(seen.StartTime()), seen.ProducerEpoch, now.ProducerEpoch)
			}
			if !strings.HasPrefix(r.Err, want) {
				t.Errorf("refusal %q\nwant it to start with %q", r.Err, want)
			}
			// A second observer: nothing reached the partition or the
			// coordinator, and the newer transaction commits.
			if h, l := offsetsOf(ctx, t, adm, tp); h != hwm || l != lso {
				t.Errorf("offsets moved during the refused attempt: HWM %d→%d LSO %d→%d", hwm, h, lso, l)
			}
			endTxn(ctx, t, p, true)
		})
	}
}

// waitTopic waits until every partition of a new topic has a leader that
// answers, so that a producer's first write does not meet
// UNKNOWN_TOPIC_OR_PARTITION.
func waitTopic(ctx context.Context, t *testing.T, adm *kadm.Client, topic string, parts int) {
	t.Helper()
	for {
		ends, err := adm.ListEndOffsets(ctx, topic)
		ok := err == nil
		n := 0
		ends.Each(func(o kadm.ListedOffset) {
			n++
			ok = ok && o.Err == nil
		})
		if ok && n == parts {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("topic %s not ready: %v", topic, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func equalParts(a, b []model.TopicPartition) bool {
	return fmt.Sprint(a) == fmt.Sprint(b)
}

// executeHeld runs a through the real audit log on a goroutine and returns a
// function that waits for the result; the audit log's path comes with it.
func (s *scope) executeHeld(ctx context.Context, a model.Action) (wait func() model.Result, path string) {
	s.t.Helper()
	path = filepath.Join(s.t.TempDir(), "audit.log")
	log := audit.New(path)
	if err := log.Open(); err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { log.Close() })
	done := make(chan model.Result, 1)
	go func() { done <- s.c.Execute(ctx, a, log.Begin("integration", a)) }()
	return func() model.Result {
		select {
		case r := <-done:
			return r
		case <-ctx.Done():
			s.t.Fatalf("Execute did not return: %v", ctx.Err())
			return model.Result{}
		}
	}, path
}

// holdFirst makes the proxy hold the first request of key until release is
// closed; held is closed when that request reached the proxy.
func holdFirst(t *testing.T, px *kproxy, key kmsg.Key) (held, release chan struct{}) {
	held, release = make(chan struct{}), make(chan struct{})
	var once sync.Once
	px.onRequest(key, func() {
		once.Do(func() {
			close(held)
			<-release
		})
	})
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	return held, release
}

func waitClosed(ctx context.Context, t *testing.T, ch chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-ctx.Done():
		t.Fatalf("waiting for %s: %v", what, ctx.Err())
	}
}

// TestRealKafkaForceTerminateSequence: a force-terminate that succeeds on real
// Kafka is exactly one InitProducerId, answered CONCURRENT_TRANSACTIONS (the
// coordinator fences the producer and aborts), then a re-read that shows the
// abort; no second request. The audit log holds the attempt line, then the
// result, of one attempt id, with sends 1.
func TestRealKafkaForceTerminateSequence(t *testing.T) {
	t.Parallel()
	for _, cv := range clientVersions() {
		t.Run(cv.name, func(t *testing.T) {
			t.Parallel()
			bootstrap := Bootstrap(t)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			adm := newAdmin(t, bootstrap)
			tp := topicOn(ctx, t, adm)
			waitTopic(ctx, t, adm, tp.Topic, 1)
			id := name(t, "txn")
			p := producer(t, bootstrap, id, 10*time.Minute, cv.opts...)
			openTxn(ctx, t, p, tp, 3, "stuck")

			px := newProxy(t, bootstrap)
			sc := newScope(t, px.addr())
			tx := txnOf(t, sc.poll(ctx), id)
			wait, path := sc.executeHeld(ctx, plan(t, tx))
			r := wait()
			t.Logf("%s: %s", cv.name, r.Summary())
			if !r.OK() || r.Sends != 1 || r.Unknown || r.Refused {
				t.Fatalf("result %+v", r)
			}
			if n, codes := px.count(kmsg.InitProducerID), px.codes(kmsg.InitProducerID); n != 1 || len(codes) != 1 || codes[0] != kerr.ConcurrentTransactions.Code {
				t.Fatalf("InitProducerId requests %d, answers %v: want one, answered CONCURRENT_TRANSACTIONS (%d)", n, codes, kerr.ConcurrentTransactions.Code)
			}
			const want = "sent; the broker accepted it; the coordinator answered CONCURRENT_TRANSACTIONS and is aborting it: now "
			if !strings.HasPrefix(r.Summary(), want) || !strings.HasSuffix(r.Summary(), fmt.Sprintf("at epoch %d", tx.ProducerEpoch+1)) {
				t.Errorf("summary %q, want %q… at epoch %d", r.Summary(), want, tx.ProducerEpoch+1)
			}
			lines := readAudit(t, path)
			if len(lines) != 2 || lines[0].Phase != "attempt" || lines[0].Try != 1 || lines[1].Phase != "result" ||
				lines[0].Attempt != r.Attempt || lines[1].Attempt != r.Attempt || r.Attempt == "" ||
				lines[1].Sends == nil || *lines[1].Sends != 1 || lines[1].Outcome != "sent" ||
				lines[0].TxnStart != tx.StartTime().UTC().Format(time.RFC3339Nano) || lines[0].TransactionalID != id {
				t.Errorf("audit log: %+v", lines)
			}
			if hwm, lso := offsetsOf(ctx, t, adm, tp); hwm != 4 || lso != 4 {
				t.Errorf("broker: HWM %d LSO %d, want 4 and 4 (3 records and the abort marker)", hwm, lso)
			}
			if err := p.EndTransaction(ctx, kgo.TryCommit); err == nil {
				t.Error("the force-terminated producer still committed")
			}
		})
	}
}

func readAudit(t *testing.T, path string) []audit.Entry {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []audit.Entry
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e audit.Entry
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("audit line %q: %v", l, err)
		}
		out = append(out, e)
	}
	return out
}

// TestRealKafkaForceTerminateDuringCommit: the request reaches the coordinator
// while the transaction is committing (PrepareCommit: its markers are being
// written). The proxy holds txnscope's InitProducerId on the wire until the
// producer's EndTxn was answered, then lets it go: the coordinator answers
// CONCURRENT_TRANSACTIONS. txnscope re-reads, sees the transaction commit,
// and stops without a second request; the producer's next transaction
// commits.
//
// The commit writes markers to many partitions so that it lasts a while; when
// the request still arrives after the commit completed, the test says so and
// is skipped (TestRealKafkaForceTerminateAfterCommit covers that case).
func TestRealKafkaForceTerminateDuringCommit(t *testing.T) {
	t.Parallel()
	for _, cv := range clientVersions() {
		t.Run(cv.name, func(t *testing.T) {
			t.Parallel()
			bootstrap := Bootstrap(t)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			adm := newAdmin(t, bootstrap)
			const parts = 48
			topic := topicWith(ctx, t, adm, parts)
			waitTopic(ctx, t, adm, topic, parts)
			id := name(t, "txn")
			p := producer(t, bootstrap, id, time.Minute, cv.opts...)
			if err := p.BeginTransaction(); err != nil {
				t.Fatal(err)
			}
			for i := range int32(parts) {
				produce(ctx, t, p, model.TopicPartition{Topic: topic, Partition: i}, 1, "committing")
			}

			// PrepareCommit is written when EndTxn is answered; the markers follow.
			r, px, path := heldForceTerminate(ctx, t, bootstrap, id, func() { endTxn(ctx, t, p, true) })
			codes := px.codes(kmsg.InitProducerID)
			t.Logf("%s: answers %v: %s", cv.name, codes, r.Summary())
			if len(codes) == 1 && codes[0] == 0 {
				t.Skipf("the request arrived after the commit had completed (answered without error): %s", r.Summary())
			}
			if len(codes) != 1 || codes[0] != kerr.ConcurrentTransactions.Code || px.count(kmsg.InitProducerID) != 1 {
				t.Fatalf("InitProducerId answers %v (%d sent), want one CONCURRENT_TRANSACTIONS", codes, px.count(kmsg.InitProducerID))
			}
			if r.OK() || r.Sends != 1 || r.Refused {
				t.Errorf("result %+v: want one request, not OK", r)
			}
			for _, want := range []string{"CONCURRENT_TRANSACTIONS", "the transaction is ending", "then it was re-read: ", "nothing was aborted; not retried"} {
				if !strings.Contains(r.Summary(), want) {
					t.Errorf("summary lacks %q: %s", want, r.Summary())
				}
			}
			if lines := readAudit(t, path); len(lines) != 2 || lines[0].Phase != "attempt" || lines[1].Phase != "result" || lines[1].Outcome == "sent" {
				t.Errorf("audit log: %+v", lines)
			}
			// Not fenced: the producer's next transaction commits.
			openTxn(ctx, t, p, model.TopicPartition{Topic: topic, Partition: 0}, 1, "next")
			endTxn(ctx, t, p, true)
		})
	}
}

// heldForceTerminate force-terminates id's transaction as a refresh through
// a proxy shows it, the proxy holding the InitProducerId on the wire until
// meanwhile has run; it returns the result, the proxy (its counts and
// answers) and the audit log's path.
func heldForceTerminate(ctx context.Context, t *testing.T, bootstrap, id string, meanwhile func()) (model.Result, *kproxy, string) {
	t.Helper()
	px := newProxy(t, bootstrap)
	sc := newScope(t, px.addr())
	tx := txnOf(t, sc.poll(ctx), id)
	held, release := holdFirst(t, px, kmsg.InitProducerID)
	wait, path := sc.executeHeld(ctx, plan(t, tx))
	waitClosed(ctx, t, held, "the InitProducerId on the wire")
	meanwhile()
	close(release)
	return wait(), px, path
}

// describeState reads id's state and epoch with a plain admin client,
// straight from the broker (not through the proxy, not through txnscope).
func describeState(ctx context.Context, t *testing.T, adm *kadm.Client, id string) (string, int16) {
	t.Helper()
	ds, err := adm.DescribeTransactions(ctx, id)
	if err != nil {
		t.Fatalf("describe %s: %v", id, err)
	}
	d := ds[id]
	if d.Err != nil {
		t.Fatalf("describe %s: %v", id, d.Err)
	}
	return d.State, d.ProducerEpoch
}

// TestRealKafkaForceTerminateAfterCommit: the request was held on the wire
// (a slow network, a paused process) while the transaction shown committed;
// it reaches the coordinator after the commit completed. Kafka then answers
// without an error: it bumps the epoch of an id with no open transaction,
// which fences a healthy producer and aborts nothing. Nothing on the client
// can stop a request already sent; but the result must not say the abort was
// sent and accepted as if the transaction shown had been aborted. Nor may it
// say that nothing was aborted: kfake answers the same after aborting a
// newer transaction, which may have written only to partitions the one shown
// never touched; the result says the request fenced the producer, that the
// log shows nothing newer, and that the outcome is unknown (issue 19).
func TestRealKafkaForceTerminateAfterCommit(t *testing.T) {
	t.Parallel()
	for _, cv := range clientVersions() {
		t.Run(cv.name, func(t *testing.T) {
			t.Parallel()
			bootstrap := Bootstrap(t)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			adm := newAdmin(t, bootstrap)
			tp := topicOn(ctx, t, adm)
			waitTopic(ctx, t, adm, tp.Topic, 1)
			id := name(t, "txn")
			p := producer(t, bootstrap, id, time.Minute, cv.opts...)
			openTxn(ctx, t, p, tp, 2, "shown")

			r, px, path := heldForceTerminate(ctx, t, bootstrap, id, func() {
				endTxn(ctx, t, p, true)
				for {
					if st, _ := describeState(ctx, t, adm, id); st == "CompleteCommit" {
						break
					}
					time.Sleep(20 * time.Millisecond)
				}
			})
			st, epoch := describeState(ctx, t, adm, id)
			t.Logf("%s: answers %v: %s; the id is now %s at epoch %d", cv.name, px.codes(kmsg.InitProducerID), r.Summary(), st, epoch)
			if codes := px.codes(kmsg.InitProducerID); len(codes) != 1 || codes[0] != 0 || px.count(kmsg.InitProducerID) != 1 {
				t.Fatalf("InitProducerId answers %v: want one, without error", codes)
			}
			if r.OK() || strings.HasPrefix(r.Summary(), "sent; the broker accepted it") {
				t.Errorf("the transaction shown had committed and the request only fenced its producer, yet the result says %q (OK %v)", r.Summary(), r.OK())
			}
			if !r.Unknown || !strings.Contains(r.Summary(), "its COMMIT marker is at offset 2 of "+tp.Topic+"-0), and the request fenced its producer; nothing of a newer transaction") ||
				strings.Contains(r.Summary(), "nothing was aborted") {
				t.Errorf("the result should say the producer was fenced, nothing newer is in the log, and the outcome is unknown: %s", r.Summary())
			}
			if lines := readAudit(t, path); len(lines) != 2 || lines[1].Outcome != "unknown" {
				t.Errorf("audit log: %+v", lines)
			}
		})
	}
}

// TestBinaryForceTerminateJSON: `txnscope force-terminate --yes -o json` on
// the real broker: ok only with the request sent, accepted and on record;
// sends and attempt match the audit log's lines.
func TestBinaryForceTerminateJSON(t *testing.T) {
	t.Parallel()
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	bin := buildTxnscope(ctx, t)
	adm := newAdmin(t, bootstrap)
	tp := topicOn(ctx, t, adm)
	waitTopic(ctx, t, adm, tp.Topic, 1)
	id := name(t, "txn")
	p := producer(t, bootstrap, id, 10*time.Minute)
	openTxn(ctx, t, p, tp, 3, "stuck")
	path := filepath.Join(t.TempDir(), "audit.log")

	cmd := exec.CommandContext(ctx, bin, "force-terminate", "-b", bootstrap, "--transactional-id", id, "--yes", "-o", "json", "--audit-log", path)
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("force-terminate: %v\nstdout %s\nstderr %s", err, stdout.String(), stderr.String())
	}
	var out struct {
		OK      bool   `json:"ok"`
		Sent    bool   `json:"sent"`
		Sends   int    `json:"sends"`
		Attempt string `json:"attempt"`
		Result  string `json:"result"`
		Unknown bool   `json:"unknown"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, stdout.String())
	}
	t.Logf("%s", stdout.String())
	if !out.OK || !out.Sent || out.Sends != 1 || out.Unknown || out.Attempt == "" ||
		!strings.Contains(out.Result, "answered CONCURRENT_TRANSACTIONS and is aborting it") {
		t.Errorf("JSON %+v", out)
	}
	lines := readAudit(t, path)
	if len(lines) != 2 || lines[0].Phase != "attempt" || lines[1].Phase != "result" || lines[0].Attempt != out.Attempt ||
		lines[1].Attempt != out.Attempt || lines[1].Sends == nil || *lines[1].Sends != 1 || lines[1].Outcome != "sent" {
		t.Errorf("audit log: %+v", lines)
	}
	if hwm, lso := offsetsOf(ctx, t, adm, tp); hwm != 4 || lso != 4 {
		t.Errorf("broker: HWM %d LSO %d, want 4 and 4", hwm, lso)
	}
}
