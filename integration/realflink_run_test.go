package integration

import (
	"context"
	"fmt"
	"github.com/txnscope/txnscope/internal/testutil"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Real Apache Flink (kafka/flinkjob, run through scripts/flinkjob): a MiniCluster in one JVM with a
// generated source feeding KafkaSink with EXACTLY_ONCE, in Flink 1.20.5 (connector 3.4.0-1.20) or
// 2.2.1 (connector 5.0.0-2.2). Its event lines (scripts/flinkjob --help) are read into the same
// flinkEvent as the imitation's: Kind, then ID is the job's name (its prefix, PREFIX#2 for a second
// job on one prefix), then the rest.

// realFlinkArgs are one run's options; zero values leave scripts/flinkjob's defaults.
type realFlinkArgs struct {
	Flink              string // "1.20" or "2.2"
	Topic              string
	Prefix             string
	Parallelism        int
	CheckpointInterval time.Duration
	TransactionTimeout time.Duration
	Naming             string // "incrementing" or "pooling" (2.2 only)
	CheckpointDir      string // retained checkpoints; a restart needs it
	Restore            string // a chk-N directory, or "latest" under CheckpointDir
	RecordsPerSecond   int
	CheckpointSleep    time.Duration // snapshotState sleeps this long: checkpoints that slow
	Jobs               int           // that many jobs of these settings in one MiniCluster
	Extra              []string      // more arguments, such as --job specs
	// S3 is the store an s3:// CheckpointDir is in (nil: none).
	S3 *testutil.S3
}

func (a realFlinkArgs) argv(bootstrap string) []string {
	out := []string{"--flink", a.Flink, "--bootstrap", bootstrap, "--exit-on-stdin-eof"}
	add := func(k, v string) { out = append(out, "--"+k, v) }
	ms := func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
	if a.Topic != "" {
		add("topic", a.Topic)
	}
	if a.Prefix != "" {
		add("prefix", a.Prefix)
	}
	if a.Parallelism > 0 {
		add("parallelism", strconv.Itoa(a.Parallelism))
	}
	if a.CheckpointInterval > 0 {
		add("checkpoint-interval-ms", ms(a.CheckpointInterval))
	}
	if a.TransactionTimeout > 0 {
		add("transaction-timeout-ms", ms(a.TransactionTimeout))
	}
	if a.Naming != "" {
		add("naming", a.Naming)
	}
	if a.CheckpointDir != "" {
		add("checkpoint-dir", a.CheckpointDir)
	}
	if a.Restore != "" {
		add("restore", a.Restore)
	}
	if a.RecordsPerSecond > 0 {
		add("records-per-second", strconv.Itoa(a.RecordsPerSecond))
	}
	if a.CheckpointSleep > 0 {
		add("checkpoint-sleep-ms", ms(a.CheckpointSleep))
	}
	if a.Jobs > 0 {
		add("jobs", strconv.Itoa(a.Jobs))
	}
	if a.S3 != nil {
		add("s3-endpoint", a.S3.URL)
	}
	return append(out, a.Extra...)
}

// realFlink is one running scripts/flinkjob JVM (a MiniCluster and its jobs).
type realFlink struct {
	*flinkJob
	bootstrap string
	args      realFlinkArgs
	logPath   string
}

// requireRealFlink skips (or under CI=true fails) without Java and Maven, and builds the job for
// version once: scripts/flinkjob caches it in ~/.cache/txnscope, so later calls return at once
// (.ci/run builds both versions before the tests).
func requireRealFlink(ctx context.Context, t *testing.T, version string) {
	t.Helper()
	for _, tool := range []string{"java", "mvn"} {
		if _, err := exec.LookPath(tool); err != nil {
			msg := tool + " is not on PATH: real Flink (kafka/flinkjob) needs Java 17 and Maven"
			if isCI() {
				t.Fatal("CI=true and " + msg)
			}
			t.Skip(msg)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute) // a first build downloads Flink
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(repoRoot(t), "scripts", "flinkjob"), "--build", "--flink", version)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/flinkjob --build --flink %s: %v\n%s", version, err, out)
	}
}

// startRealFlink runs scripts/flinkjob with a against bootstrap, its log in the test's temp dir.
// The JVM is killed when the test ends.
func startRealFlink(t *testing.T, name, bootstrap string, a realFlinkArgs) *realFlink {
	t.Helper()
	requireLoopback(t, bootstrap)
	logPath := filepath.Join(t.TempDir(), name+".log")
	r := &realFlink{bootstrap: bootstrap, args: a, logPath: logPath}
	var env []string
	if a.S3 != nil {
		env = a.S3.Env()
	}
	r.flinkJob = startScript(t, name, "flinkjob", append(a.argv(bootstrap), "--log-file", logPath), env, func() string { return r.logTail(40) })
	return r
}

// waitCheckpoints waits until job printed n completed checkpoints in this run and returns them.
func (r *realFlink) waitCheckpoints(ctx context.Context, job string, n int) []flinkEvent {
	r.t.Helper()
	r.waitUntil(ctx, fmt.Sprintf("%d completed checkpoints of %s", n, job), func() bool {
		return len(r.checkpoints(job)) >= n
	})
	return r.checkpoints(job)
}

// waitUntil blocks until cond, checked after every event line, holds. It fails the test when the
// JVM exits first or ctx ends. cond runs without the job's lock held, so it may read the events.
func (r *realFlink) waitUntil(ctx context.Context, what string, cond func() bool) {
	r.t.Helper()
	for {
		r.mu.Lock()
		changed := r.changed
		r.mu.Unlock()
		if cond() {
			return
		}
		r.mu.Lock()
		exited, exitErr := r.exited, r.exitErr
		r.mu.Unlock()
		if exited {
			r.t.Fatalf("%s exited (%v) before %s; it printed:\n%s\nstderr:\n%s", r.name, exitErr, what, r.transcript(), r.stderrText())
		}
		select {
		case <-changed:
		case <-ctx.Done():
			r.t.Fatalf("waiting for %s: %v; %s printed:\n%s", what, ctx.Err(), r.name, r.transcript())
		}
	}
}

// checkpoints are job's completed checkpoints so far ("checkpoint JOB ID completed PATH").
func (r *realFlink) checkpoints(job string) []flinkEvent {
	var out []flinkEvent
	for _, e := range r.all("checkpoint") {
		if e.ID == job {
			out = append(out, e)
		}
	}
	return out
}

// checkpointID is a "checkpoint" event's checkpoint id.
func checkpointID(t *testing.T, e flinkEvent) int64 { return e.int64Field(t, 0) }

// waitStatus waits until job's state is state ("status JOB STATE").
func (r *realFlink) waitStatus(ctx context.Context, job, state string) {
	r.t.Helper()
	r.waitFor(ctx, "status "+job+" "+state, func(e flinkEvent) bool {
		return e.Kind == "status" && e.ID == job && len(e.Fields) > 0 && e.Fields[0] == state
	})
}

// sigterm stops the JVM with SIGTERM (the MiniCluster is closed, its tasks cancelled) and returns
// its exit status (-1 when the signal killed it).
func (r *realFlink) sigterm(ctx context.Context) int {
	r.t.Helper()
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		r.t.Fatalf("kill -TERM %s: %v", r.name, err)
	}
	return r.waitExit(ctx)
}

// restart starts a new JVM with the same arguments, restoring from restore ("latest": the newest
// retained checkpoint under the run's checkpoint dir; "": no state, a fresh start), with change
// applied to the arguments.
func (r *realFlink) restart(name, restore string, change func(*realFlinkArgs)) *realFlink {
	r.t.Helper()
	a := r.args
	a.Restore = restore
	if change != nil {
		change(&a)
	}
	return startRealFlink(r.t, name, r.bootstrap, a)
}

// log is the run's log4j file (Flink's, the connector's and the Kafka client's INFO lines).
func (r *realFlink) log() string {
	b, err := os.ReadFile(r.logPath)
	if err != nil {
		return ""
	}
	return string(b)
}

func (r *realFlink) logTail(n int) string {
	lines := strings.Split(strings.TrimRight(r.log(), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
