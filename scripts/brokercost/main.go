// Command brokercost measures what txnscope costs the brokers while it runs:
// each broker's CPU (utime+stime of its process, /proc/PID/stat) over a
// window, and the requests txnscope sends in that window, by kind. It runs
// the TUI's refresh in process, as logstart does: -mode polls (-every after
// the last refresh ended, stretched as the TUI stretches it at many ids,
// the states listed and described), -mode log (the coordinators' log
// followed), -mode exporter (polls every 15 s, the exporter's default), or
// -mode none (no txnscope at all: the brokers' own cost, to subtract).
//
//	go run ./scripts/brokercost -bootstrap 127.0.0.1:9092,... -pids 4101,4102,4103 -mode polls -seconds 120
//
// It prints one line: mode, ids, seconds, each broker's CPU as % of one core,
// their sum, txnscope's requests per second and the busiest kinds.
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// clockTicks is Linux's USER_HZ, the unit of /proc/PID/stat's times.
const clockTicks = 100

func main() {
	bootstrap := flag.String("bootstrap", "127.0.0.1:9092", "brokers to start from, comma-separated")
	pids := flag.String("pids", "", "the brokers' process ids, comma-separated")
	mode := flag.String("mode", "polls", "none, polls, log or exporter")
	seconds := flag.Int("seconds", 120, "the measured window")
	every := flag.Duration("every", 2*time.Second, "the refresh interval (polls, log)")
	flag.Parse()
	procs, err := parsePIDs(*pids)
	if err != nil || flag.NArg() > 0 || *seconds < 1 || !slices.Contains([]string{"none", "polls", "log", "exporter"}, *mode) {
		fmt.Fprintln(os.Stderr, "brokercost: usage: brokercost -bootstrap H:P,... -pids PID,... [-mode none|polls|log|exporter] [-seconds N] [-every D]")
		os.Exit(2)
	}
	if *mode == "exporter" {
		*every = 15 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(*seconds)*time.Second+30*time.Minute)
	defer cancel()
	if err := run(ctx, strings.Split(*bootstrap, ","), procs, *mode, time.Duration(*seconds)*time.Second, *every); err != nil {
		fmt.Fprintln(os.Stderr, "brokercost:", err)
		os.Exit(1)
	}
}

func parsePIDs(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("bad pid %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func run(ctx context.Context, bootstrap []string, pids []int, mode string, window, every time.Duration) error {
	count := &counter{n: map[int16]int{}}
	ids := 0
	var poll func() error
	var prev *model.Snapshot
	if mode != "none" {
		cl, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: bootstrap, Timeout: time.Minute, FollowLog: mode == "log", Hooks: []kgo.Hook{count}})
		if err != nil {
			return err
		}
		defer cl.Close()
		poll = func() error {
			s, err := cl.Poll(ctx, prev)
			if err != nil {
				return err
			}
			prev, ids = s, len(s.Txns)
			return nil
		}
		// Until the states are whole, as the TUI's first load: not measured.
		start := time.Now()
		for {
			if err := poll(); err != nil {
				return err
			}
			if mode == "log" && prev.Source.Log {
				break
			}
			if mode != "log" && !slices.ContainsFunc(prev.Txns, func(t model.Txn) bool { return t.Pending }) {
				break
			}
			if mode != "log" {
				d, err := cl.Describe(ctx, model.NextPending(prev, nil, len(prev.Txns)))
				if err != nil {
					return err
				}
				prev, _ = model.Fill(prev, d)
			}
		}
		fmt.Fprintf(os.Stderr, "brokercost: %s ready in %s with %d ids (%d requests)\n", mode, time.Since(start).Round(time.Millisecond), ids, count.reset())
	}
	cpu0, err := cpuOf(pids)
	if err != nil {
		return err
	}
	t0 := time.Now()
	for time.Since(t0) < window {
		if poll != nil {
			if err := poll(); err != nil {
				return err
			}
		}
		// As the TUI: the next refresh an interval after this one ends,
		// stretched while every refresh lists all the ids (model.PollEvery).
		wait := every
		if mode == "polls" {
			wait = model.PollEvery(every, prev)
		}
		time.Sleep(wait)
	}
	took := time.Since(t0)
	cpu1, err := cpuOf(pids)
	if err != nil {
		return err
	}
	var pct []string
	sum := 0.0
	for i := range pids {
		p := float64(cpu1[i]-cpu0[i]) / clockTicks / took.Seconds() * 100
		sum += p
		pct = append(pct, fmt.Sprintf("%.2f", p))
	}
	total, kinds := count.snapshot()
	fmt.Printf("mode=%s ids=%d seconds=%.0f broker_cpu_pct=%s sum=%.2f requests_per_s=%.2f busiest=%s\n",
		mode, ids, took.Seconds(), strings.Join(pct, ","), sum, float64(total)/took.Seconds(), kinds)
	return nil
}

// cpuOf is each process's user+system time so far, in clock ticks.
func cpuOf(pids []int) ([]int64, error) {
	out := make([]int64, len(pids))
	for i, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return nil, err
		}
		// The command name may hold spaces: the fields start after its ')'.
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		if len(f) < 13 {
			return nil, fmt.Errorf("/proc/%d/stat: too few fields", pid)
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		sy, _ := strconv.ParseInt(f[12], 10, 64)
		out[i] = u + sy
	}
	return out, nil
}

// counter counts the requests written to the brokers, by kind.
type counter struct {
	mu sync.Mutex
	n  map[int16]int
}

func (c *counter) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if err != nil {
		return
	}
	c.mu.Lock()
	c.n[key]++
	c.mu.Unlock()
}

func (c *counter) reset() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	total := 0
	for _, n := range c.n {
		total += n
	}
	c.n = map[int16]int{}
	return total
}

// snapshot is the total and the four busiest kinds, "Key:n,...".
func (c *counter) snapshot() (int, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	type kn struct {
		key int16
		n   int
	}
	var all []kn
	total := 0
	for k, n := range c.n {
		all = append(all, kn{k, n})
		total += n
	}
	slices.SortFunc(all, func(a, b kn) int { return cmp.Compare(b.n, a.n) })
	var parts []string
	for _, x := range all[:min(len(all), 4)] {
		parts = append(parts, fmt.Sprintf("%s:%d", kmsg.NameForKey(x.key), x.n))
	}
	if len(parts) == 0 {
		return total, "-"
	}
	return total, strings.Join(parts, ",")
}
