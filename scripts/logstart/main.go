// Command logstart measures what the TUI's refresh costs with the history
// taken from the coordinators' log (-mode log) or from polls (-mode polls),
// in a process of its own so that its memory is the mode's alone:
//
//   - ready: from the start until the states are whole: with the log, the
//     first snapshot made from it (the log read to its end); with polls, the
//     first snapshot in which every id is described;
//
//   - steady: the median of -runs Polls after that, and the CPU they took;
//
//   - memory: the live heap after a collection, and the peak RSS (VmHWM).
//
//     go run ./scripts/logstart -bootstrap 127.0.0.1:9092 -mode log
//     go run ./scripts/logstart -bootstrap 127.0.0.1:9092 -mode polls
//
// It prints one line: mode, ids, ready ms, steady median ms, steady CPU ms
// per Poll, live heap MB, peak RSS MB.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

func main() {
	bootstrap := flag.String("bootstrap", "127.0.0.1:9092", "broker to start from")
	mode := flag.String("mode", "log", "log or polls")
	runs := flag.Int("runs", 7, "steady Polls timed")
	every := flag.Duration("every", 2*time.Second, "the refresh interval between steady Polls")
	timeout := flag.Duration("timeout", 10*time.Minute, "deadline of the whole run")
	flag.Parse()
	if flag.NArg() > 0 || *runs < 1 || (*mode != "log" && *mode != "polls") {
		fmt.Fprintln(os.Stderr, "logstart: usage: logstart [-bootstrap HOST:PORT] [-mode log|polls] [-runs N>0]")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := run(ctx, *bootstrap, *mode, *runs, *every); err != nil {
		fmt.Fprintln(os.Stderr, "logstart:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, bootstrap, mode string, runs int, every time.Duration) error {
	start := time.Now()
	cl, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: []string{bootstrap}, Timeout: time.Minute, FollowLog: mode == "log"})
	if err != nil {
		return err
	}
	defer cl.Close()
	var prev *model.Snapshot
	poll := func() error {
		s, err := cl.Poll(ctx, prev)
		if err != nil {
			return err
		}
		prev = s
		return nil
	}
	for {
		if err := poll(); err != nil {
			return err
		}
		if mode == "log" && prev.Source.Log {
			break
		}
		if mode == "polls" && !slices.ContainsFunc(prev.Txns, func(t model.Txn) bool { return t.Pending }) {
			break
		}
		if mode == "polls" {
			// What the TUI's progressive load does between polls.
			d, err := cl.Describe(ctx, model.NextPending(prev, nil, len(prev.Txns)))
			if err != nil {
				return err
			}
			prev, _ = model.Fill(prev, d)
		}
	}
	ready := time.Since(start)
	var took []time.Duration
	cpu0 := cpuTime()
	for range runs {
		time.Sleep(every)
		t0 := time.Now()
		if err := poll(); err != nil {
			return err
		}
		took = append(took, time.Since(t0))
	}
	cpu := cpuTime() - cpu0
	slices.Sort(took)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Printf("%s ids=%d ready_ms=%d steady_ms=%d cpu_ms_per_poll=%d live_heap_mb=%d peak_rss_mb=%d source=%q\n",
		mode, len(prev.Txns), ready.Milliseconds(), took[len(took)/2].Milliseconds(), (cpu / time.Duration(runs)).Milliseconds(),
		ms.HeapAlloc>>20, peakRSS()>>20, sourceOf(prev))
	return nil
}

func sourceOf(s *model.Snapshot) string {
	if s.Source.Log {
		return "coordinator log"
	}
	return "polls: " + s.Source.Why
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSS is VmHWM from /proc/self/status, in bytes (0 when unknown).
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
