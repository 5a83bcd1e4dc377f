package integration

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// flinkEvent is one line FlinkLikeSink printed (kafka/flinklike): a kind, the transactional id it
// is about, and the rest of the fields.
type flinkEvent struct {
	At     time.Time
	Kind   string
	ID     string
	Fields []string
}

// int64Field parses the i-th field after the id.
func (e flinkEvent) int64Field(t *testing.T, i int) int64 {
	t.Helper()
	if i >= len(e.Fields) {
		t.Fatalf("event %q has no field %d", e, i)
	}
	v, err := strconv.ParseInt(e.Fields[i], 10, 64)
	if err != nil {
		t.Fatalf("event %q field %d: %v", e, i, err)
	}
	return v
}

func (e flinkEvent) String() string {
	return strings.TrimSpace(e.Kind + " " + e.ID + " " + strings.Join(e.Fields, " "))
}

// flinkJob is a running FlinkLikeSink process whose event lines the test follows.
type flinkJob struct {
	t    *testing.T
	name string
	cmd  *exec.Cmd
	// stdin stays open while the test runs: the program halts when it closes, so a test binary
	// that dies leaves no producer behind.
	stdin io.WriteCloser

	mu      sync.Mutex
	events  []flinkEvent
	stderr  bytes.Buffer
	changed chan struct{} // closed and replaced on every new line and on exit
	exited  bool
	exitErr error
}

// requireFlinkLike skips (or under CI=true fails) without Java and Maven, and builds the program
// once: scripts/flinklike caches it in ~/.cache/txnscope, so later calls return at once.
func requireFlinkLike(ctx context.Context, t *testing.T) {
	t.Helper()
	for _, tool := range []string{"java", "mvn"} {
		if _, err := exec.LookPath(tool); err != nil {
			msg := tool + " is not on PATH: the Flink-like producer (kafka/flinklike) needs Java 17 and Maven"
			if isCI() {
				t.Fatal("CI=true and " + msg)
			}
			t.Skip(msg)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute) // a first build downloads Maven plugins
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(repoRoot(t), "scripts", "flinklike"), "--build")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/flinklike --build: %v\n%s", err, out)
	}
}

// startFlink runs scripts/flinklike with args against bootstrap; the process is killed when the
// test ends.
func startFlink(t *testing.T, name, bootstrap string, args ...string) *flinkJob {
	t.Helper()
	all := append([]string{"--bootstrap", bootstrap, "--exit-on-stdin-eof"}, args...)
	return startScript(t, name, "flinklike", all, nil, nil)
}

// startScript runs scripts/<script> with all, reading its event lines; the process is killed when
// the test ends, and a failed test logs what it printed and, when tail is not nil, tail().
func startScript(t *testing.T, name, script string, all, env []string, tail func() string) *flinkJob {
	t.Helper()
	cmd := exec.Command(filepath.Join(repoRoot(t), "scripts", script), all...)
	cmd.Env = append(os.Environ(), env...)
	j := &flinkJob{t: t, name: name, cmd: cmd, changed: make(chan struct{})}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = lockedWriter{mu: &j.mu, w: &j.stderr}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s (scripts/%s): %v", name, script, err)
	}
	j.stdin = stdin
	go j.read(stdout)
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = stdin.Close()
		j.waitExit(context.Background())
		if t.Failed() {
			t.Logf("%s stdout:\n%s\n%s stderr:\n%s", name, j.transcript(), name, j.stderrText())
			if tail != nil {
				t.Logf("%s log (last lines):\n%s", name, tail())
			}
		}
	})
	t.Logf("%s: scripts/%s %s (pid %d)", name, script, strings.Join(all, " "), cmd.Process.Pid)
	return j
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (j *flinkJob) read(stdout io.Reader) {
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		e := flinkEvent{At: time.Now(), Kind: f[0]}
		if len(f) > 1 {
			e.ID, e.Fields = f[1], f[2:]
		}
		j.mu.Lock()
		j.events = append(j.events, e)
		j.notifyLocked()
		j.mu.Unlock()
	}
	err := j.cmd.Wait()
	j.mu.Lock()
	j.exited, j.exitErr = true, err
	j.notifyLocked()
	j.mu.Unlock()
}

func (j *flinkJob) notifyLocked() {
	close(j.changed)
	j.changed = make(chan struct{})
}

// waitFor blocks until the job printed an event ok accepts, and returns the first such event.
// It fails the test when the job exits first or ctx ends.
func (j *flinkJob) waitFor(ctx context.Context, what string, ok func(flinkEvent) bool) flinkEvent {
	j.t.Helper()
	for {
		j.mu.Lock()
		for _, e := range j.events {
			if ok(e) {
				j.mu.Unlock()
				return e
			}
		}
		exited, exitErr, changed := j.exited, j.exitErr, j.changed
		j.mu.Unlock()
		if exited {
			j.t.Fatalf("%s exited (%v) before %s; it printed:\n%s\nstderr:\n%s", j.name, exitErr, what, j.transcript(), j.stderrText())
		}
		select {
		case <-changed:
		case <-ctx.Done():
			j.t.Fatalf("waiting for %s to print %s: %v; it printed:\n%s", j.name, what, ctx.Err(), j.transcript())
		}
	}
}

// waitEvent waits for the event kind about id.
func (j *flinkJob) waitEvent(ctx context.Context, kind, id string) flinkEvent {
	j.t.Helper()
	return j.waitFor(ctx, kind+" "+id, func(e flinkEvent) bool { return e.Kind == kind && e.ID == id })
}

// waitExit waits for the process to end and returns its exit status (-1 when killed by a signal).
func (j *flinkJob) waitExit(ctx context.Context) int {
	for {
		j.mu.Lock()
		exited, err, changed := j.exited, j.exitErr, j.changed
		j.mu.Unlock()
		if exited {
			var ee *exec.ExitError
			switch {
			case err == nil:
				return 0
			case errors.As(err, &ee):
				return ee.ExitCode()
			}
			return -1
		}
		select {
		case <-changed:
		case <-ctx.Done():
			j.t.Errorf("%s did not exit: %v", j.name, ctx.Err())
			return -1
		}
	}
}

// kill9 kills the JVM the way a crashing TaskManager dies: no commit, no abort, no close.
// scripts/flinklike execs java, so the process is the producer itself.
func (j *flinkJob) kill9(ctx context.Context) {
	j.t.Helper()
	if err := j.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		j.t.Fatalf("kill -9 %s: %v", j.name, err)
	}
	if code := j.waitExit(ctx); code != -1 {
		j.t.Errorf("%s exited with status %d after kill -9, want killed by the signal", j.name, code)
	}
}

// all returns the events of one kind, in order.
func (j *flinkJob) all(kind string) []flinkEvent {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []flinkEvent
	for _, e := range j.events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

func (j *flinkJob) transcript() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	var b strings.Builder
	for _, e := range j.events {
		fmt.Fprintf(&b, "  %s  %s\n", e.At.Format("15:04:05.000"), e)
	}
	return b.String()
}

func (j *flinkJob) stderrText() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.stderr.String()
}

// flinkID is the transactional id FlinkLikeSink (and Flink's KafkaSink) uses.
func flinkID(prefix string, subtask int, checkpoint int64) string {
	return fmt.Sprintf("%s-%d-%d", prefix, subtask, checkpoint)
}
