package integration

import (
	"context"
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
	bootstrap := Bootstrap(t)
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
	})
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
