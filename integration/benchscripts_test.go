package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A developer who sourced the shared brokers' env (TXNSCOPE_KAFKA_STATE set) and then ran
// scripts/bench-cli without --bootstrap used to lose the shared broker: kafka-up reused it, and
// bench-cli stopped it at the end.
func TestBenchCLILeavesTheSharedBrokerAlone(t *testing.T) {
	bootstrap, noverify := Bootstrap(t), NoVerifyBootstrap(t)
	if os.Getenv("TXNSCOPE_KAFKA_STATE") == "" {
		t.Setenv("TXNSCOPE_KAFKA_STATE", stateDir()) // as `source $TXNSCOPE_KAFKA_STATE/env` leaves it
	}
	root := repoRoot(t)

	t.Run("refuses the shared state dir", func(t *testing.T) {
		cmd := exec.Command(filepath.Join(root, "scripts", "bench-cli"), "--sizes", "10", "--runs", "1")
		cmd.Env = append(os.Environ(), "TXNSCOPE_BENCH_CLI_STATE="+os.Getenv("TXNSCOPE_KAFKA_STATE"))
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "refusing the shared state dir") {
			t.Errorf("bench-cli with the shared state dir: %v, want exit 2 and a refusal\n%s", err, out)
		}
		brokerAnswers(t, bootstrap)
		brokerAnswers(t, noverify)
	})

	t.Run("runs on a broker of its own", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(root, "scripts", "bench-cli"), "--sizes", "10", "--runs", "1")
		cmd.Env = append(os.Environ(), "TXNSCOPE_BENCH_CLI_STATE="+filepath.Join(t.TempDir(), "bench-kafka"))
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("bench-cli: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), "| 10 |") {
			t.Errorf("bench-cli printed no row for 10 ids:\n%s", out)
		}
		brokerAnswers(t, bootstrap)
		brokerAnswers(t, noverify)
	})
}

// kafka-down run for a state dir of one broker, from a shell that sourced the shared brokers' env
// (as CI's is), read the shared noverify broker's pid from that env and stopped it: bench-cli's
// broker of its own took the shared noverify broker down with it.
func TestKafkaDownStopsOnlyItsOwnBrokers(t *testing.T) {
	bootstrap, noverify := Bootstrap(t), NoVerifyBootstrap(t)
	if os.Getenv("TXNSCOPE_KAFKA_NOVERIFY_PID") == "" || os.Getenv("TXNSCOPE_KAFKA_NOVERIFY_CONFIG") == "" {
		missing(t, "the shared brokers' env is not in the environment: source $TXNSCOPE_KAFKA_STATE/env before go test")
	}
	own := t.TempDir()
	// A state dir whose one broker is gone (a pid no process has, a config no process names).
	env := "export TXNSCOPE_KAFKA_PID=999999999\nexport TXNSCOPE_KAFKA_CONFIG=" + filepath.Join(own, "server.properties") + "\n"
	if err := os.WriteFile(filepath.Join(own, "env"), []byte(env), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(repoRoot(t), "scripts", "kafka-down"), "--grace", "1")
	cmd.Env = append(os.Environ(), "TXNSCOPE_KAFKA_STATE="+own)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kafka-down: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "stopping") {
		t.Errorf("kafka-down of a dead broker's state stopped something:\n%s", out)
	}
	brokerAnswers(t, bootstrap)
	brokerAnswers(t, noverify)
}

func brokerAnswers(t *testing.T, bootstrap string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := kadm.NewClient(cl).BrokerMetadata(ctx); err != nil {
		t.Fatalf("the shared broker at %s no longer answers: %v", bootstrap, err)
	}
}

// TestBenchScaleGoesOnWhenTheOfficialToolFails: at 2,000,000 ids kafka-transactions.sh list gives up
// ("Tried to read a collection of size 2000000, which exceeds the maximum allowed size of 1000000"),
// and bench-scale used to stop silently there (its stderr went to /dev/null under set -e) and take
// its broker with it. Now the official column says why it failed, and txnscope's steps still run:
// here against a stand-in for scripts/kafka-tools that fails that way, on 200 ids of the shared broker.
func TestBenchScaleGoesOnWhenTheOfficialToolFails(t *testing.T) {
	bootstrap := Bootstrap(t)
	requireLoopback(t, bootstrap)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	const why = "Tried to read a collection of size 2000000, which exceeds the maximum allowed size of 1000000"
	fake := filepath.Join(t.TempDir(), "kafka-tools")
	script := "#!/bin/sh\n[ \"$2\" = --version ] && { echo 4.4.0; exit 0; }\n" +
		"echo 'Error while executing transactions command: " + why + "' >&2\nexit 1\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	prefix := fmt.Sprintf("bs%08x", rand.Uint32())
	cmd := exec.CommandContext(ctx, filepath.Join(repoRoot(t), "scripts", "bench-scale"), "--bootstrap", bootstrap, "--prefix", prefix,
		"--sizes", "200", "--runs", "1", "--tui-runs", "1", "--settle", "6", "--open-every", "1000", "--txn-timeout-ms", "10000")
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), "TXNSCOPE_BENCH_SCALE_KAFKA_TOOLS="+fake)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("bench-scale: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	table := stdout.String()
	for _, want := range []string{
		"| `kafka-transactions.sh list` | failed: " + why + " |",
		"| `list`: txnscope ÷ kafka-transactions.sh (rows identical) | failed: " + why + " |",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}
	for _, row := range []string{"| `txnscope list` |", "| TUI: first frame with rows |", "| `snapshot -o json` |"} {
		i := strings.Index(table, row)
		if i < 0 || strings.HasPrefix(table[i+len(row):], " – |") {
			t.Errorf("row %s not measured:\n%s", row, table)
		}
	}
	if !strings.Contains(stderr.String(), "kafka-transactions.sh list failed: "+why) {
		t.Errorf("stderr does not say why the official tool failed:\n%s", stderr.String())
	}
}
