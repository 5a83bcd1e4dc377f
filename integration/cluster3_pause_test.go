package integration

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/txnscope/txnscope/model"
)

// TestCluster3PausedBroker: the node that coordinates an open transaction hangs (SIGSTOP: its
// sockets accept, nothing answers) for 20 s while producers commit and txnscope polls as the TUI
// does, with a 3 s timeout, once with the log followed and once by polls alone. Every poll
// returns within 2.5× the timeout (it waits the hung node out once, twice when kgo's metadata refresh picks it); while the node hangs, a poll fails or says what it
// could not read (the note of coordinators that did not list their ids, rows shown as last
// known, partitions it could not read, or the node gone from the metadata once the controller
// fenced it), never an outcome for the open transaction and never a hanging partition; after
// SIGCONT, fresh data within 30 s. The real TUI (tmux) says "degraded: broker N not answering"
// while keys answer, and connected after; the exporter's /healthz stays 200, degraded, never down.
func TestCluster3PausedBroker(t *testing.T) {
	const (
		timeout = 3 * time.Second
		pause   = 30 * time.Second
	)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := newC3(ctx, t)
	topic := c.topic(ctx, 3)
	prefix := name(t, "txn")
	openID := prefix + "-open"
	open := producerOn(t, c.bootstrap, openID, 10*time.Minute)
	openTxn(ctx, t, open, model.TopicPartition{Topic: topic, Partition: 2}, 1, "open")
	c.whole(ctx, "after the first transaction", topic)
	node, err := c.coordinator(ctx, openID)
	if err != nil {
		t.Fatalf("FindCoordinator(%s): %v", openID, err)
	}
	t.Logf("partition leaders %v; %s is coordinated by node %d, which will hang", c.leaders(ctx, topic), openID, node)

	var producers []*c3Producer
	for i, opts := range [][]kgo.Opt{nil, {kgo.MaxVersions(kversion.V3_9_0())}} {
		producers = append(producers, &c3Producer{id: fmt.Sprintf("%s-%d", prefix, i), boot: c.bootstrap, opts: opts,
			tp: model.TopicPartition{Topic: topic, Partition: int32(i)}})
	}
	ids := []string{openID}
	for _, p := range producers {
		ids = append(ids, p.id)
	}
	loggedClient, loggedSent := c.tracedClient(true, timeout)
	polledClient, polledSent := c.tracedClient(false, timeout)
	logged := newC3Poller("log followed", loggedClient, ids...)
	polled := newC3Poller("polls only", polledClient, ids...)
	sentBy := map[*c3Poller]*sentLog{logged: loggedSent, polled: polledSent}
	w := c.watch(ctx, timeout)
	waitLive(ctx, t, logged)
	polled.poll(ctx, time.Minute)

	stopPolls, stopProducers := make(chan struct{}), make(chan struct{})
	var pollers, workers sync.WaitGroup
	for _, p := range []*c3Poller{logged, polled} {
		// The context bounds nothing here: the client's own timeout must.
		pollers.Go(func() { p.loop(ctx, stopPolls, time.Second, time.Minute) })
	}
	probe := c.probe(ctx, stopPolls, prefix, openID)
	for _, p := range producers {
		workers.Go(func() { p.run(ctx, stopProducers, 200*time.Millisecond) })
	}

	time.Sleep(3 * time.Second)
	w.waitHealth(t, 2*expRefresh, 200, "ok")
	c.broker(ctx, node, "pause")
	paused := time.Now()
	// What the operator sees: the header names the hung node, and keys answer meanwhile.
	w.tui.WaitFor(pause-5*time.Second, "the header saying degraded", func(scr string) bool { return strings.Contains(scr, degradedText(node)) })
	c.mark("the TUI says %q", degradedText(node))
	c.mark("keys answer: the help shown %s after ?", w.keysAnswer().Round(10*time.Millisecond))
	time.Sleep(time.Until(paused.Add(pause)))
	c.broker(ctx, node, "resume")
	resumed := time.Now()
	w.tui.WaitFor(30*time.Second, "the header connected again", func(scr string) bool {
		return strings.Contains(scr, "● connected") && !strings.Contains(scr, "degraded") && !strings.Contains(scr, "STALE")
	})
	c.mark("the TUI says connected again")
	w.waitHealth(t, 30*time.Second, 200, "ok")

	var after [2]time.Time
	for i, p := range []*c3Poller{logged, polled} {
		at, r := waitFresh(ctx, p, resumed, ids, 30*time.Second)
		if at.IsZero() {
			t.Errorf("%s: no complete poll within 30 s of SIGCONT; the last: %s", p.name, r.what())
		} else {
			t.Logf("%s: a complete poll %s after SIGCONT", p.name, at.Sub(resumed).Round(100*time.Millisecond))
			after[i] = at
		}
	}
	close(stopProducers)
	workers.Wait()
	// The last polls see the producers' last commits.
	time.Sleep(2 * time.Second)
	close(stopPolls)
	pollers.Wait()
	for _, p := range []*c3Poller{logged, polled} {
		p.poll(ctx, time.Minute)
	}
	endTxn(ctx, t, open, false)
	c.whole(ctx, "after SIGCONT", topic)

	// /healthz: degraded while the node hung, never down.
	degradedSeen := false
	for _, h := range w.healthIn(paused, resumed) {
		if h.code != 200 {
			t.Errorf("/healthz at %s, while node %d hung: %d %q; want 200, degraded", c.since(h.at), node, h.code, h.body)
		}
		degradedSeen = degradedSeen || strings.HasPrefix(h.body, "degraded: "+strings.TrimPrefix(degradedText(node), "degraded: "))
	}
	if !degradedSeen {
		t.Errorf("/healthz never said %q while node %d hung", degradedText(node), node)
	}
	c.logMarks()
	for _, p := range producers {
		t.Logf("producer %s", p)
	}
	probe.log(c)
	for _, p := range []*c3Poller{logged, polled} {
		c.logPolls("txnscope, "+p.name, p.all())
	}

	// A poll waits out the hung node once (kafkaadmin silentbrokers.go), not once per step
	// that asks it (about 3× the timeout before). A second wait remains when kgo's own metadata
	// refresh (before a request it routes itself) picks the hung node: a slow poll names what it
	// sent the node, and Metadata is what CI saw at +3 s. Three waits is a failure.
	const bound = 5 * timeout / 2
	hung := c.env.Node(t, node)
	for _, p := range []*c3Poller{logged, polled} {
		var longest time.Duration
		silent := 0
		for _, r := range p.all() {
			took := r.end.Sub(r.at)
			longest = max(longest, took)
			if took > bound {
				t.Errorf("%s: the poll at %s took %s (timeout %s): %s; sent node %d: %s", p.name, c.since(r.at), took.Round(10*time.Millisecond),
					timeout, r.what(), node, sentBy[p].to(node, r.at, r.end))
			}
			if r.err != nil && r.at.After(paused) && r.end.Before(resumed.Add(time.Second)) &&
				!strings.Contains(r.err.Error(), fmt.Sprintf("broker %d", node)) && !strings.Contains(r.err.Error(), hung.Addr) {
				t.Errorf("%s: a poll while one node of three hung failed as a whole without naming it: %s",
					p.name, firstLine(r.err.Error()))
			}
			if len(r.hanging) > 0 {
				t.Errorf("%s, poll at %s: judged hanging: %s", p.name, c.since(r.at), strings.Join(r.hanging, " | "))
			}
			if r.err != nil {
				continue
			}
			if tx, ok := r.snap.Txn(openID); !ok {
				t.Errorf("%s, poll at %s: the open transaction %s is not in the snapshot: %s", p.name, c.since(r.at), openID, r.what())
			} else if tx.Err == "" && tx.State != model.Ongoing {
				t.Errorf("%s, poll at %s: the open transaction %s shows as %s", p.name, c.since(r.at), openID, tx.State)
			}
			// A poll wholly within the pause that read three brokers and said nothing: it
			// cannot have read the hung node's ids and partitions.
			if r.at.After(paused) && r.end.Before(resumed) && !degraded(r.snap) {
				silent++
				t.Logf("%s: the poll at %s, while node %d hung, says nothing of it: %s", p.name, c.since(r.at), node, r.what())
			}
		}
		t.Logf("%s: the longest poll took %s (timeout %s)", p.name, longest.Round(10*time.Millisecond), timeout)
		if silent > 0 {
			t.Errorf("%s: %d polls while node %d hung read three brokers and said nothing of the hung one", p.name, silent, node)
		}
		for _, e := range p.eventsOf(openID) {
			if e.Kind.Ends() || e.Kind == model.Ended {
				t.Errorf("%s: the open transaction %s: event %q at %s (%s), but its producer never ended it", p.name, openID, e.Kind,
					c.since(e.At), e.Detail)
			}
		}
		for _, pr := range producers {
			st := p.hist.Stats(pr.id)
			pr.mu.Lock()
			okCommits, aborts, unknown, reinits := pr.commits, pr.aborts, pr.uncertain, pr.reinits
			pr.mu.Unlock()
			t.Logf("%s: %s: history %d commits, %d aborts; the producer made %d commits, %d aborts, %d unknown, %d new clients",
				p.name, pr.id, st.Commits, st.Aborts, okCommits, aborts, unknown, reinits)
			if st.Commits > okCommits+unknown || st.Aborts > aborts+unknown+reinits {
				t.Errorf("%s: %s: more commits or aborts in the history than the producer made", p.name, pr.id)
			}
			// The log reads every commit, the hung node's once it is back: none lost.
			if p == logged && st.Commits < okCommits {
				t.Errorf("%s: %s: %d commits in the history, the producer made %d", p.name, pr.id, st.Commits, okCommits)
			}
		}
	}
}

// degraded reports whether a snapshot says it could not read everything: a note (coordinators
// that did not list their ids, owners unknown), rows shown as last known, partitions it could
// not read, or fewer than three brokers.
func degraded(s *model.Snapshot) bool {
	if s.Hidden != "" || s.Unread > 0 || s.Brokers != 3 {
		return true
	}
	for _, tx := range s.Txns {
		if tx.Err != "" {
			return true
		}
	}
	for _, p := range s.Partitions {
		if p.Err != "" {
			return true
		}
	}
	return false
}
