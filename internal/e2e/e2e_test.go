// Package e2e runs the real program as a separate process, with its own
// stdout, exit status, signals and terminal (tmux). It sits apart from the
// module's root, which then shows the product and not its end-to-end tests.
package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/txnscope/txnscope/internal/cli"
	"github.com/txnscope/txnscope/internal/jsonout"
	"github.com/txnscope/txnscope/internal/testutil"
	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
)

// asMain makes the test binary run the program (cli.Main, txnscope's main)
// instead of the tests.
const asMain = "TXNSCOPE_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asMain) == "1" {
		cli.Main()
		return
	}
	testutil.NoConfigFile()
	goleak.VerifyTestMain(m)
}

// txnscope prepares the program with args; its state directory is private to the test.
func txnscope(t *testing.T, ctx context.Context, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = append(os.Environ(), asMain+"=1", "XDG_STATE_HOME="+t.TempDir())
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

type result struct {
	code           int
	stdout, stderr string
	took           time.Duration
}

func runProgram(t *testing.T, args ...string) result {
	t.Helper()
	return runProgramEnv(t, nil, args...)
}

// runProgramEnv is runProgram with extra environment variables.
func runProgramEnv(t *testing.T, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := txnscope(t, ctx, args...)
	cmd.Env = append(cmd.Env, env...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String(), took: time.Since(start)}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	default:
		t.Fatalf("txnscope %q: %v", args, err)
	}
	return r
}

func keysOf(m map[string]any) string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func TestE2ESnapshot(t *testing.T) {
	_, bs := kafkatest.NewCluster(t)
	kafkatest.OpenTxn(t, bs, "e2e-sink-0-7", "orders", time.Minute)
	done := kafkatest.Producer(t, bs, "e2e-sink-1-7", time.Minute)
	kafkatest.Begin(t, done)
	kafkatest.Produce(t, done, "orders", 1, 2)
	kafkatest.End(t, done, true)
	bootstrap := strings.Join(bs, ",")

	r := runProgram(t, "snapshot", "-o", "json", "-b", bootstrap, "--timeout", "5s")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, r.stdout)
	}
	testutil.CheckSnapshotJSON(t, []byte(r.stdout))
	if got := keysOf(doc); got != "bootstrap,broker_max_timeout_ms,hanging,history,jobs,partitions,pinned_partitions,schema,stuck_groups,taken_at,transactions" {
		t.Errorf("top-level keys: %s", got)
	}
	if doc["bootstrap"] != bootstrap {
		t.Errorf("bootstrap = %v", doc["bootstrap"])
	}
	if _, err := time.Parse(time.RFC3339Nano, doc["taken_at"].(string)); err != nil {
		t.Errorf("taken_at: %v", err)
	}
	txns := map[string]map[string]any{}
	for _, x := range doc["transactions"].([]any) {
		m := x.(map[string]any)
		const want = "aborts_5m,aborts_60m,aborts_seen,age_ms,commits_5m,commits_60m,commits_seen,coordinator,partitions,problems," +
			"producer_epoch,producer_id,recent_transactions,start_time,state,timeout_ms,timeout_ratio,transactional_id"
		if got := keysOf(m); got != want {
			t.Errorf("transaction keys: %s", got)
		}
		txns[m["transactional_id"].(string)] = m
	}
	o, d := txns["e2e-sink-0-7"], txns["e2e-sink-1-7"]
	if o == nil || d == nil {
		t.Fatalf("transactions = %v", txns)
	}
	if o["state"] != "Ongoing" || o["timeout_ms"] != 60000.0 || o["start_time"] == nil || o["age_ms"] == nil || o["timeout_ratio"] == nil {
		t.Errorf("open transaction = %v", o)
	}
	if ps := o["partitions"].([]any); len(ps) != 1 || ps[0].(map[string]any)["topic"] != "orders" || ps[0].(map[string]any)["partition"] != 0.0 {
		t.Errorf("open transaction partitions = %v", o["partitions"])
	}
	if d["state"] == "Ongoing" || d["start_time"] != nil || d["age_ms"] != nil || d["timeout_ratio"] != nil {
		t.Errorf("committed transaction = %v", d)
	}

	var pinned map[string]any
	for _, x := range doc["partitions"].([]any) {
		p := x.(map[string]any)
		if got := keysOf(p); got != "high_watermark,last_stable_offset,leader,partition,producers,topic" {
			t.Errorf("partition keys: %s", got)
		}
		if p["topic"] == "orders" && p["partition"] == 0.0 {
			pinned = p
		}
	}
	if pinned == nil {
		t.Fatalf("orders-0 missing from partitions: %v", doc["partitions"])
	}
	if pinned["high_watermark"] != float64(kafkatest.Records) || pinned["last_stable_offset"] != 0.0 {
		t.Errorf("orders-0 offsets = %v/%v, want HWM %d, LSO 0", pinned["high_watermark"], pinned["last_stable_offset"], kafkatest.Records)
	}
	found := false
	for _, x := range pinned["producers"].([]any) {
		pr := x.(map[string]any)
		if got := keysOf(pr); got != "coordinator_epoch,current_txn_start_offset,last_sequence,last_timestamp,producer_epoch,producer_id" {
			t.Errorf("producer keys: %s", got)
		}
		if pr["producer_id"] == o["producer_id"] && pr["current_txn_start_offset"] == 0.0 {
			found = true
		}
	}
	if !found {
		t.Errorf("the open transaction's producer is not shown pinning orders-0: %v", pinned["producers"])
	}

	// The table: a header, then the open transaction first (most urgent).
	r = runProgram(t, "snapshot", "-b", bootstrap)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "TRANSACTIONAL ID") ||
		!strings.HasPrefix(lines[1], "e2e-sink-0-7 ") || !strings.Contains(lines[1], "Ongoing") {
		t.Errorf("table: exit %d, stderr %q\n%s", r.code, r.stderr, r.stdout)
	}
	if strings.Contains(r.stdout, "\x1b") {
		t.Error("the table has escape sequences")
	}
}

func TestE2ESnapshotUnreachable(t *testing.T) {
	// A closed port fails at once; a port that accepts but never answers must
	// fail within the timeout too.
	closedAddr := testutil.ClosedAddr(t)

	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		var held []net.Conn // kept open, never answered
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()

	for _, addr := range []string{closedAddr, silent.Addr().String()} {
		r := runProgram(t, "snapshot", "-o", "json", "-b", addr, "--timeout", "2s")
		if r.code != 1 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "txnscope: "+addr) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 1 and one error line", addr, r.code, r.stdout, r.stderr)
		}
		if r.took > 8*time.Second {
			t.Errorf("%s: took %s with --timeout 2s", addr, r.took)
		}
	}
}

// usageError splits a usage error's stderr into its line and the pointer
// to a help after it; ok is false unless stderr is exactly those two lines.
func usageError(stderr string) (line, pointer string, ok bool) {
	lines := strings.Split(stderr, "\n")
	if len(lines) != 3 || lines[2] != "" {
		return "", "", false
	}
	line, pointer = lines[0], lines[1]
	return line, pointer, strings.HasPrefix(line, "txnscope: ") && strings.HasPrefix(pointer, "see txnscope ") && strings.HasSuffix(pointer, " --help")
}

// A usage error is its line and where the help is, on the real stderr:
// the line stays on screen.
func TestE2EBadUsage(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"list", "--bogus"}, "txnscope: unknown flag: --bogus\nsee txnscope list --help\n"},
		{[]string{"--nope"}, "txnscope: unknown flag: --nope\nsee txnscope --help\n"},
		{[]string{"--timeout", "3h"}, "txnscope: --timeout 3h0m0s is longer than the most allowed, 10m0s\nsee txnscope --help\n"},
		{[]string{"-b", ",", "snapshot"}, "txnscope: --bootstrap-server is empty: give at least one host:port\nsee txnscope snapshot --help\n"},
		{[]string{"snapshot", "-o", "xml"}, "txnscope: bad --output \"xml\": want table or json\nsee txnscope snapshot --help\n"},
		{[]string{"frobnicate"}, "txnscope: unknown command \"frobnicate\" (want demo, snapshot, exporter, list, describe, describe-producers, find-hanging, abort, force-terminate, commit, resolve, config)\nsee txnscope --help\n"},
	} {
		r := runProgram(t, tc.args...)
		if r.code != 2 || r.stdout != "" || r.stderr != tc.stderr {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2, nothing, %q", tc.args, r.code, r.stdout, r.stderr, tc.stderr)
		}
	}
	if r := runProgram(t, "--help"); r.code != 0 || !strings.Contains(r.stdout, "Usage:") || r.stderr != "" {
		t.Errorf("--help: exit %d, stdout %.30q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if r := runProgram(t, "--version"); r.code != 0 || !strings.HasPrefix(r.stdout, "txnscope ") {
		t.Errorf("--version: exit %d, stdout %q", r.code, r.stdout)
	}
}

func TestE2ENotATerminal(t *testing.T) {
	for _, args := range [][]string{nil, {"demo"}} {
		r := runProgram(t, args...)
		if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "not a terminal") || !strings.Contains(r.stderr, "txnscope snapshot") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
		if r.took > 5*time.Second {
			t.Errorf("%q took %s: it must refuse before starting anything", args, r.took)
		}
	}
}

func TestE2EDemoHeadless(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := txnscope(t, ctx, "demo", "--headless")
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var errb strings.Builder
			cmd.Stderr = &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			lines := make(chan string, 1)
			go func() {
				sc := bufio.NewScanner(stdout)
				if sc.Scan() {
					lines <- sc.Text()
				}
				close(lines)
				io.Copy(io.Discard, stdout)
			}()
			var first string
			select {
			case first = <-lines:
			case <-time.After(30 * time.Second):
				t.Fatal("no bootstrap line within 30s")
			}
			if !regexp.MustCompile(`^bootstrap: 127\.0\.0\.1:\d+(,127\.0\.0\.1:\d+){2}$`).MatchString(first) {
				t.Fatalf("first line %q", first)
			}

			// It is a real cluster: a snapshot of it works.
			if sig == syscall.SIGTERM {
				r := runProgram(t, "snapshot", "-b", strings.TrimPrefix(first, "bootstrap: "))
				if r.code != 0 || !strings.HasPrefix(r.stdout, "TRANSACTIONAL ID") {
					t.Errorf("snapshot of the demo: exit %d, stderr %q", r.code, r.stderr)
				}
			}

			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			waited := make(chan error, 1)
			go func() { waited <- cmd.Wait() }()
			select {
			case err := <-waited:
				if err != nil {
					t.Errorf("after %s: %v; stderr:\n%s", sig, err, errb.String())
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("still running 30s after %s", sig)
			}
		})
	}
}

// TestE2ESnapshotSinceWithoutTheLog: kfake keeps no coordinators' log, so
// --since has nothing to replay: one line that says why, a non-zero exit,
// nothing on stdout. Without --since, the same cluster prints as always and
// says its history is one read.
func TestE2ESnapshotSinceWithoutTheLog(t *testing.T) {
	_, bs := kafkatest.NewCluster(t)
	kafkatest.OpenTxn(t, bs, "e2e-sink-0-7", "orders", time.Minute)
	bootstrap := strings.Join(bs, ",")
	r := runProgram(t, "snapshot", "--since", "1h", "-b", bootstrap, "--timeout", "5s")
	const want = "txnscope: --since: cannot replay the coordinators' log: the cluster has no __transaction_state\n"
	if r.code == 0 || r.stdout != "" || r.stderr != want {
		t.Fatalf("exit %d, stdout %q, stderr %q; want exit 1 and %q", r.code, r.stdout, r.stderr, want)
	}
	for _, bad := range [][]string{{"snapshot", "--since", "0s"}, {"snapshot", "--since", "-1h"}, {"snapshot", "--since", "9000h"}, {"list", "--since", "1h"}} {
		r := runProgram(t, append(bad, "-b", bootstrap)...)
		first, _, _ := strings.Cut(r.stderr, "\n")
		if r.code != 2 || !strings.HasPrefix(first, "txnscope: ") || !strings.Contains(first, "--since") {
			t.Errorf("%v: exit %d, stderr %q; want a usage error about --since", bad, r.code, first)
		}
	}
	r = runProgram(t, "snapshot", "-o", "json", "-b", bootstrap, "--timeout", "5s")
	testutil.CheckSnapshotJSON(t, []byte(r.stdout))
	var doc jsonout.SnapshotJSON
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || doc.History.Source != "polls" || !strings.Contains(doc.History.Why, "the coordinators' log could not be read") {
		t.Fatalf("history %+v (%v)", doc.History, err)
	}
}
