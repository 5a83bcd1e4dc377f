package kafkaadmin_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// execTimeout is the timeout of the client that executes: longer than
// faultTimeout so that a request slowed below it succeeds on a loaded machine.
const execTimeout = 500 * time.Millisecond

// target is one abort ready to send on its own small cluster.
type target struct {
	c    *kfake.Cluster
	boot []string
	inj  *injector
	a    *kafkaadmin.Client
	act  model.Action
	send kmsg.Key // the request that changes the cluster
	id   string
}

// forceTarget: an Ongoing transaction on orders-0, to force-terminate.
func forceTarget(t *testing.T) *target {
	c, boot := kafkatest.NewCluster(t)
	const id = "stuck-0-1"
	kafkatest.OpenTxn(t, boot, id, "orders", 10*time.Minute)
	tx := txnOf(t, refresh(t, newAdmin(t, boot), nil), id)
	return &target{c: c, boot: boot, inj: newInjector(t, c), a: faultAdminWith(t, boot, execTimeout), act: forceTerminate(tx),
		send: kmsg.InitProducerID, id: id}
}

// commitTarget: an abandoned Ongoing transaction on orders-0 whose
// checkpoint completed, to commit.
func commitTarget(t *testing.T) *target {
	c, boot := kafkatest.NewCluster(t)
	const id = "sink-0-7"
	kafkatest.OpenTxn(t, boot, id, "orders", 10*time.Minute)
	tx := txnOf(t, refresh(t, newAdmin(t, boot), nil), id)
	return &target{c: c, boot: boot, inj: newInjector(t, c), a: faultAdminWith(t, boot, execTimeout), act: commitOf(t, tx),
		send: kmsg.EndTxn, id: id}
}

// commitOf plans the commit of tx on evidence that always says its
// checkpoint completed and the job failed.
func commitOf(t *testing.T, tx model.Txn) model.Action {
	t.Helper()
	rv := func(context.Context, model.Txn) (model.CommitEvidence, error) {
		return model.CommitEvidence{Verdict: model.Verdict{Kind: model.Checkpointed, Checkpoint: 7, CompletedIn: 7, Evidence: "chk-7 is retained"},
			FlinkState: "FAILED", At: time.Now()}, nil
	}
	ev, _ := rv(context.Background(), tx)
	a, err := model.PlanCommit(tx, ev, false)
	if err != nil {
		t.Fatal(err)
	}
	a.Reverify = rv
	return a
}

// abortTarget: a transaction whose coordinator forgot orders-0 (kfake leaves
// the partition out of DescribeTransactions), to abort on that partition.
func abortTarget(t *testing.T) *target {
	c, boot := kafkatest.NewCluster(t)
	const id = "hanging-0-5"
	p := kafkatest.Producer(t, boot, id, 10*time.Minute)
	kafkatest.Begin(t, p)
	kafkatest.Produce(t, p, "orders", 0, 3)
	kafkatest.Produce(t, p, "orders", 1, 2)
	a := newAdmin(t, boot)
	s1 := refresh(t, a, nil)
	c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.DescribeTransactions}, Topic: "orders", Partitions: []int32{0}, Count: -1})
	s2 := refresh(t, a, s1)
	p0 := partOf(t, s2, "orders", 0)
	orphans := model.Orphans(p0, model.ByProducerID(s2))
	if len(orphans) != 1 {
		t.Fatalf("orphans on orders-0: %+v", orphans)
	}
	return &target{c: c, boot: boot, inj: newInjector(t, c), a: faultAdminWith(t, boot, execTimeout), act: abortOn(p0, orphans[0]),
		send: kmsg.WriteTxnMarkers, id: id}
}

// done reports whether the abort took effect, read without faults.
func (tg *target) done(t *testing.T) bool {
	t.Helper()
	tg.inj.clear()
	// orders-0 is watched: once the abort took effect nothing pins it.
	a, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: tg.boot, Timeout: 5 * time.Second,
		Watch: []model.TopicPartition{{Topic: "orders", Partition: 0}}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	s := refresh(t, a, nil)
	p0 := partOf(t, s, "orders", 0)
	if tg.act.Kind != model.AbortPartition {
		tx := txnOf(t, s, tg.id)
		ended := tx.State != model.Ongoing || tx.ProducerEpoch != tg.act.ProducerEpoch
		if ended != !p0.Pinned() {
			t.Fatalf("the transaction ended=%v but orders-0 pinned=%v: %+v %+v", ended, p0.Pinned(), tx, p0)
		}
		return ended
	}
	return !p0.Pinned()
}

// retriedCodes are the InitProducerId answers that say the coordinator did
// nothing yet: Execute retries them, bounded, as kafka-transactions.sh does.
var retriedCodes = []*kerr.Error{kerr.ConcurrentTransactions, kerr.CoordinatorLoadInProgress, kerr.NotCoordinator, kerr.CoordinatorNotAvailable}

// leaderMovedCodes are the WriteTxnMarkers answers of a broker that does
// not lead the partition: the abort re-reads the leader and sends again
// while the transaction is still open (markerTries at most).
var leaderMovedCodes = []*kerr.Error{kerr.NotLeaderForPartition, kerr.LeaderNotAvailable, kerr.FencedLeaderEpoch, kerr.UnknownLeaderEpoch}

// maybeApplied are the answers after which the request may have taken
// effect: the outcome is unknown.
var maybeApplied = []*kerr.Error{kerr.RequestTimedOut, kerr.NotEnoughReplicasAfterAppend}

// TestExecuteUnderFaults: every fault on the request that aborts (InitProducerId,
// WriteTxnMarkers), and some on each request of the re-check before it.
// Whatever happens: a refused abort sent nothing; a request that failed or
// timed out after it left is "unknown outcome, re-check", was sent exactly
// once, and the re-read shows whichever state the cluster is in; an answered
// error is reported with its code and changed nothing; OK means it happened.
func TestExecuteUnderFaults(t *testing.T) {
	t.Parallel()
	type kase struct {
		kind model.ActionKind
		f    fault
	}
	var cases []kase
	for kind, send := range map[model.ActionKind]kmsg.Key{model.ForceTerminate: kmsg.InitProducerID, model.AbortPartition: kmsg.WriteTxnMarkers, model.Commit: kmsg.EndTxn} {
		for _, f := range faultsOn(send, execTimeout) {
			if f.nodes != nil || f.empty && send == kmsg.InitProducerID {
				continue // one broker is the one; an empty InitProducerId answer is a success
			}
			cases = append(cases, kase{kind, f})
		}
	}
	prechecks := map[model.ActionKind][]kmsg.Key{
		model.ForceTerminate: {kmsg.DescribeTransactions, kmsg.FindCoordinator, kmsg.Metadata},
		model.Commit:         {kmsg.DescribeTransactions, kmsg.FindCoordinator, kmsg.Metadata},
		model.AbortPartition: {kmsg.Metadata, kmsg.DescribeProducers, kmsg.ListTransactions, kmsg.FindCoordinator, kmsg.DescribeTransactions},
	}
	for kind, keys := range prechecks {
		for _, key := range keys {
			keys := []kmsg.Key{key}
			cases = append(cases,
				kase{kind, fault{name: "COORDINATOR_NOT_AVAILABLE", keys: keys, code: kerr.CoordinatorNotAvailable}},
				kase{kind, fault{name: "authorization failed", keys: keys, code: kerr.TopicAuthorizationFailed}},
				kase{kind, fault{name: "dropped connection", keys: keys, drop: true}},
				kase{kind, fault{name: "slower than the timeout", keys: keys, sleep: execTimeout + execTimeout/2}})
		}
	}

	sem := make(chan struct{}, 4) // clusters at once
	var wg sync.WaitGroup
	for _, k := range cases {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			t.Run(fmt.Sprintf("%s/%s %s", k.kind, k.f.keys[0].Name(), k.f.name), func(t *testing.T) {
				tg := map[model.ActionKind]func(*testing.T) *target{model.ForceTerminate: forceTarget, model.AbortPartition: abortTarget, model.Commit: commitTarget}[k.kind]
				checkExecute(t, tg(t), k.f)
			})
		})
	}
	wg.Wait()
}

// checkExecute executes tg's action under fs and checks the result against
// what happened; with a single fault on the abort request itself it also
// checks the result that fault calls for.
func checkExecute(t *testing.T, tg *target, fs ...fault) {
	// Connections and coordinators known before the faults, as in the UI,
	// where the dialog opens on data a refresh just read.
	for range 5 {
		if _, err := refreshCtx(tg.a, nil); err == nil {
			break
		}
	}
	before := tg.inj.count(tg.send)
	tg.inj.set(fs...)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	j := &kafkatest.Journal{}
	r := tg.a.Execute(ctx, tg.act, j)
	took := time.Since(start)
	var slept time.Duration
	retried := false // a "nothing happened" answer InitProducerId retries
	for _, f := range fs {
		slept = max(slept, f.sleep)
		retried = retried || (f.keys[0] == kmsg.InitProducerID || f.keys[0] == kmsg.EndTxn) && f.code != nil && containsErr(retriedCodes, f.code) ||
			f.keys[0] == kmsg.WriteTxnMarkers && f.code != nil && containsErr(leaderMovedCodes, f.code)
	}
	time.Sleep(slept) // let a request slept past the timeout reach the cluster
	happened := tg.done(t)
	// Counted after the re-read: a request the client gave up on may reach
	// the cluster late.
	sent := tg.inj.count(tg.send) - before
	t.Logf("%s: sent %d, took %s, happened %v", r.Summary(), sent, took.Round(time.Millisecond), happened)

	onlySend := len(fs) == 1 && fs[0].keys[0] == tg.send
	switch {
	case r.Refused:
		if r.Sent || sent != 0 || happened {
			t.Fatalf("refused, yet %d requests went out (sent=%v, happened=%v): %+v", sent, r.Sent, happened, r)
		}
		if onlySend {
			t.Fatalf("a fault on %s itself cannot refuse the re-check: %+v", tg.send.Name(), r)
		}
	case r.Unknown:
		// Only answers that said nothing happened may come before the one
		// whose outcome is unknown; nothing is sent after it.
		if !r.Sent || sent < 1 || sent > 1 && !retried || !strings.Contains(r.Summary(), "unknown outcome, re-check") {
			t.Fatalf("unknown outcome after %d requests (retried silently?): %+v", sent, r)
		}
	case r.OK():
		if sent != 1 || !happened {
			t.Fatalf("OK after %d requests, happened=%v", sent, happened)
		}
	case !r.Sent:
		if sent != 0 || happened {
			t.Fatalf("not sent, yet %d requests reached the cluster (happened=%v): %+v", sent, happened, r)
		}
	default: // the broker answered an error
		if happened || r.ErrorCode == "" {
			t.Fatalf("answered %q, happened=%v: %+v", r.ErrorCode, happened, r)
		}
		if retried && (sent < 1 || sent > 10 || took > 3*execTimeout+time.Second) {
			t.Fatalf("%s answered %d times in %s: retries must be bounded by count and timeout", r.ErrorCode, sent, took)
		}
		if !retried && sent != 1 {
			t.Fatalf("%s sent %d times", r.ErrorCode, sent)
		}
	}

	if !onlySend || fs[0].nodes != nil {
		return
	}
	// What each fault on the abort request itself must give.
	switch f := fs[0]; {
	case f.drop, f.empty, f.sleep > execTimeout, f.code != nil && containsErr(maybeApplied, f.code):
		if !r.Unknown {
			t.Fatalf("the request may have taken effect, yet the result is %+v", r)
		}
	case f.sleep > 0:
		if !r.OK() {
			t.Fatalf("slow but within the timeout: %+v", r)
		}
	case f.code != nil:
		if r.ErrorCode != f.code.Message || r.Unknown {
			t.Fatalf("answered %s, result %+v", f.code.Message, r)
		}
		if containsErr(retriedCodes, f.code) && tg.send != kmsg.WriteTxnMarkers && tg.inj.count(tg.send) < 2 {
			t.Fatalf("%s was not retried", f.code.Message)
		}
	}
}

// TestExecuteUnderRandomFaults: a few aborts, each under up to three random
// faults on any request (the re-check's and the abort's), on any broker:
// the same rules as one fault at a time.
func TestExecuteUnderRandomFaults(t *testing.T) {
	t.Parallel()
	seed := faultSeed(t)
	t.Logf("seed %d (TXNSCOPE_FAULT_SEED=%d replays it)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	apis := append(slices.Clone(refreshAPIs), kmsg.InitProducerID, kmsg.WriteTxnMarkers)
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i := range 10 {
		kind := model.ForceTerminate
		if i%2 == 1 {
			kind = model.AbortPartition
		}
		var fs []fault
		for range 1 + rng.IntN(3) {
			all := faultsOn(apis[rng.IntN(len(apis))], execTimeout)
			f := all[rng.IntN(len(all))]
			if f.nodes == nil && rng.IntN(2) == 0 {
				f.nodes = []int32{int32(rng.IntN(3))}
			}
			fs = append(fs, f)
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			t.Run(fmt.Sprintf("%d %s %v", i, kind, names(fs)), func(t *testing.T) {
				tg := forceTarget
				if kind == model.AbortPartition {
					tg = abortTarget
				}
				checkExecute(t, tg(t), fs...)
			})
		})
	}
	wg.Wait()
}

func containsErr(es []*kerr.Error, e *kerr.Error) bool {
	for _, x := range es {
		if x == e {
			return true
		}
	}
	return false
}
