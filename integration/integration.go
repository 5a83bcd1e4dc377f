// Package integration holds tests that run against a real Apache Kafka broker started by
// scripts/kafka-up (see scripts/kafka-up --help), and the helpers to reach it.
//
// Start the brokers, then run the tests with their environment:
//
//	scripts/kafka-up --with-noverify
//	source /tmp/txnscope-kafka/env   # or $TXNSCOPE_KAFKA_STATE/env
//	go test -race -count=1 ./integration/...
//	scripts/kafka-down
//
// Without the environment the tests skip, except under CI=true, where they fail: CI must never
// silently skip them (.ci/run starts the brokers itself).
//
// kafka_test.go checks the brokers themselves (admin APIs, the no-verify broker's hanging
// transaction). The other tests drive txnscope's own code the way the TUI does (kafkaadmin
// Refresh with the previous snapshot, model.Diff into a History, Execute) against real
// transactional franz-go producers, speaking transaction version 2 and a 3.9-capped version 1:
// lifecycle_test.go (ongoing, committed, aborted, timed out, a busy producer), abort_test.go
// (fenced, force-terminate, refusals, the abort on a hanging partition checked with
// kafka-transactions.sh), identity_test.go (the abort guarantee: turnovers, CONCURRENT_TRANSACTIONS,
// requests held on the wire by proxy_test.go's proxy), outcome_test.go (outcomes read from
// markers), escape_test.go (ids that attack the terminal), seeds_test.go (dead bootstrap servers),
// binary_test.go (the built `txnscope snapshot -o json`).
//
// broker.go starts private brokers for tests that must kill or secure one without disturbing the
// others: outage_test.go (SIGKILL and restart under the TUI and snapshot), secure_test.go (every way
// to connect: TLS, mutual TLS, SASL PLAIN/SCRAM/OAUTHBEARER, --command-config) and acl_test.go (the
// StandardAuthorizer with restricted SCRAM users) and loading_test.go (a broker fenced by its
// separate controller and back: coordinators that are not loaded prove no owner).
//
// cluster3.go finds the three-node cluster of `scripts/kafka-up --brokers 3` ($TXNSCOPE_KAFKA3_STATE)
// and stops, starts and pauses its nodes with scripts/kafka-broker, for the cluster3_*_test.go
// tests: a rolling restart, a force-terminate while its coordinator moves, a hung node.
package integration

import (
	"os"
	"strings"
	"testing"
)

// Environment variables written by scripts/kafka-up into $TXNSCOPE_KAFKA_STATE/env.
const (
	// EnvBootstrap is the main broker: stock settings, one node, 127.0.0.1.
	EnvBootstrap = "TXNSCOPE_KAFKA_BOOTSTRAP"
	// EnvNoVerifyBootstrap is a second, independent broker with
	// transaction.partition.verification.enable=false (kafka-up --with-noverify), on which a
	// transactional write to a partition the coordinator has not added is accepted (KIP-890 part 1
	// off), for tests that must create a hanging transaction.
	EnvNoVerifyBootstrap = "TXNSCOPE_KAFKA_NOVERIFY_BOOTSTRAP"
)

// Bootstrap returns the main test broker's address (host:port) from $TXNSCOPE_KAFKA_BOOTSTRAP.
// When it is not set the test is skipped, or fails when CI=true.
func Bootstrap(t testing.TB) string {
	t.Helper()
	return fromEnv(t, EnvBootstrap, "scripts/kafka-up")
}

// NoVerifyBootstrap returns the address of the broker with partition verification disabled, from
// $TXNSCOPE_KAFKA_NOVERIFY_BOOTSTRAP. When it is not set the test is skipped, or fails when CI=true.
func NoVerifyBootstrap(t testing.TB) string {
	t.Helper()
	return fromEnv(t, EnvNoVerifyBootstrap, "scripts/kafka-up --with-noverify")
}

func fromEnv(t testing.TB, name, start string) string {
	t.Helper()
	v := strings.TrimSpace(os.Getenv(name))
	if v != "" {
		return v
	}
	state := os.Getenv("TXNSCOPE_KAFKA_STATE")
	if state == "" {
		state = "/tmp/txnscope-kafka"
	}
	msg := name + " is not set: start a real Kafka with `" + start + "`, then `source " + state +
		"/env` before `go test ./integration/...` (stop it with scripts/kafka-down)"
	if isCI() {
		t.Fatal("CI=true and " + msg)
	}
	t.Skip(msg)
	return ""
}

func isCI() bool {
	switch strings.ToLower(strings.TrimSpace(os.Getenv("CI"))) {
	case "true", "1", "yes":
		return true
	}
	return false
}
