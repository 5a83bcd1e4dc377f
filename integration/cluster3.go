package integration

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// EnvCluster3State is the state dir of a three-node cluster, started beside the single brokers
// with its own state dir:
//
//	TXNSCOPE_KAFKA_STATE=/tmp/txnscope-kafka3 scripts/kafka-up --brokers 3
//	export TXNSCOPE_KAFKA3_STATE=/tmp/txnscope-kafka3
//	go test -count=1 -run TestCluster3 ./integration/
//	TXNSCOPE_KAFKA_STATE=/tmp/txnscope-kafka3 scripts/kafka-down
//
// The tests read its env file (the nodes' addresses, pids, logs) and stop, start, pause and
// resume its nodes with scripts/kafka-broker. They restart brokers: never point it at a cluster
// that anything else uses.
const EnvCluster3State = "TXNSCOPE_KAFKA3_STATE"

// Cluster3Node is one node of the three-node cluster as its env file says.
type Cluster3Node struct {
	ID     int32
	Addr   string // 127.0.0.1:PORT
	PID    int    // the pid recorded last (kafka-broker start records the new one)
	Log    string
	Config string
}

// Cluster3Env is what $TXNSCOPE_KAFKA3_STATE/env says.
type Cluster3Env struct {
	State     string
	Bootstrap []string
	Nodes     []Cluster3Node // by id
}

// Node returns the node with id, or fails.
func (c Cluster3Env) Node(t testing.TB, id int32) Cluster3Node {
	t.Helper()
	for _, n := range c.Nodes {
		if n.ID == id {
			return n
		}
	}
	t.Fatalf("the three-node cluster has no node %d", id)
	return Cluster3Node{}
}

// Cluster3 returns the three-node cluster's bootstrap servers. When $TXNSCOPE_KAFKA3_STATE is
// not set the test is skipped, or fails under CI=true.
func Cluster3(t testing.TB) []string {
	t.Helper()
	return ReadCluster3(t).Bootstrap
}

// ReadCluster3 reads the three-node cluster's env file afresh (the pids change with restarts).
// When $TXNSCOPE_KAFKA3_STATE is not set the test is skipped, or fails under CI=true.
func ReadCluster3(t testing.TB) Cluster3Env {
	t.Helper()
	state := strings.TrimSpace(os.Getenv(EnvCluster3State))
	if state == "" {
		msg := EnvCluster3State + " is not set: start a three-node cluster with `TXNSCOPE_KAFKA_STATE=/tmp/txnscope-kafka3 " +
			"scripts/kafka-up --brokers 3` and `export " + EnvCluster3State + "=/tmp/txnscope-kafka3` before go test"
		if isCI() {
			t.Fatal("CI=true and " + msg)
		}
		t.Skip(msg)
	}
	vars, err := readEnvFile(filepath.Join(state, "env"))
	if err != nil {
		t.Fatalf("%s=%s: %v (start the cluster with TXNSCOPE_KAFKA_STATE=%s scripts/kafka-up --brokers 3)", EnvCluster3State, state, err, state)
	}
	if vars["TXNSCOPE_KAFKA_BROKERS"] != "3" {
		t.Fatalf("%s=%s: its env is not a three-node cluster's (TXNSCOPE_KAFKA_BROKERS=%q)", EnvCluster3State, state, vars["TXNSCOPE_KAFKA_BROKERS"])
	}
	c := Cluster3Env{State: state, Bootstrap: strings.Split(vars["TXNSCOPE_KAFKA_BOOTSTRAP"], ",")}
	for id := int32(1); id <= 3; id++ {
		p := fmt.Sprintf("TXNSCOPE_KAFKA_NODE%d_", id)
		pid, _ := strconv.Atoi(vars[p+"PID"])
		n := Cluster3Node{ID: id, Addr: "127.0.0.1:" + vars[p+"PORT"], PID: pid, Log: vars[p+"LOG"], Config: vars[p+"CONFIG"]}
		if vars[p+"PORT"] == "" || n.Config == "" {
			t.Fatalf("%s/env names no node %d", state, id)
		}
		c.Nodes = append(c.Nodes, n)
	}
	for _, b := range c.Bootstrap {
		if host, _, err := net.SplitHostPort(b); err != nil || host != "127.0.0.1" {
			t.Fatalf("%s/env: bootstrap %q is not on 127.0.0.1; these tests only talk to this machine", state, b)
		}
	}
	return c
}

// readEnvFile sources a kafka-up env file in a clean bash and returns its TXNSCOPE_KAFKA_*
// variables (it quotes values as bash does, so bash reads it).
func readEnvFile(path string) (map[string]string, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	cmd := exec.Command("bash", "-c", `source "$1" && for v in $(compgen -v TXNSCOPE_KAFKA_); do printf '%s=%s\n' "$v" "${!v}"; done`, "_", path)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("sourcing %s: %v: %s", path, err, strings.TrimSpace(errb.String()))
	}
	vars := map[string]string{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			vars[k] = v
		}
	}
	return vars, sc.Err()
}

// Cluster3Broker runs `scripts/kafka-broker ID ACTION` (stop, start, pause, resume) on the
// three-node cluster and returns how long it took; it fails the test if the script does.
func Cluster3Broker(ctx context.Context, t testing.TB, id int32, action string) time.Duration {
	t.Helper()
	took, out, err := cluster3Script(ctx, id, action)
	if err != nil {
		t.Fatalf("scripts/kafka-broker %d %s: %v\n%s", id, action, err, out)
	}
	t.Logf("scripts/kafka-broker %d %s: %s (%s)", id, action, strings.TrimSpace(out), took.Round(100*time.Millisecond))
	return took
}

func cluster3Script(ctx context.Context, id int32, action string) (time.Duration, string, error) {
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(filepath.Dir(file)), "scripts", "kafka-broker")
	cmd := exec.CommandContext(ctx, script, strconv.Itoa(int(id)), action)
	cmd.Env = append(os.Environ(), "TXNSCOPE_KAFKA_STATE="+os.Getenv(EnvCluster3State))
	start := time.Now()
	out, err := cmd.CombinedOutput()
	return time.Since(start), string(out), err
}

// Cluster3Heal makes every node run again, whatever a test left behind: resumes the paused ones
// and starts the stopped ones. Tests register it with t.Cleanup after they take the cluster,
// so that a failure half-way never leaves the next test a broken cluster.
func Cluster3Heal(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := ReadCluster3(t)
	for _, n := range c.Nodes {
		switch procState(n.PID, n.Config) {
		case "T":
			if _, out, err := cluster3Script(ctx, n.ID, "resume"); err != nil {
				t.Errorf("healing the cluster: resume %d: %v %s", n.ID, err, out)
			}
		case "":
			if _, out, err := cluster3Script(ctx, n.ID, "start"); err != nil {
				t.Errorf("healing the cluster: start %d: %v %s", n.ID, err, out)
			}
		}
	}
}

// procState is the state letter of pid (R, S, T, ...) while its command line names config, ""
// when no such process runs.
func procState(pid int, config string) string {
	if pid <= 0 {
		return ""
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !bytes.Contains(cmdline, []byte(config)) {
		return ""
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return ""
	}
	return string(stat[i+2])
}
