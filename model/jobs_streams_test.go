package model

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// streamsCase is a Streams app "billing" of two instances (a, b) of two
// threads each, and maybe a third (c) started later; every thread committed
// every second for a minute before what the case says.
type streamsCase struct {
	name string
	// events after the minute of commits, at now minus the duration.
	events []streamsEv
	// open are the threads with a transaction open, begun that long ago.
	open map[string]time.Duration
	want []ProblemKind
	// what is in the first problem's What.
	what string
}

type streamsEv struct {
	thread string
	ago    time.Duration
	kind   EventKind
}

const (
	procA = "0b1e5d2a-1c1f-4b7e-9a51-6c2d1b6f0a11"
	procB = "7f3c9e44-2d5a-4c8b-8e0f-3b9a7d1c5e22"
	procC = "c4a8f1b3-9e2d-4f6a-b7c5-1d0e3f2a4b33"
)

var streamsThreads = []string{procA + "-1", procA + "-2", procB + "-1", procB + "-2"}

// every makes a thread's event every gap from ago down to until (exclusive).
func every(thread string, kind EventKind, from, until, gap time.Duration) []streamsEv {
	var out []streamsEv
	for d := from; d > until; d -= gap {
		out = append(out, streamsEv{thread, d, kind})
	}
	return out
}

func threadsOf(procs ...string) []string {
	var out []string
	for _, p := range procs {
		out = append(out, p+"-1", p+"-2")
	}
	return out
}

// allOf is f's events for every thread of procs.
func allOf(f func(thread string) []streamsEv, procs ...string) []streamsEv {
	var out []streamsEv
	for _, th := range threadsOf(procs...) {
		out = append(out, f(th)...)
	}
	return out
}

func (c streamsCase) run(t *testing.T) []Problem {
	t.Helper()
	now := pinT0
	start := now.Add(-2 * time.Minute)
	h := NewHistory(1000)
	var evs []Event
	for _, th := range streamsThreads {
		for i := range 60 {
			evs = append(evs, Event{At: start.Add(time.Duration(i) * time.Second), ID: "billing-" + th, Kind: Committed})
		}
	}
	for _, e := range c.events {
		evs = append(evs, Event{At: now.Add(-e.ago), ID: "billing-" + e.thread, Kind: e.kind})
	}
	slices.SortStableFunc(evs, func(a, b Event) int { return a.At.Compare(b.At) })
	h.Add(evs)
	s := &Snapshot{TakenAt: now}
	seen := map[string]bool{}
	for _, e := range evs {
		th := strings.TrimPrefix(e.ID, "billing-")
		if seen[th] {
			continue
		}
		seen[th] = true
		tx := Txn{ID: e.ID, State: CompleteCommit, ProducerID: int64(len(seen)), TimeoutMs: 10000, Described: true}
		if ago, ok := c.open[th]; ok {
			tx.State, tx.StartUnixMs = Ongoing, now.Add(-ago).UnixMilli()
		}
		s.Txns = append(s.Txns, tx)
	}
	s.Sort()
	j := jobNamed(t, Jobs(s, h, now), "billing")
	if j.ID.Family != StreamsApp {
		t.Fatalf("%s: family %s", j.ID.Name, j.ID.Family)
	}
	return j.Problems(s, Query{}, now)
}

func TestStreamsStallAndGoneInstance(t *testing.T) {
	commitsTo := func(until time.Duration) func(string) []streamsEv {
		return func(th string) []streamsEv { return every(th, Committed, 60*time.Second, until, time.Second) }
	}
	endsTo := func(until time.Duration) func(string) []streamsEv {
		return func(th string) []streamsEv { return every(th, Ended, 60*time.Second, until, 2*time.Second) }
	}
	lost := func(ago time.Duration, kind EventKind) func(string) []streamsEv {
		return func(th string) []streamsEv { return []streamsEv{{th, ago, kind}} }
	}
	openSince := func(ago time.Duration, procs ...string) map[string]time.Duration {
		m := map[string]time.Duration{}
		for _, th := range threadsOf(procs...) {
			m[th] = ago
		}
		return m
	}
	cat := func(parts ...[]streamsEv) []streamsEv { return slices.Concat(parts...) }
	cases := []streamsCase{
		{name: "healthy", events: allOf(commitsTo(0), procA, procB)},
		{name: "healthy, one transaction open each", events: allOf(commitsTo(0), procA, procB), open: openSince(300*time.Millisecond, procA, procB)},
		// No input: no transaction begins, none is lost.
		{name: "input stopped a minute ago", events: allOf(commitsTo(60*time.Second), procA, procB)},
		{name: "all hang, open for less than the timeout", events: allOf(commitsTo(9*time.Second), procA, procB), open: openSince(9*time.Second, procA, procB)},
		{name: "all hang, open past the timeout", events: allOf(commitsTo(11*time.Second), procA, procB), open: openSince(11*time.Second, procA, procB),
			want: []ProblemKind{ProblemStalled}, what: "stalled: no commit for 11s (it commits every 1s), 4 open"},
		// The case: the threads fenced, nothing open for 20 s.
		{name: "all lost, nothing open since", events: cat(allOf(commitsTo(30*time.Second), procA, procB), allOf(lost(20*time.Second, TimedOut), procA, procB)),
			want: []ProblemKind{ProblemStalled}, what: "stalled: no commit for 31s (it commits every 1s), nothing open"},
		{name: "all fenced, then committing again", events: cat(allOf(lost(20*time.Second, Fenced), procA, procB), allOf(commitsTo(0), procA, procB))},
		// Polls every 2 s see a thread's commit and its next transaction as
		// one Ended: it works.
		{name: "polls see ended, not committed", events: cat(allOf(commitsTo(40*time.Second), procA, procB), allOf(endsTo(0), procA, procB))},
		{name: "a killed, its transactions open", events: cat(allOf(commitsTo(11*time.Second), procA), allOf(commitsTo(0), procB)),
			open: openSince(11*time.Second, procA), want: []ProblemKind{ProblemInstanceGone}, what: "instance 0b1e5d2a… gone: its 2 threads quiet for 11s, the others commit"},
		// Both hang, a a second and a half before b: a is not gone while b works, since b does not.
		{name: "both hang, one a little earlier", events: cat(allOf(commitsTo(11*time.Second), procA), allOf(commitsTo(9500*time.Millisecond), procB)),
			open: openSince(11*time.Second, procA)},
		{name: "a killed, its transactions timed out", events: cat(allOf(commitsTo(25*time.Second), procA), allOf(lost(14*time.Second, TimedOut), procA), allOf(commitsTo(0), procB)),
			want: []ProblemKind{ProblemInstanceGone}, what: "instance 0b1e5d2a… gone: its 2 threads quiet for 26s"},
		{name: "a killed, b seen by polls", events: cat(allOf(commitsTo(25*time.Second), procA), allOf(lost(14*time.Second, TimedOut), procA), allOf(commitsTo(40*time.Second), procB), allOf(endsTo(0), procB)),
			want: []ProblemKind{ProblemInstanceGone}},
		{name: "a killed and back on its state directory", events: cat(allOf(commitsTo(25*time.Second), procA), allOf(lost(14*time.Second, TimedOut), procA),
			every(procA+"-1", Committed, 3*time.Second, 0, time.Second), every(procA+"-2", Committed, 3*time.Second, 0, time.Second), allOf(commitsTo(0), procB))},
		{name: "a killed, replaced on a fresh state directory", events: cat(allOf(commitsTo(25*time.Second), procA), allOf(lost(14*time.Second, TimedOut), procA),
			allOf(commitsTo(0), procB), allOf(func(th string) []streamsEv { return every(th, Committed, 10*time.Second, 0, time.Second) }, procC))},
		// Stopped cleanly: its last transactions committed, nothing lost.
		{name: "a stopped cleanly", events: cat(allOf(commitsTo(40*time.Second), procA), allOf(commitsTo(0), procB))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ps := c.run(t)
			var kinds []ProblemKind
			for _, p := range ps {
				kinds = append(kinds, p.Kind)
			}
			if !slices.Equal(kinds, c.want) {
				t.Fatalf("problems %v, want %v: %+v", kinds, c.want, ps)
			}
			if c.what != "" && !strings.Contains(ps[0].What, c.what) {
				t.Errorf("what %q, want %q in it", ps[0].What, c.what)
			}
			for _, p := range ps {
				if strings.Contains(p.WayOut, "force-terminate") || !strings.Contains(p.WayOut, "Do not end") {
					t.Errorf("way out %q: a Streams thread may only hang, its transactions are not txnscope's to end", p.WayOut)
				}
				if p.Kind == ProblemInstanceGone && (!strings.Contains(p.Why, procA) || !strings.Contains(p.Why, "billing-"+procA+"-1")) {
					t.Errorf("why %q: want the process and its ids named", p.Why)
				}
			}
		})
	}
}

// TestStreamsStuck: a reader of a Streams app's output waits at each of
// its transactions, for up to a commit interval: stuck only behind one
// older than the app's commit gap (its timeout while no cadence is known).
func TestStreamsStuck(t *testing.T) {
	now := pinT0
	pin := func(group string, age time.Duration) JobPin {
		return JobPin{TopicPartition: tpOf("out", int32(age/time.Second)), ID: "billing-x-1", Groups: []string{group}, StartMs: now.Add(-age).UnixMilli()}
	}
	for _, c := range []struct {
		name    string
		family  Family
		cadence time.Duration
		pins    []JobPin
		want    []string
	}{
		{"inside the commit interval", StreamsApp, time.Second, []JobPin{pin("reader", 800*time.Millisecond)}, nil},
		{"within 3 cadences", StreamsApp, time.Second, []JobPin{pin("reader", 2900*time.Millisecond)}, nil},
		{"past 3 cadences", StreamsApp, time.Second, []JobPin{pin("reader", 4*time.Second)}, []string{"reader"}},
		{"one of two groups", StreamsApp, time.Second, []JobPin{pin("a", time.Second), pin("b", 5*time.Second)}, []string{"b"}},
		{"no cadence: within the timeout", StreamsApp, 0, []JobPin{pin("reader", 9*time.Second)}, nil},
		{"no cadence: past the timeout", StreamsApp, 0, []JobPin{pin("reader", 11*time.Second)}, []string{"reader"}},
		{"start not known", StreamsApp, time.Second, []JobPin{{TopicPartition: tpOf("out", 0), Groups: []string{"reader"}}}, []string{"reader"}},
		// Flink's readers wait a whole checkpoint interval: unchanged.
		{"flink", FlinkSink, time.Second, []JobPin{pin("reader", 800*time.Millisecond)}, []string{"reader"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := Job{ID: JobID{Family: c.family, Name: "billing"}, Cadence: c.cadence, MaxTimeoutMs: 10000, Pinned: c.pins}
			for _, p := range c.pins {
				j.StuckGroups = append(j.StuckGroups, p.Groups...)
			}
			j.streamsStuck(now)
			if !slices.Equal(j.StuckGroups, c.want) {
				t.Errorf("stuck %v, want %v", j.StuckGroups, c.want)
			}
		})
	}
}
