package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/model"
)

// A broker that was fenced and comes back answers ListTransactions with an empty list, without
// error, from when it drops its __transaction_state partitions until it is leader again and
// loading them (then COORDINATOR_LOAD_IN_PROGRESS). Read naively, every open transaction then has
// "no owner". On this machine the empty list lasts about 0.2 s, with 4 open transactions or 2,000.
//
// TestLoadingCoordinator: open transactions of real producers that stay live throughout, the
// broker paused long enough to be fenced (SIGSTOP; its controller runs apart and fences it),
// resumed, and txnscope's binary polled without pause through the recovery, three at a time:
// `find-hanging --max-transaction-timeout 0` never reports a live transaction as hanging (it
// exits 1 saying why while the coordinators cannot vouch for their listing), and the abort of a
// live transaction's partition is refused every time before any marker is sent. A plain
// ListTransactions poller shows the window. The binary before this check failed both, every run.
//
// Knobs (environment), for measuring: TXNSCOPE_LOADING_IDS more open transactions made with
// scripts/benchtxns (a longer load); TXNSCOPE_LOADING_STOP how long the broker is paused;
// TXNSCOPE_LOADING_POLLERS pollers of each command; TXNSCOPE_LOADING_BIN a txnscope binary to
// test instead of this tree's.
func TestLoadingCoordinator(t *testing.T) {
	t.Parallel()
	ids := envInt(t, "TXNSCOPE_LOADING_IDS", 0)
	stop := envDuration(t, "TXNSCOPE_LOADING_STOP", 14*time.Second)
	pollers := envInt(t, "TXNSCOPE_LOADING_POLLERS", 3)
	b := StartBroker(t, BrokerOptions{SeparateController: true})
	requireLoopback(t, b.Bootstrap)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	bin := os.Getenv("TXNSCOPE_LOADING_BIN")
	if bin == "" {
		bin = buildTxnscope(ctx, t)
	}

	const topic, live = "bench", 4
	adm := newAdmin(t, b.Bootstrap)
	if _, err := adm.CreateTopic(ctx, 12, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	// Real producers, their transactions open for the whole test (not past the broker's maximum).
	var target model.TopicPartition
	for i := range live {
		tp := model.TopicPartition{Topic: topic, Partition: int32(i)}
		p := producer(t, b.Bootstrap, fmt.Sprintf("live-%d", i), 10*time.Minute)
		openTxn(ctx, t, p, tp, 1, "live")
		if i == 0 {
			target = tp
		}
	}
	if ids > 0 {
		start := time.Now()
		benchTxns(ctx, t, b.Bootstrap, topic, ids)
		t.Logf("%d more open transactions made in %s", ids, time.Since(start).Round(time.Millisecond))
	}
	start := waitStartOffset(ctx, t, bin, b.Bootstrap, target)

	var (
		wg                     sync.WaitGroup
		hangs, aborts, listing []sample
		resumed                time.Time
		until                  time.Time
	)
	b.Pause(t)
	time.Sleep(stop)
	resumed, until = time.Now(), time.Now().Add(20*time.Second)
	b.Resume(t)
	var mu sync.Mutex
	for range pollers {
		wg.Go(func() {
			s := pollUntil(until, func() sample { return findHangingSample(ctx, bin, b.Bootstrap, topic, "0") })
			mu.Lock()
			hangs = append(hangs, s...)
			mu.Unlock()
		})
		wg.Go(func() {
			s := pollUntil(until, func() sample { return abortSample(ctx, t, bin, b.Bootstrap, target, start) })
			mu.Lock()
			aborts = append(aborts, s...)
			mu.Unlock()
		})
	}
	wg.Go(func() { listing = pollUntil(until, func() sample { return listSample(ctx, t, b.Bootstrap, live+ids) }) })
	wg.Wait()
	byTime(hangs)
	byTime(aborts)

	report(t, "ListTransactions (all ids)", resumed, listing)
	report(t, "find-hanging", resumed, hangs)
	report(t, "abort", resumed, aborts)
	for _, s := range hangs {
		if s.bad {
			t.Errorf("find-hanging %s after SIGCONT reported live transactions as hanging: %s", s.at.Sub(resumed).Round(time.Millisecond), s.what)
		}
	}
	for _, s := range aborts {
		if s.bad {
			t.Errorf("abort %s after SIGCONT sent a marker for a live transaction: %s", s.at.Sub(resumed).Round(time.Millisecond), s.what)
		}
	}
	if last := hangs[len(hangs)-1]; !last.ok {
		t.Errorf("find-hanging did not recover: %s", last.what)
	}
	if last := aborts[len(aborts)-1]; !strings.Contains(last.what, "use force-terminate") {
		t.Errorf("the abort's last answer: %s, want the live transaction recognised (use force-terminate)", last.what)
	}
	fenced := grepLog(b.ctrl, "fencing broker")
	if fenced == "" {
		t.Errorf("the controller never fenced the paused broker: the test did not exercise a coordinator coming back")
	}
	t.Logf("controller and broker logs:\n%s\n%s", fenced, grepLog(b, "resigned as the txn coordinator for partition 0 ",
		"elected as the txn coordinator for partition 0 ", "__transaction_state-0 in"))
}

// sample is one poll: ok when it read a settled cluster, bad when it said something false (a
// live transaction hanging, a marker sent), otherwise "unknown" or failing, which is fine.
type sample struct {
	at, end time.Time
	ok, bad bool
	what    string
}

func byTime(ss []sample) {
	sort.Slice(ss, func(i, j int) bool { return ss[i].at.Before(ss[j].at) })
}

func pollUntil(until time.Time, f func() sample) []sample {
	var out []sample
	for time.Now().Before(until) {
		out = append(out, f())
		time.Sleep(20 * time.Millisecond)
	}
	return out
}

func findHangingSample(ctx context.Context, bin, bootstrap, topic, maxTimeout string) sample {
	s := sample{at: time.Now()}
	out, errOut, code := runBin(ctx, bin, "find-hanging", "-b", bootstrap, "--topic", topic, "--max-transaction-timeout", maxTimeout, "-o", "json", "--timeout", "5s")
	s.end = time.Now()
	var doc struct {
		Hanging       []json.RawMessage `json:"hanging"`
		OwnersUnknown *string           `json:"owners_unknown"`
	}
	_ = json.Unmarshal([]byte(out), &doc)
	switch {
	case len(doc.Hanging) > 0:
		s.bad, s.what = true, fmt.Sprintf("exit %d, %d hanging", code, len(doc.Hanging))
	case code == 0:
		s.ok, s.what = true, "exit 0, none hanging"
	default:
		s.what = fmt.Sprintf("exit %d: %s", code, firstLine(errOut))
	}
	return s
}

func abortSample(ctx context.Context, t *testing.T, bin, bootstrap string, tp model.TopicPartition, start int64) sample {
	s := sample{at: time.Now()}
	out, errOut, code := runBin(ctx, bin, "abort", "-b", bootstrap, "--topic", tp.Topic, "--partition", strconv.Itoa(int(tp.Partition)),
		// The idle rule would hold the live producer back on its own: set
		// aside, only the coordinators' check stands between it and a marker.
		"--start-offset", strconv.FormatInt(start, 10), "--max-transaction-timeout", "0", "--yes", "--timeout", "5s",
		"--audit-log", filepath.Join(t.TempDir(), "audit.log"))
	s.end = time.Now()
	sent := strings.Contains(out, "sent; the broker accepted it")
	for _, after := range []string{"broker answered", "refused by the broker", "unknown outcome"} {
		sent = sent || strings.Contains(errOut, after)
	}
	switch {
	case sent:
		s.bad, s.what = true, fmt.Sprintf("exit %d: %s%s", code, firstLine(out), firstLine(errOut))
	case code == 1 && strings.Contains(errOut, "use force-terminate"):
		s.ok, s.what = true, firstLine(errOut)
	default:
		s.what = fmt.Sprintf("exit %d: %s", code, firstLine(errOut))
	}
	return s
}

// listSample lists every transaction as a naive reader would: ok when all want ids are there,
// bad when the list is short and no broker said why (the window this test is about).
func listSample(ctx context.Context, t *testing.T, bootstrap string, want int) sample {
	s := sample{at: time.Now()}
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.RequestRetries(0), kgo.RetryTimeout(time.Second))
	if err != nil {
		t.Error(err)
		return s
	}
	defer cl.Close()
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := kmsg.NewPtrListTransactionsRequest().RequestWith(rctx, cl)
	s.end = time.Now()
	switch {
	case err != nil:
		s.what = err.Error()
	case kerr.ErrorForCode(resp.ErrorCode) != nil:
		s.what = kerr.ErrorForCode(resp.ErrorCode).Error()
	case len(resp.TransactionStates) < want:
		s.bad, s.what = true, fmt.Sprintf("%d of %d ids, no error", len(resp.TransactionStates), want)
	default:
		s.ok, s.what = true, fmt.Sprintf("%d ids", len(resp.TransactionStates))
	}
	return s
}

// report logs the polls in runs of the same answer (numbers aside), with their times since
// SIGCONT.
func report(t *testing.T, what string, resumed time.Time, ss []sample) {
	var b strings.Builder
	for i := 0; i < len(ss); {
		j := i
		for j+1 < len(ss) && digits.ReplaceAllString(ss[j+1].what, "#") == digits.ReplaceAllString(ss[i].what, "#") {
			j++
		}
		fmt.Fprintf(&b, "  %6s..%6s  ×%-3d %s\n", ss[i].at.Sub(resumed).Round(10*time.Millisecond),
			ss[j].end.Sub(resumed).Round(10*time.Millisecond), j-i+1, ss[i].what)
		i = j + 1
	}
	t.Logf("%s, times after %s:\n%s", what, resumed.Format("15:04:05.000"), b.String())
}

var digits = regexp.MustCompile(`[0-9]+`)

func runBin(ctx context.Context, bin string, args ...string) (stdout, stderr string, code int) {
	cmd := exec.CommandContext(ctx, bin, args...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code = cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		errb.WriteString(err.Error())
	}
	return out.String(), errb.String(), code
}

// firstLine is the first line of s, cut to a length a log can hold.
func firstLine(s string) string {
	const most = 240
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > most {
		s = s[:most] + "…"
	}
	return s
}

// waitStartOffset is where the live transaction on tp starts, by the binary's own
// describe-producers (the live producer is the only one there with an open transaction).
func waitStartOffset(ctx context.Context, t *testing.T, bin, bootstrap string, tp model.TopicPartition) int64 {
	t.Helper()
	out, errOut, code := runBin(ctx, bin, "describe-producers", "-b", bootstrap, "--topic", tp.Topic,
		"--partition", strconv.Itoa(int(tp.Partition)), "-o", "json")
	var doc struct {
		Producers []struct {
			Start *int64 `json:"current_txn_start_offset"`
		} `json:"producers"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 {
		t.Fatalf("describe-producers: exit %d, %v, %s", code, err, errOut)
	}
	for _, p := range doc.Producers {
		if p.Start != nil {
			return *p.Start
		}
	}
	t.Fatalf("no open transaction on %s-%d: %s", tp.Topic, tp.Partition, out)
	return -1
}

// benchTxns opens n more transactions with scripts/benchtxns (one record each, open until the
// broker's maximum timeout).
func benchTxns(ctx context.Context, t *testing.T, bootstrap, topic string, n int) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "benchtxns")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./scripts/benchtxns")
	build.Dir = repoRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building benchtxns: %v\n%s", err, out)
	}
	run := exec.CommandContext(ctx, bin, "-bootstrap", bootstrap, "-n", strconv.Itoa(n), "-topic", topic, "-prefix", "bench", "-parallel", "32")
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("benchtxns -n %d: %v\n%s", n, err, out)
	}
}

// grepLog returns the last lines of the broker's log that contain one of words (any case).
func grepLog(b *Broker, words ...string) string {
	data, err := os.ReadFile(b.LogFile)
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		for _, w := range words {
			if strings.Contains(strings.ToLower(l), w) {
				out = append(out, l)
				break
			}
		}
	}
	if len(out) > 16 {
		out = out[len(out)-16:]
	}
	return strings.Join(out, "\n")
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		t.Fatalf("%s=%q: want a count", name, v)
	}
	return n
}

func envDuration(t *testing.T, name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		t.Fatalf("%s=%q: want a duration", name, v)
	}
	return d
}
