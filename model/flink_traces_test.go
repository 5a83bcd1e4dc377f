package model

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// flinkTrace is one run of real Flink on Kafka 4.4 (testdata/flink, made
// with scripts/flinkjob; docs/flink-observed.md says how): what happened,
// and every change of the prefix's ids between polls about a second apart.
type flinkTrace struct {
	Scenario, Flink, Description string
	Events                       []struct {
		TMs  int64  `json:"t_ms"`
		What string `json:"what"`
	}
	Snapshots []struct {
		TMs  int64                        `json:"t_ms"`
		Set  map[string][]json.RawMessage `json:"set"`
		Gone []string                     `json:"gone"`
	}
}

// tracePoll is what the jobs view made of one poll of a trace.
type tracePoll struct {
	at                     time.Duration
	tasks, open, lingering int
	pooling, shared        bool
	fences, timeouts       int
	problems               []ProblemKind
	newestCommittedByUnit  map[string]int64
}

var timeoutFlag = regexp.MustCompile(`--transaction-timeout-ms (\d+)`)

// replayTrace feeds a trace's polls to a History as the TUI does and
// returns what the jobs view showed at each.
func replayTrace(t *testing.T, name string) (flinkTrace, []tracePoll) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "flink", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var tr flinkTrace
	if err := json.Unmarshal(b, &tr); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	timeoutMs := int32(60000)
	for _, e := range tr.Events {
		if m := timeoutFlag.FindStringSubmatch(e.What); m != nil {
			v, _ := strconv.Atoi(m[1])
			timeoutMs = int32(v)
		}
	}
	base := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	rows := map[string]Txn{}
	h := NewHistory(10000)
	var prev *Snapshot
	var out []tracePoll
	for _, sn := range tr.Snapshots {
		for id, v := range sn.Set {
			var st State
			var pid int64
			var epoch int16
			var start *int64
			var parts []int32
			for i, dst := range []any{&st, &pid, &epoch, &start, &parts} {
				if err := json.Unmarshal(v[i], dst); err != nil {
					t.Fatalf("%s %s: field %d: %v", name, id, i, err)
				}
			}
			tx := Txn{ID: id, State: st, ProducerID: 1000 + pid, ProducerEpoch: epoch, TimeoutMs: timeoutMs, Described: true}
			if start != nil {
				tx.SetStart(base.Add(time.Duration(*start) * time.Millisecond))
			}
			for _, p := range parts {
				tx.Partitions = append(tx.Partitions, TopicPartition{Topic: "out", Partition: p})
			}
			rows[id] = tx
		}
		for _, id := range sn.Gone {
			delete(rows, id)
		}
		at := base.Add(time.Duration(sn.TMs) * time.Millisecond)
		s := &Snapshot{TakenAt: at, EpochBumpsOnEnd: true}
		for _, tx := range rows {
			s.Txns = append(s.Txns, tx)
		}
		s.Sort()
		if prev == nil {
			h.Baseline(s)
		} else {
			h.Add(EventsBetween(prev, s))
		}
		prev = s
		p := tracePoll{at: at.Sub(base), newestCommittedByUnit: map[string]int64{}}
		for _, j := range Jobs(s, h, at) {
			if j.ID.Family != FlinkSink {
				continue
			}
			p.tasks, p.open, p.lingering = j.Tasks, len(j.Open), len(j.Lingering)
			p.pooling, p.shared, p.fences, p.timeouts = j.Pooling, j.Shared, j.Fences5m, j.Timeouts5m
			for _, pr := range j.Problems(s, Query{}, at) {
				p.problems = append(p.problems, pr.Kind)
			}
			for _, u := range j.Units {
				p.newestCommittedByUnit[u.Name] = u.NewestCommitted
			}
		}
		out = append(out, p)
	}
	return tr, out
}

func (p tracePoll) String() string {
	return fmt.Sprintf("%5.1fs tasks %d open %d linger %d pool %v shared %v fences %d timeouts %d %v",
		p.at.Seconds(), p.tasks, p.open, p.lingering, p.pooling, p.shared, p.fences, p.timeouts, p.problems)
}

// TestReplayFlinkTraces replays what real Flink 1.20.5 and 2.2.1 did on
// Kafka 4.4 (issue 20's scenarios) and checks what the jobs view made of
// every poll; -v prints them all.
func TestReplayFlinkTraces(t *testing.T) {
	everyPoll := func(what string, ok func(tracePoll) bool) func(*testing.T, []tracePoll) {
		return func(t *testing.T, ps []tracePoll) {
			for _, p := range ps {
				if !ok(p) {
					t.Errorf("%s, but at %s", what, p)
				}
			}
		}
	}
	last := func(what string, ok func(tracePoll) bool) func(*testing.T, []tracePoll) {
		return func(t *testing.T, ps []tracePoll) {
			if p := ps[len(ps)-1]; !ok(p) {
				t.Errorf("%s, but the last poll: %s", what, p)
			}
		}
	}
	some := func(what string, ok func(tracePoll) bool) func(*testing.T, []tracePoll) {
		return func(t *testing.T, ps []tracePoll) {
			if !slices.ContainsFunc(ps, ok) {
				t.Errorf("%s at no poll", what)
			}
		}
	}
	noLinger := everyPoll("nothing lingers", func(p tracePoll) bool { return p.lingering == 0 && !slices.Contains(p.problems, ProblemLingering) })
	atMost := func(n int) func(*testing.T, []tracePoll) {
		return everyPoll(fmt.Sprintf("at most %d tasks", n), func(p tracePoll) bool { return p.tasks <= n })
	}
	noFence := everyPoll("no fence", func(p tracePoll) bool { return p.fences == 0 })
	noShared := everyPoll("no shared prefix", func(p tracePoll) bool { return !p.shared })
	noLoop := everyPoll("no crash loop", func(p tracePoll) bool { return !slices.Contains(p.problems, ProblemCrashLoop) })
	checks := map[string][]func(*testing.T, []tracePoll){
		"healthy": {noLinger, atMost(3), noFence, noShared, everyPoll("no problem", func(p tracePoll) bool { return len(p.problems) == 0 })},
		"pooling": {noLinger, atMost(3), noFence, noShared, some("pooling", func(p tracePoll) bool { return p.pooling }), everyPoll("no problem", func(p tracePoll) bool { return len(p.problems) == 0 })},
		"restore": {noLinger, atMost(3), noShared, noLoop},
		"fresh":   {noLinger, atMost(3), noShared, noLoop},
		"kill9":   {noLinger, noFence, noLoop, last("the timeouts counted apart", func(p tracePoll) bool { return p.timeouts == 3 && p.fences == 0 })},
		"scale32": {noLinger, noLoop, last("2 tasks", func(p tracePoll) bool { return p.tasks == 2 }), everyPoll("no subtask behind", func(p tracePoll) bool { return !slices.Contains(p.problems, ProblemBehind) })},
		// Subtask 2 gets no split of the restored source: its ids stay
		// Empty, two of them, like probe ids; TASKS shows the 2 that write.
		"scale23":   {noLinger, noLoop, atMost(3), last("2 tasks writing", func(p tracePoll) bool { return p.tasks == 2 })},
		"staggered": {noLinger, noLoop, last("a shared prefix", func(p tracePoll) bool { return p.shared && slices.Contains(p.problems, ProblemPrefixShared) })},
		// Two POOLING jobs on one prefix: nothing commits, silently for
		// Flink; both slots of each subtask stay open, their transactions
		// ending uncommitted.
		"staggeredpool": {noLinger, atMost(3), noLoop, some("not committing", func(p tracePoll) bool { return slices.Contains(p.problems, ProblemNotCommitting) }),
			everyPoll("a shared prefix from 70 s until the kill at 123 s", func(p tracePoll) bool {
				return p.at < 70*time.Second || p.at > 123*time.Second || (p.shared && slices.Contains(p.problems, ProblemPrefixShared))
			})},
		"crashloop": {noLinger, noFence, last("timeouts, not fences", func(p tracePoll) bool { return p.timeouts >= 9 }),
			some("a crash loop within a minute", func(p tracePoll) bool { return p.at < time.Minute && slices.Contains(p.problems, ProblemCrashLoop) })},
		"shorttimeout": {noLinger, noLoop},
	}
	names, _ := filepath.Glob(filepath.Join("testdata", "flink", "*.json"))
	sort.Strings(names)
	checked := 0
	for _, n := range names {
		name := strings.TrimSuffix(filepath.Base(n), ".json")
		t.Run(name, func(t *testing.T) {
			_, polls := replayTrace(t, name)
			var lines []string
			for _, p := range polls {
				lines = append(lines, p.String())
			}
			t.Logf("%s:\n%s", name, strings.Join(lines, "\n"))
			scenario, _, _ := strings.Cut(name, "-")
			for _, c := range checks[scenario] {
				c(t, polls)
				checked++
			}
		})
	}
	if checked == 0 {
		t.Fatal("no trace checked")
	}
}

// With no --checkpoint-interval, the commit cadence (3s) shows the 5s
// timeout is below twice the interval (Flink 1.20's run: 2.2's committed
// too few checkpoints before the kill for a cadence).
func TestReplayShortTimeoutFlagged(t *testing.T) {
	_, polls := replayTrace(t, "shorttimeout-1.20")
	if !slices.ContainsFunc(polls, func(p tracePoll) bool { return slices.Contains(p.problems, ProblemTimeoutShort) }) {
		t.Error("timeout_below_interval at no poll")
	}
}
