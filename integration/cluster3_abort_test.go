package integration

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/txnscope/txnscope/internal/audit"
	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// TestCluster3AbortWhileLeaderMoves: hanging transactions (a transactional batch the
// coordinator never heard of, KIP-664) pin six partitions; an abort of each is planned from a
// snapshot, as the partitions view plans it, and sent 0–800 ms after every partition's leader
// began to move to another node (the replicas reordered, then a preferred election). The old
// leader answers NOT_LEADER to markers that reach it after the move, having written nothing:
// txnscope re-reads everything, the new leader included, and sends again (kafkaadmin
// markers.go). Each abort must be OK with its partition released (LSO = HWM, read_committed
// reads only a later record), or refused, or a failure the broker answered that did nothing,
// after which a fresh plan's abort is OK; never OK with the partition still pinned, and the
// audit written ahead of every request.
func TestCluster3AbortWhileLeaderMoves(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := newC3(ctx, t)
	delays := []time.Duration{0, 20 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond, 300 * time.Millisecond, 800 * time.Millisecond}
	topic := c.topic(ctx, int32(len(delays)))
	prefix := name(t, "hang")

	// The hanging batches need the brokers' partition verification off (a dynamic cluster-wide
	// setting, as on the single no-verify broker); it is back on before anything is aborted.
	c.verification(ctx, false)
	var tps []model.TopicPartition
	for p := range delays {
		tp := model.TopicPartition{Topic: topic, Partition: int32(p)}
		if _, _, err := produceUnaddedTxnBatchTo(ctx, t, c.bootstrap[0], tp, fmt.Sprintf("%s-%d", prefix, p)); err != nil {
			t.Fatalf("the hanging batch on %s-%d: %v", tp.Topic, tp.Partition, err)
		}
		tps = append(tps, tp)
	}
	c.verification(ctx, true)

	sc := c.scope(tps...)
	snap := sc.poll(ctx)
	acts := make([]model.Action, len(tps))
	for i, tp := range tps {
		part := partOf(t, snap, tp)
		orphans := model.Orphans(part, model.ByProducerID(snap))
		if len(orphans) != 1 {
			t.Fatalf("%s-%d: orphans %+v, want the hanging producer", tp.Topic, tp.Partition, orphans)
		}
		acts[i] = abortOn(part, orphans[0])
	}
	before := c.leaders(ctx, topic)

	// Every partition's leader moves: its replicas rotated, then the new first one elected.
	moved := make(chan struct{})
	go func() {
		defer close(moved)
		c.moveLeaders(ctx, topic, before)
	}()
	results := make([]model.Result, len(tps))
	logs := make([]string, len(tps))
	for i := range logs {
		logs[i] = filepath.Join(t.TempDir(), "audit.log")
	}
	var wg sync.WaitGroup
	start := time.Now()
	for i := range tps {
		wg.Go(func() {
			time.Sleep(time.Until(start.Add(delays[i])))
			log := audit.New(logs[i])
			if err := log.Open(); err != nil {
				results[i] = model.Result{Refused: true, Err: err.Error()}
				return
			}
			defer log.Close()
			rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			results[i] = sc.c.Execute(rctx, acts[i], log.Begin("integration", acts[i]))
		})
	}
	wg.Wait()
	<-moved
	for i, r := range results {
		checkAudit(t, logs[i], r)
	}
	after := c.leaders(ctx, topic)
	t.Logf("leaders before %v, after %v", before, after)

	adm := c.adm
	for i, tp := range tps {
		r := results[i]
		hwm, lso := offsetsOf(ctx, t, adm, tp)
		t.Logf("%s-%d, sent %s after the move began (leader %d → %d): %d requests, %s; HWM %d LSO %d", tp.Topic, tp.Partition, delays[i],
			before[tp.Partition], after[tp.Partition], r.Sends, r.Summary(), hwm, lso)
		switch {
		case r.OK() && lso != hwm:
			t.Errorf("%s-%d: the abort says OK, but the partition is still pinned (HWM %d, LSO %d)", tp.Topic, tp.Partition, hwm, lso)
		case r.OK():
		case r.Unknown:
			t.Logf("%s-%d: unknown outcome (allowed: a lost answer); the retry below tells", tp.Topic, tp.Partition)
		case lso != hwm:
			// Refused, or answered without effect: a fresh plan, on a leader that stays, must work.
			snap := sc.poll(ctx)
			part := partOf(t, snap, tp)
			orphans := model.Orphans(part, model.ByProducerID(snap))
			if len(orphans) != 1 {
				t.Errorf("%s-%d: after a failed abort, orphans %+v, want the hanging producer", tp.Topic, tp.Partition, orphans)
				continue
			}
			if again := sc.execute(ctx, abortOn(part, orphans[0])); !again.OK() {
				t.Errorf("%s-%d: the abort planned again on leader %d: %s", tp.Topic, tp.Partition, part.Leader, again.Summary())
			}
		default:
			t.Errorf("%s-%d: the abort failed (%s), yet the partition was released: it did something", tp.Topic, tp.Partition, r.Summary())
		}
	}
	for _, tp := range tps {
		if hwm, lso := offsetsOf(ctx, t, adm, tp); hwm != lso {
			t.Errorf("%s-%d still pinned at the end: HWM %d, LSO %d", tp.Topic, tp.Partition, hwm, lso)
		}
		p := producerOn(t, c.bootstrap, fmt.Sprintf("%s-after-%d", prefix, tp.Partition), time.Minute)
		openTxn(ctx, t, p, tp, 1, "after")
		endTxn(ctx, t, p, true)
		if got := consume(ctx, t, c.bootstrap[0], tp, true, "after-0"); len(got) != 1 {
			t.Errorf("%s-%d: read_committed reads %v, want only after-0 (the hanging batch aborted)", tp.Topic, tp.Partition, got)
		}
	}
}

// verification sets transaction.partition.verification.enable cluster-wide.
func (c *c3) verification(ctx context.Context, on bool) {
	c.t.Helper()
	v := fmt.Sprint(on)
	resp, err := c.adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Name: "transaction.partition.verification.enable", Value: &v}})
	if err == nil {
		for _, r := range resp {
			err = r.Err
		}
	}
	if err != nil {
		c.t.Fatalf("transaction.partition.verification.enable=%s: %v", v, err)
	}
	if !on {
		c.t.Cleanup(func() { // the next tests need it on, as the brokers start
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			v := "true"
			_, _ = c.adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Name: "transaction.partition.verification.enable", Value: &v}})
		})
	}
	// Each broker applies a dynamic setting on its own: give them the moment they take.
	time.Sleep(time.Second)
}

// moveLeaders rotates every partition's replicas so that another node comes first, then elects
// the preferred leaders, and waits until each partition is led by another node than before.
func (c *c3) moveLeaders(ctx context.Context, topic string, before map[int32]int32) {
	c.t.Helper()
	var req kadm.AlterPartitionAssignmentsReq
	for p, l := range before {
		next := l%3 + 1
		req.Assign(topic, p, []int32{next, next%3 + 1, l})
	}
	resps, err := c.adm.AlterPartitionAssignments(ctx, req)
	if err == nil {
		err = resps.Error()
	}
	if err != nil {
		c.t.Errorf("AlterPartitionAssignments: %v", err)
		return
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		set := kadm.TopicsSet{}
		for p := range before {
			set.Add(topic, p)
		}
		if _, err := c.adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, set); err != nil {
			c.t.Logf("ElectLeaders: %v", err)
		}
		now := c.leaders(ctx, topic)
		same := 0
		for p, l := range before {
			if now[p] == l {
				same++
			}
		}
		if same == 0 {
			c.mark("every leader of %s moved: %v", topic, now)
			return
		}
		if time.Now().After(deadline) {
			c.t.Errorf("%d partitions of %s still on their leader after 30 s: %v", same, topic, now)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// scope is the TUI's Kafka layer on the three nodes, watching tps.
func (c *c3) scope(tps ...model.TopicPartition) *scope {
	c.t.Helper()
	cl, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: c.bootstrap, Timeout: 10 * time.Second, Watch: tps})
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(cl.Close)
	return &scope{t: c.t, c: cl, hist: model.NewHistory(1000)}
}
