package integration

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/txnscope/txnscope/internal/audit"
	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// TestCluster3ForceTerminateWhileCoordinatorMoves: open transactions whose ids one node
// coordinates, a force-terminate of each planned from a snapshot (as the dialog plans it), then
// that node stopped (SIGTERM: it resigns as coordinator, another node loads the log partitions)
// and the force-terminates sent at once or a little later, while some of the producers commit
// their transaction at the same moment and, having committed, begin the next one. Each result
// must be refused saying why, an unknown outcome, a failure the broker answered that did nothing,
// or OK with the transaction it was planned on aborted; never OK with that transaction committed,
// nor with the producer's next transaction hit. The truth is read back by read_committed consumers.
func TestCluster3ForceTerminateWhileCoordinatorMoves(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := newC3(ctx, t)

	// The targets: ids one node coordinates, each writing to a partition of its own, under both
	// transaction versions. Each is sent its force-terminate execAfter the stop began; its
	// producer tries to commit commitAfter it (negative: only once the force-terminate is over).
	type target struct {
		id                     string
		tp                     model.TopicPartition
		cl                     *kgo.Client
		v1                     bool
		execAfter, commitAfter time.Duration

		act       model.Action
		res       model.Result
		audit     string
		committed error // the producer's commit of the planned transaction
		tried     bool
		next      bool  // it began and wrote its next transaction
		nextEnd   error // the producer's commit of its next transaction
	}
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	plans := []struct {
		execAfter, commitAfter time.Duration
	}{
		{0, -1}, {0, 0}, {0, ms(200)}, {ms(100), -1}, {ms(200), ms(200)}, {ms(300), -1}, {ms(400), ms(300)},
		{ms(600), -1}, {ms(1000), ms(500)}, {ms(1500), -1}, {ms(2500), -1}, {ms(2500), ms(2500)},
	}
	topic := c.topic(ctx, int32(len(plans)))
	prefix := name(t, "txn")
	var candidates []string
	for i := range 80 {
		candidates = append(candidates, fmt.Sprintf("%s-%d", prefix, i))
	}
	byNode := map[int32][]string{}
	for id, r := range c.adm.FindTxnCoordinators(ctx, candidates...) {
		if r.Err != nil {
			t.Fatalf("FindCoordinator(%s): %v", id, r.Err)
		}
		byNode[r.NodeID] = append(byNode[r.NodeID], id)
	}
	node := int32(-1)
	for n, ids := range byNode {
		if len(ids) >= len(plans) && (node < 0 || n < node) {
			node = n
		}
	}
	if node < 0 {
		t.Fatalf("no node coordinates %d of 80 ids: %v", len(plans), byNode)
	}
	ids := byNode[node]
	slices.Sort(ids)
	var targets []*target
	for i, p := range plans {
		tg := &target{id: ids[i], tp: model.TopicPartition{Topic: topic, Partition: int32(i)}, v1: i%2 == 1,
			execAfter: p.execAfter, commitAfter: p.commitAfter}
		var opts []kgo.Opt
		if tg.v1 {
			opts = append(opts, kgo.MaxVersions(kversion.V3_9_0()))
		}
		tg.cl = producerOn(t, c.bootstrap, tg.id, 5*time.Minute, opts...)
		openTxn(ctx, t, tg.cl, tg.tp, 1, "planned-"+tg.id)
		targets = append(targets, tg)
	}

	// The dialogs, planned from one snapshot.
	admin := c.scopeClient(false, 10*time.Second)
	snap, err := admin.Refresh(ctx, nil)
	if err != nil {
		t.Fatalf("Refresh: %v", err)
	}
	for _, tg := range targets {
		tx := txnOf(t, snap, tg.id)
		if tx.State != model.Ongoing || tx.Coordinator != node {
			t.Fatalf("%s: %+v, want Ongoing at node %d", tg.id, tx, node)
		}
		tg.act = plan(t, tx)
		tg.audit = filepath.Join(t.TempDir(), "audit.log")
	}
	t.Logf("%d transactions coordinated by node %d; stopping it", len(targets), node)

	stopped := make(chan struct{})
	stopStart := time.Now()
	c.mark("kafka-broker %d stop", node)
	go func() {
		defer close(stopped)
		took, out, err := cluster3Script(ctx, node, "stop")
		c.mark("kafka-broker %d stop done (%s): %s %v", node, took.Round(100*time.Millisecond), strings.TrimSpace(out), err)
	}()
	var wg sync.WaitGroup
	for _, tg := range targets {
		wg.Go(func() {
			time.Sleep(time.Until(stopStart.Add(tg.execAfter)))
			tg.res = execAudited(ctx, admin, tg.act, tg.audit)
			c.mark("%s: force-terminate (sent %s after the stop began) returned: %s", tg.id, tg.execAfter, tg.res.Summary())
		})
		if tg.commitAfter >= 0 {
			wg.Go(func() {
				time.Sleep(time.Until(stopStart.Add(tg.commitAfter)))
				commitThenNext(ctx, tg.cl, tg.id, tg.tp, &tg.committed, &tg.next)
				tg.tried = true
				c.mark("%s: producer's commit returned %v (next begun: %v)", tg.id, tg.committed, tg.next)
			})
		}
	}
	wg.Wait()
	// The producers that waited commit now, and those with a next transaction end it.
	for _, tg := range targets {
		if !tg.tried {
			commitThenNext(ctx, tg.cl, tg.id, tg.tp, &tg.committed, &tg.next)
			tg.tried = true
			c.mark("%s: producer's commit (after the force-terminate) returned %v", tg.id, tg.committed)
		}
		if tg.next {
			ectx, cancel := context.WithTimeout(ctx, 60*time.Second)
			tg.nextEnd = tg.cl.EndTransaction(ectx, kgo.TryCommit)
			cancel()
			c.mark("%s: producer's commit of its next transaction returned %v", tg.id, tg.nextEnd)
		}
	}
	<-stopped
	c.broker(ctx, node, "start")
	c.whole(ctx, "after the restart", topic)
	c.logMarks()

	// The truth: what read_committed readers see on each partition.
	for _, tg := range targets {
		checkAudit(t, tg.audit, tg.res)
		seen := c.committedValues(ctx, tg.tp)
		planned := slices.Contains(seen, "planned-"+tg.id+"-0")
		next := slices.Contains(seen, "next-"+tg.id+"-0")
		r := tg.res
		t.Logf("%s (v1 %v, sent %s after the stop began, commit at %s): %s; producer: commit %v, next %v → %v; read_committed: planned %v, next %v",
			tg.id, tg.v1, tg.execAfter, tg.commitAfter, r.Summary(), tg.committed, tg.next, tg.nextEnd, planned, next)
		switch {
		case r.OK() && planned:
			t.Errorf("%s: force-terminate OK (%s), but the transaction it was planned on committed", tg.id, r.Summary())
		case r.OK() && tg.next && !next:
			t.Errorf("%s: force-terminate OK (%s), and the producer's next transaction was lost (%v)", tg.id, r.Summary(), tg.nextEnd)
		case r.OK() && tg.committed == nil:
			t.Errorf("%s: force-terminate OK (%s), but the producer's commit of that transaction succeeded", tg.id, r.Summary())
		case r.Refused && r.Err == "":
			t.Errorf("%s: refused without saying why: %+v", tg.id, r)
		case r.Refused && r.Sent:
			t.Errorf("%s: refused after sending: %+v", tg.id, r)
		}
		if tg.committed == nil && !planned {
			t.Errorf("%s: the producer's commit succeeded but read_committed does not see its record", tg.id)
		}
		if tg.next && tg.nextEnd == nil && !next {
			t.Errorf("%s: the next transaction committed but read_committed does not see it", tg.id)
		}
		// A request the broker answered with an error, reported as a failure (not an unknown
		// outcome), must have done nothing.
		failed := r.Sent && !r.OK() && !r.Unknown
		var took string
		switch {
		case failed && !planned && tg.committed != nil:
			// Nothing but txnscope's request ended it: the producer's commit failed.
			took = fmt.Sprintf("yet it aborted the transaction it was planned on (the producer's commit then failed: %v)", tg.committed)
		case failed && tg.next && isFenced(tg.nextEnd):
			took = fmt.Sprintf("yet it aborted the producer's NEXT transaction, begun after the one planned on committed "+
				"(the producer's commit of it: %v)", tg.nextEnd)
		case !r.OK() && !r.Unknown && !r.Sent && tg.next && isFenced(tg.nextEnd):
			t.Errorf("%s: nothing sent (%s), yet the producer's next transaction was fenced: %v", tg.id, r.Summary(), tg.nextEnd)
		}
		if took == "" {
			continue
		}
		// A NOT_COORDINATOR from a coordinator resigning as it wrote the
		// fence is judged like CONCURRENT_TRANSACTIONS: never a failure
		// that did nothing.
		t.Errorf("%s: the force-terminate said %q, %s", tg.id, r.Summary(), took)
	}
}

// execAudited is scope.execute for a goroutine: the result, the audit log at path.
func execAudited(ctx context.Context, c *kafkaadmin.Client, a model.Action, path string) model.Result {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	log := audit.New(path)
	if err := log.Open(); err != nil {
		return model.Result{Action: a, Refused: true, Err: "audit log: " + err.Error()}
	}
	defer log.Close()
	return c.Execute(ctx, a, log.Begin("integration", a))
}

// commitThenNext commits the producer's transaction and, when that succeeds, begins the next one
// and writes to it: a producer that goes on while an operator's force-terminate is in flight.
func commitThenNext(ctx context.Context, cl *kgo.Client, id string, tp model.TopicPartition, committed *error, next *bool) {
	ectx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	*committed = cl.EndTransaction(ectx, kgo.TryCommit)
	if *committed != nil {
		return
	}
	if err := cl.BeginTransaction(); err != nil {
		return
	}
	err := cl.ProduceSync(ectx, &kgo.Record{Topic: tp.Topic, Partition: tp.Partition, Value: []byte("next-" + id + "-0")}).FirstErr()
	*next = err == nil
	if err != nil {
		_ = cl.EndTransaction(ectx, kgo.TryAbort)
	}
}

// committedValues reads tp with read_committed up to a record written after everything else (a
// plain, non-transactional one), and returns the values read before it. A partition whose LSO
// stays below that record fails the test, with its offsets and producers.
func (c *c3) committedValues(ctx context.Context, tp model.TopicPartition) []string {
	t := c.t
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.bootstrap...), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{tp.Topic: {tp.Partition: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	end := "end-" + name(t, "end")
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: tp.Topic, Partition: tp.Partition, Value: []byte(end)}).FirstErr(); err != nil {
		t.Fatalf("the end record on %s-%d: %v", tp.Topic, tp.Partition, err)
	}
	rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	var got []string
	for {
		fs := cl.PollFetches(rctx)
		if rctx.Err() != nil {
			break
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Logf("fetch %s-%d: %v", tp.Topic, tp.Partition, err) })
		done := false
		fs.EachRecord(func(r *kgo.Record) {
			if string(r.Value) == end {
				done = true
			} else if !done {
				got = append(got, string(r.Value))
			}
		})
		if done {
			return got
		}
	}
	hwm, lso := offsetsOf(ctx, t, c.adm, tp)
	var prods []string
	if ps, err := c.adm.DescribeProducers(ctx, kadm.TopicsSet{tp.Topic: {tp.Partition: {}}}); err != nil {
		prods = append(prods, err.Error())
	} else {
		ps.EachProducer(func(p kadm.DescribedProducer) {
			prods = append(prods, fmt.Sprintf("%+v", p))
		})
	}
	c.keep = true
	t.Errorf("%s-%d: read_committed did not reach the end record in 20 s (read %v): HWM %d, LSO %d, producers %v",
		tp.Topic, tp.Partition, got, hwm, lso, prods)
	return got
}
