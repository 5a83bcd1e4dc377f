package integration

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/txnscope/txnscope/model"
)

// TestCluster3RollingRestart: a rolling restart of the three nodes (SIGTERM, a controlled
// shutdown, then a start on the same data), one after the other, while transactional producers
// commit every 200 ms (two speaking transaction version 2, one version 1) and one transaction
// stays open throughout. txnscope polls as the TUI does, once with the coordinators' log
// followed and once by polls alone. What must hold:
//   - no partition is ever judged hanging, not even by a 5 s max transaction timeout (the
//     open transaction is quiet all along; coordinators move and load under it);
//   - no outcome without evidence: the open transaction never ends in the history, and no
//     producer's id has more commits or aborts than its producer may have made;
//   - with the log followed, no commit the producers made is missing from the history;
//   - polling recovers: within 20 s of the last node being back, a poll reads all three brokers,
//     no note, every id of the test without an error;
//   - the real TUI (tmux) says connected again, neither STALE nor degraded, and the exporter's
//     /healthz, 200 all along, says ok.
func TestCluster3RollingRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c := newC3(ctx, t)
	topic := c.topic(ctx, 4)
	t.Logf("partition leaders of %s: %v", topic, c.leaders(ctx, topic))
	prefix := name(t, "txn")

	// The open transaction, on partition 3; a warm-up commit first creates __transaction_state.
	openID := prefix + "-open"
	open := producerOn(t, c.bootstrap, openID, 10*time.Minute)
	openTxn(ctx, t, open, model.TopicPartition{Topic: topic, Partition: 3}, 1, "open")
	c.whole(ctx, "after the first transaction", topic)
	coord, err := c.coordinator(ctx, openID)
	t.Logf("%s is coordinated by broker %d (%v)", openID, coord, err)

	var producers []*c3Producer
	for i, opts := range [][]kgo.Opt{nil, nil, {kgo.MaxVersions(kversion.V3_9_0())}} {
		producers = append(producers, &c3Producer{id: fmt.Sprintf("%s-%d", prefix, i), boot: c.bootstrap, opts: opts,
			tp: model.TopicPartition{Topic: topic, Partition: int32(i)}})
	}
	ids := []string{openID}
	for _, p := range producers {
		ids = append(ids, p.id)
	}
	logged := newC3Poller("log followed", c.scopeClient(true, 10*time.Second), ids...)
	polled := newC3Poller("polls only", c.scopeClient(false, 10*time.Second), ids...)
	w := c.watch(ctx, 10*time.Second)
	// The follower must be live before anything happens, so that its history is complete.
	waitLive(ctx, t, logged)
	polled.poll(ctx, 30*time.Second)

	stopPolls, stopProducers := make(chan struct{}), make(chan struct{})
	var pollers, workers sync.WaitGroup
	for _, p := range []*c3Poller{logged, polled} {
		pollers.Go(func() { p.loop(ctx, stopPolls, time.Second, 30*time.Second) })
	}
	probe := c.probe(ctx, stopPolls, prefix, openID)
	// find-hanging, as an operator runs it during the restart, judged as the pollers are: a
	// producer quiet for 5 s whose open transaction no coordinator owns would be hanging (with 0,
	// a producer committing every 200 ms is caught between its marker and its next transaction,
	// as kafka-transactions.sh would catch it).
	bin := buildTxnscope(ctx, t)
	var hangs []sample
	pollers.Go(func() {
		for {
			select {
			case <-stopPolls:
				return
			default:
			}
			hangs = append(hangs, findHangingSample(ctx, bin, strings.Join(c.bootstrap, ","), topic, strconv.FormatInt(hangingStrict.Milliseconds(), 10)))
			time.Sleep(200 * time.Millisecond)
		}
	})
	for _, p := range producers {
		workers.Go(func() { p.run(ctx, stopProducers, 200*time.Millisecond) })
	}

	time.Sleep(3 * time.Second)
	w.waitHealth(t, 2*expRefresh, 200, "ok")
	began := time.Now()
	for _, id := range []int32{1, 2, 3} {
		c.broker(ctx, id, "stop")
		time.Sleep(2 * time.Second)
		c.broker(ctx, id, "start")
		took := c.whole(ctx, fmt.Sprintf("after node %d restarted", id), topic)
		c.mark("whole again (%s after the start returned)", took.Round(100*time.Millisecond))
	}
	back := time.Now()

	// The TUI and the exporter recover: nothing stuck on STALE or degraded.
	w.tui.WaitFor(20*time.Second, "the header connected, not STALE nor degraded", func(scr string) bool {
		return strings.Contains(scr, "● connected") && !strings.Contains(scr, "degraded") && !strings.Contains(scr, "STALE")
	})
	c.mark("the TUI says connected again")
	c.mark("/healthz ok again after %s", w.waitHealth(t, 20*time.Second, 200, "ok").Round(100*time.Millisecond))
	for _, h := range w.healthIn(began, back) {
		if h.code != 200 {
			t.Errorf("/healthz at %s, during the rolling restart: %d %q; want 200 (two nodes of three answer)", c.since(h.at), h.code, h.body)
		}
	}

	// Polling recovers.
	for _, p := range []*c3Poller{logged, polled} {
		at, r := waitFresh(ctx, p, back, ids, 20*time.Second)
		if at.IsZero() {
			t.Errorf("%s: no complete poll within 20 s of the last node being back; the last: %s", p.name, r.what())
		} else {
			t.Logf("%s: a complete poll %s after the last node was back", p.name, at.Sub(back).Round(100*time.Millisecond))
		}
	}

	// The producers stop; the last polls see their last commits.
	close(stopProducers)
	workers.Wait()
	time.Sleep(3 * time.Second)
	close(stopPolls)
	pollers.Wait()
	for _, p := range []*c3Poller{logged, polled} {
		p.poll(ctx, 30*time.Second)
	}
	endTxn(ctx, t, open, false)

	c.logMarks()
	report(t, "find-hanging", began, hangs)
	clean := 0
	for _, h := range hangs {
		switch {
		case h.bad:
			t.Errorf("find-hanging at %s reported a live transaction as hanging: %s", c.since(h.at), h.what)
		case h.ok:
			clean++
		}
	}
	if clean == 0 {
		t.Errorf("find-hanging never answered during the rolling restart (%d runs)", len(hangs))
	}
	for _, p := range producers {
		t.Logf("producer %s", p)
	}
	probe.log(c)
	for _, p := range []*c3Poller{logged, polled} {
		c.logPolls("txnscope, "+p.name, p.all())
	}

	for _, p := range []*c3Poller{logged, polled} {
		for _, r := range p.all() {
			if len(r.hanging) > 0 {
				t.Errorf("%s, poll at %s: judged hanging: %s", p.name, c.since(r.at), strings.Join(r.hanging, " | "))
			}
		}
		// The open transaction never ended, whatever moved under it.
		for _, e := range p.eventsOf(openID) {
			if e.Kind.Ends() || e.Kind == model.Ended {
				t.Errorf("%s: the open transaction %s: event %q at %s (%s), but its producer never ended it", p.name, openID, e.Kind,
					c.since(e.At), e.Detail)
			}
		}
		if st := p.hist.Stats(openID); st.Commits != 0 || st.Aborts != 0 {
			t.Errorf("%s: %s counted %d commits, %d aborts; it stayed open", p.name, openID, st.Commits, st.Aborts)
		}
		for _, pr := range producers {
			st := p.hist.Stats(pr.id)
			pr.mu.Lock()
			okCommits, aborts, unknown, reinits := pr.commits, pr.aborts, pr.uncertain, pr.reinits
			pr.mu.Unlock()
			t.Logf("%s: %s: history %d commits, %d aborts; producer %d commits, %d aborts, %d unknown, %d new clients",
				p.name, pr.id, st.Commits, st.Aborts, okCommits, aborts, unknown, reinits)
			if st.Commits > okCommits+unknown {
				t.Errorf("%s: %s: %d commits in the history, the producer made at most %d", p.name, pr.id, st.Commits, okCommits+unknown)
			}
			if st.Aborts > aborts+unknown+reinits {
				t.Errorf("%s: %s: %d aborts in the history, the producer may have made %d; events %s", p.name, pr.id, st.Aborts,
					aborts+unknown+reinits, kindsOf(p.eventsOf(pr.id)))
			}
			// The log has every commit: a poll that could not use it (the end of
			// __transaction_state refused for a moment after an election, or the reader
			// behind) listed the states but still took the log's events.
			if p == logged && st.Commits < okCommits {
				t.Errorf("%s: %s: %d commits in the history, the producer made %d", p.name, pr.id, st.Commits, okCommits)
			}
		}
	}
}

// producerOn is producer with every node as a seed.
func producerOn(t *testing.T, bootstrap []string, id string, timeout time.Duration, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	return producer(t, bootstrap[0], id, timeout, append([]kgo.Opt{kgo.SeedBrokers(bootstrap...)}, opts...)...)
}

// waitLive polls until the coordinators' log is the source.
func waitLive(ctx context.Context, t *testing.T, p *c3Poller) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := p.poll(ctx, 30*time.Second)
		if r.err == nil && r.snap.Source.Log {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the log never became the source: %s", p.name, r.what())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitFresh waits for a poll begun after from that read the whole cluster: three brokers, no
// note, each of ids there without an error. It returns when that poll ended (zero if none did
// within limit) and the last poll.
func waitFresh(ctx context.Context, p *c3Poller, from time.Time, ids []string, limit time.Duration) (time.Time, c3Poll) {
	deadline := from.Add(limit)
	var last c3Poll
	for seen := 0; ; {
		polls := p.all()
		for _, r := range polls[seen:] {
			last = r
			if r.at.Before(from) || r.err != nil || r.snap.Brokers != 3 || r.snap.Hidden != "" {
				continue
			}
			ok := true
			for _, id := range ids {
				tx, found := r.snap.Txn(id)
				ok = ok && found && tx.Err == ""
			}
			if ok {
				return r.end, r
			}
		}
		seen = len(polls)
		if time.Now().After(deadline) || ctx.Err() != nil {
			return time.Time{}, last
		}
		time.Sleep(100 * time.Millisecond)
	}
}
