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
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/txnscope/txnscope/internal/jsonout"
	"github.com/txnscope/txnscope/model"
)

// TestStreamsRealTwoInstances runs a real Kafka Streams application (kafka/streamsapp:
// kafka-streams 4.4.0, exactly_once_v2, a count by key into a state store) as two instances of
// two threads each, fed a steady input stream, and checks what txnscope shows of it:
//
//   - healthy: one Streams job named by the application.id, its four threads
//     (<app>-<processUUID>-<thread>) as units, no problem, no stuck group (the downstream reader
//     waits at each transaction, inside the commit interval);
//   - one instance killed with kill -9, its two transactions open: they stay Ongoing until their
//     transaction.timeout.ms (Streams' 10 s), pinning the output and changelog partitions, while
//     the other instance takes the tasks over at the next rebalance; still one job, four units,
//     and one job problem, "instance gone", naming the killed process and its ids (nothing
//     "lingering", no shared prefix);
//   - the instance back on its state directory: the same process UUID, so the same four ids, a
//     rebalance that hands it tasks again, and no problem;
//   - the instance back on a fresh state directory: a new process UUID and two new ids, the old
//     ones left as idle units (six units for four threads: a limit of what the ids can tell).
//
// docs/streams.md tells what real Streams did here and what txnscope shows.
func TestStreamsRealTwoInstances(t *testing.T) {
	t.Parallel()
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	requireStreamsApp(ctx, t)
	bin := buildTxnscope(ctx, t)
	const partitions = 4
	app, args := streamsAppOn(ctx, t, bootstrap, partitions)

	sc := newScope(t, bootstrap)
	sc.poll(ctx)
	stateA, stateB := t.TempDir(), t.TempDir()
	a := startStreams(t, "instance-a", bootstrap, args(stateA)...)
	b := startStreams(t, "instance-b", bootstrap, args(stateB)...)

	// (a) Healthy: both instances RUNNING with all four tasks spread over their four threads,
	// and every thread committing.
	started := time.Now()
	idsA, idsB := a.txnIDs(ctx, 2), b.txnIDs(ctx, 2)
	all := append(slices.Clone(idsA), idsB...)
	waitStreamsTasks(ctx, t, partitions, a, b)
	for _, id := range all {
		owner := a
		if slices.Contains(idsB, id) {
			owner = b
		}
		owner.waitFor(ctx, "two commits of "+id, 0, func(e streamsEvent) bool { return e.is("committed", id) && e.field(1) == "2" })
	}
	t.Logf("healthy after %s: ids %v", time.Since(started).Round(time.Millisecond), all)
	for _, id := range all {
		if !strings.HasPrefix(id, app+"-") {
			t.Fatalf("transactional id %s: want <application.id>-<processUUID>-<thread>", id)
		}
		if m := model.JobOf(id); m.Job != (model.JobID{Family: model.StreamsApp, Name: app}) {
			t.Errorf("JobOf(%s) = %+v, want the Streams app %s", id, m, app)
		}
	}
	units := streamsUnits(app, all)
	// Several polls in a row, so that a problem that shows on some polls only (as POOLING's
	// lingering did on Flink) is caught.
	for i := range 10 {
		snap := sc.poll(ctx)
		job := streamsJob(t, snap, sc.hist, app)
		checkStreamsUnits(t, fmt.Sprintf("healthy poll %d", i), job, units)
		if ps := job.Problems(snap, model.Query{}, time.Now()); len(ps) > 0 {
			t.Errorf("healthy poll %d: problems %+v", i, ps)
		}
		// The downstream group waits at each transaction for up to a commit interval: not stuck.
		if len(job.StuckGroups) > 0 {
			t.Errorf("healthy poll %d: stuck groups %v behind transactions inside the commit interval", i, job.StuckGroups)
		}
		for _, id := range all {
			if tx := txnOf(t, snap, id); tx.TimeoutMs != 10000 {
				t.Errorf("%s: transaction.timeout.ms %d, want Streams' 10000 under exactly_once_v2", id, tx.TimeoutMs)
			}
		}
		sleepCtx(ctx, 300*time.Millisecond)
	}
	js := snapshotJSON(ctx, t, bin, bootstrap)
	checkStreamsJSON(t, "healthy", js, app, units, all, nil)

	// (b) kill -9 instance a with both its transactions open. SIGSTOP first, so that what the
	// snapshot shows is what the killed JVM leaves: a stopped producer commits nothing.
	var dead []model.Txn
	for attempt := 0; ; attempt++ {
		a.signal(syscall.SIGSTOP)
		snap := sc.poll(ctx)
		dead = dead[:0]
		for _, id := range idsA {
			if tx := txnOf(t, snap, id); tx.State == model.Ongoing {
				dead = append(dead, tx)
			}
		}
		if len(dead) == len(idsA) {
			break
		}
		if attempt == 20 {
			t.Fatalf("instance a never had both transactions open at once: %s", sc.describe(snap))
		}
		a.signal(syscall.SIGCONT)
		sleepCtx(ctx, 150*time.Millisecond)
	}
	procA, procB := streamsProcess(app, idsA[0]), streamsProcess(app, idsB[0])
	markB := b.mark()
	a.kill9(ctx)
	killedAt := time.Now()
	var deadline time.Time
	for _, tx := range dead {
		deadline = streamsLater(deadline, tx.StartTime().Add(tx.Timeout()))
	}
	t.Logf("killed instance a at %s with %d open transactions; their timeouts run out by %s (in %s)",
		killedAt.Format("15:04:05.000"), len(dead), deadline.Format("15:04:05.000"), deadline.Sub(killedAt).Round(time.Millisecond))

	// While they are open: one job, four units, the two open, no job problem; the killed ids'
	// transactions say how far they are into their timeout.
	seen := map[string]time.Duration{} // what txnscope showed, first seen after the kill
	note := func(what string) {
		if _, ok := seen[what]; !ok {
			seen[what] = time.Since(killedAt).Round(100 * time.Millisecond)
		}
	}
	jsonWhileOpen := false
	snap := sc.until(ctx, "the killed instance's transactions ended", func(snap *model.Snapshot) bool {
		job := streamsJob(t, snap, sc.hist, app)
		checkStreamsUnits(t, "after the kill", job, units)
		// The one job problem: instance a gone, named by its process id, once its threads have
		// been quiet for the app's transaction.timeout.ms while b commits.
		for _, p := range job.Problems(snap, model.Query{}, time.Now()) {
			if p.Kind != model.ProblemInstanceGone || !strings.Contains(p.Why, procA) {
				t.Errorf("after the kill (+%s): job problem %s: %s", time.Since(killedAt).Round(time.Millisecond), p.Kind, p.What)
				continue
			}
			note("problem " + string(p.Kind) + " (open)")
		}
		if len(job.Lingering) > 0 {
			t.Errorf("after the kill: lingering %v", job.Lingering)
		}
		for _, id := range job.Open {
			if slices.Contains(idsA, id) {
				note("open " + id)
			}
		}
		for _, g := range job.StuckGroups {
			note("stuck group " + g)
		}
		for _, p := range job.Pinned {
			if slices.Contains(idsA, p.ID) {
				note(fmt.Sprintf("pins %s-%d", p.Topic, p.Partition))
			}
		}
		open := 0
		for _, id := range idsA {
			tx := txnOf(t, snap, id)
			for _, p := range model.Problems(tx, sc.hist.Stats(id), snap, model.Query{}, time.Now()) {
				note(id + ": " + p)
			}
			if tx.State.Open() {
				open++
			}
		}
		if open == len(idsA) && !jsonWhileOpen && time.Now().Before(deadline.Add(-3*time.Second)) {
			jsonWhileOpen = true
			js := snapshotJSON(ctx, t, bin, bootstrap)
			checkStreamsJSON(t, "killed, open", js, app, units, all, []model.ProblemKind{model.ProblemInstanceGone})
			j := streamsJobJSON(t, js, app)
			for _, id := range idsA {
				if !slices.Contains(j.Open, id) {
					t.Errorf("snapshot json while the killed instance's transactions are open: job open %v, want %s among them", j.Open, id)
				}
			}
		}
		return open == 0
	})
	endedAt := time.Since(killedAt)
	t.Logf("the killed instance's transactions ended %s after the kill (%s after their timeout ran out)",
		endedAt.Round(time.Millisecond), time.Since(deadline).Round(time.Millisecond))
	if time.Now().Before(deadline) {
		t.Errorf("the killed instance's transactions ended %s before their timeout ran out: who ended them?", time.Until(deadline))
	}
	for _, id := range idsA {
		tx := txnOf(t, snap, id)
		t.Logf("%s after the kill: %s epoch %d, events %v", id, tx.State, tx.ProducerEpoch, sc.kinds(id))
		if tx.State != model.CompleteAbort && tx.State != model.PrepareAbort {
			t.Errorf("%s: %s, want aborted at its timeout", id, tx.State)
		}
	}
	if !jsonWhileOpen {
		t.Errorf("no snapshot -o json was taken while the killed instance's transactions were open")
	}
	// Instance b takes the four tasks once the group coordinator gives up on a (session.timeout.ms).
	tookOver := b.waitFor(ctx, "instance b to hold all four tasks", markB, func(e streamsEvent) bool {
		return e.Kind == "state" && e.field(0) == "RUNNING" && len(b.activeTasks()) == partitions
	})
	if reb, ok := b.first(markB, func(e streamsEvent) bool { return e.Kind == "state" && e.field(0) == "REBALANCING" }); ok {
		t.Logf("instance b: REBALANCING %s after the kill, RUNNING with all tasks %s after it",
			reb.At.Sub(killedAt).Round(time.Millisecond), tookOver.At.Sub(killedAt).Round(time.Millisecond))
	}
	for _, id := range idsB {
		b.waitFor(ctx, "a commit of "+id+" after the takeover", b.mark(), func(e streamsEvent) bool { return e.is("committed", id) })
	}
	snap = sc.poll(ctx)
	job := streamsJob(t, snap, sc.hist, app)
	checkStreamsUnits(t, "after the takeover", job, units)
	// Its transactions timed out and b runs its tasks: instance a is still gone, and said so.
	if ps := job.Problems(snap, model.Query{}, time.Now()); len(ps) != 1 || ps[0].Kind != model.ProblemInstanceGone ||
		!strings.Contains(ps[0].Why, procA) || !strings.Contains(ps[0].Why, idsA[0]) || strings.Contains(ps[0].Why, procB) {
		t.Errorf("after the takeover: problems %+v, want instance %s gone, its ids named", ps, procA)
	} else {
		note("after the takeover: " + ps[0].What)
	}
	fencesAfterKill := job.Fences5m
	note(fmt.Sprintf("after the takeover: fences_5m %d aborts_5m %d commits_5m %d", job.Fences5m, job.Aborts5m, job.Commits5m))
	for _, id := range idsA {
		for _, p := range model.Problems(txnOf(t, snap, id), sc.hist.Stats(id), snap, model.Query{}, time.Now()) {
			note("after the takeover: " + id + ": " + p)
		}
	}
	js = snapshotJSON(ctx, t, bin, bootstrap)
	// The snapshot rests on the log's last hour, as the TUI does: it says the same.
	checkStreamsJSON(t, "after the takeover", js, app, units, all, []model.ProblemKind{model.ProblemInstanceGone})
	if j := streamsJobJSON(t, js, app); len(j.Problems) != 1 || !strings.Contains(j.Problems[0].Why, procA) {
		t.Errorf("after the takeover: snapshot json problems %+v, want instance %s gone, as the TUI says", j.Problems, procA)
	}

	// (c) Instance a back on its state directory: Streams keeps its process UUID there, so the
	// restarted instance has the same transactional ids; the group rebalances and hands it tasks.
	markB = b.mark()
	restartedAt := time.Now()
	a2 := startStreams(t, "instance-a-restarted", bootstrap, args(stateA)...)
	idsA2 := a2.txnIDs(ctx, 2)
	if !streamsSameSet(idsA2, idsA) {
		t.Errorf("restarted on its state directory, instance a uses ids %v, want its old %v", idsA2, idsA)
	}
	waitStreamsTasks(ctx, t, partitions, a2, b)
	for _, id := range idsA2 {
		a2.waitFor(ctx, "a commit of "+id, 0, func(e streamsEvent) bool { return e.is("committed", id) })
	}
	back := time.Since(restartedAt)
	if reb, ok := b.first(markB, func(e streamsEvent) bool { return e.Kind == "state" && e.field(0) == "REBALANCING" }); ok {
		t.Logf("restart: instance b REBALANCING %s after it, both instances committing with tasks split %v / %v after %s",
			reb.At.Sub(restartedAt).Round(time.Millisecond), a2.activeTasks(), b.activeTasks(), back.Round(time.Millisecond))
	}
	// Ids of a process UUID that is gone stay until transactional.id.expiration.ms: they are
	// units too, idle ones.
	all2 := streamsDedup(append(slices.Clone(all), idsA2...))
	units2 := streamsUnits(app, all2)
	for i := range 10 {
		snap := sc.poll(ctx)
		job := streamsJob(t, snap, sc.hist, app)
		checkStreamsUnits(t, fmt.Sprintf("restarted poll %d", i), job, units2)
		if ps := job.Problems(snap, model.Query{}, time.Now()); len(ps) > 0 {
			t.Errorf("restarted poll %d: problems %+v", i, ps)
		}
		sleepCtx(ctx, 300*time.Millisecond)
	}
	snap = sc.poll(ctx)
	job = streamsJob(t, snap, sc.hist, app)
	// The restarted instance's InitProducerId comes after the timeout's abort: no fence, and the
	// ids' last outcome is a commit again.
	if job.Fences5m != fencesAfterKill {
		t.Errorf("after the restart: fences_5m %d, was %d after the kill: the restart fenced nothing", job.Fences5m, fencesAfterKill)
	}
	for _, id := range idsA2 {
		st := sc.hist.Stats(id)
		t.Logf("%s after the restart: events %v, last %s", id, sc.kinds(id), st.Last)
		// A commit and the next transaction's start between two polls
		// (transaction version 2: Ongoing at an epoch two higher) is
		// "ended": txnscope does not say commit where it did not see one.
		if st.Last != model.Committed && st.Last != model.Ended {
			t.Errorf("%s after the restart: last outcome %s, want committed (or ended, between two polls)", id, st.Last)
		}
		if ps := model.Problems(txnOf(t, snap, id), st, snap, model.Query{}, time.Now()); len(ps) > 0 {
			t.Errorf("%s after the restart: problems %q", id, ps)
		}
	}
	js = snapshotJSON(ctx, t, bin, bootstrap)
	checkStreamsJSON(t, "restarted", js, app, units2, all2, nil)

	// (d) Instance a again, stopped cleanly and started on a fresh state directory, as a pod
	// without a persistent volume is: a new process UUID, two new ids. The old ones stay, idle,
	// until transactional.id.expiration.ms (7 days by default), and txnscope counts them as units.
	a2.signal(syscall.SIGTERM)
	a2.waitFor(ctx, "closed", 0, func(e streamsEvent) bool { return e.Kind == "closed" })
	a3 := startStreams(t, "instance-a-fresh", bootstrap, args(t.TempDir())...)
	idsA3 := a3.txnIDs(ctx, 2)
	if streamsSameSet(idsA3, idsA) {
		t.Fatalf("on a fresh state directory instance a kept its ids %v", idsA3)
	}
	waitStreamsTasks(ctx, t, partitions, a3, b)
	for _, id := range idsA3 {
		a3.waitFor(ctx, "a commit of "+id, 0, func(e streamsEvent) bool { return e.is("committed", id) })
	}
	all3 := streamsDedup(append(slices.Clone(all2), idsA3...))
	snap = sc.poll(ctx)
	job = streamsJob(t, snap, sc.hist, app)
	checkStreamsUnits(t, "fresh state directory", job, streamsUnits(app, all3))
	if ps := job.Problems(snap, model.Query{}, time.Now()); len(ps) > 0 {
		t.Errorf("fresh state directory: problems %+v", ps)
	}
	for _, u := range job.Units {
		t.Logf("fresh state directory: unit %s last commit %s ago, open %v",
			u.Name, time.Since(u.LastCommit).Round(100*time.Millisecond), u.Open)
	}

	var lines []string
	for what, at := range seen {
		lines = append(lines, fmt.Sprintf("+%s %s", at, what))
	}
	sort.Strings(lines)
	t.Logf("txnscope after the kill (first seen):\n  %s", strings.Join(lines, "\n  "))
}

// streamsAppOn makes the app's input and output topics of partitions each, feeds the input, reads
// the output as a read_committed group (<app>-downstream), and returns the application id and the
// arguments of one instance of two threads on a state directory. No record cache: with Streams'
// default one the counts wait in it until the commit, and a transaction is open only for the few
// milliseconds of the commit itself, so a kill -9 would almost never leave one open.
func streamsAppOn(ctx context.Context, t *testing.T, bootstrap string, partitions int32) (string, func(state string) []string) {
	t.Helper()
	adm := newAdmin(t, bootstrap)
	in := topicWith(ctx, t, adm, partitions)
	out := topicWith(ctx, t, adm, partitions)
	app := name(t, "app")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		_, _ = adm.DeleteTopic(ctx, app+"-counts-changelog")
	})
	streamsFeed(ctx, t, bootstrap, in)
	streamsDownstream(ctx, t, bootstrap, out, app+"-downstream")
	return app, func(state string) []string {
		return []string{"--application-id", app, "--input", in, "--output", out, "--threads", "2",
			"--commit-interval-ms", "1000", "--cache-max-bytes", "0", "--state-dir", state}
	}
}

// requireStreamsApp skips (or under CI=true fails) without Java and Maven, and builds the app
// once: scripts/streamsapp caches it in ~/.cache/txnscope, so later calls return at once.
func requireStreamsApp(ctx context.Context, t *testing.T) {
	t.Helper()
	for _, tool := range []string{"java", "mvn"} {
		if _, err := exec.LookPath(tool); err != nil {
			msg := tool + " is not on PATH: the Kafka Streams app (kafka/streamsapp) needs Java 17 and Maven"
			if isCI() {
				t.Fatal("CI=true and " + msg)
			}
			t.Skip(msg)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute) // a first build downloads Streams and Maven plugins
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(repoRoot(t), "scripts", "streamsapp"), "--build")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/streamsapp --build: %v\n%s", err, out)
	}
}

// streamsEvent is one line StreamsApp printed: a kind and its fields (see StreamsApp's doc).
type streamsEvent struct {
	At     time.Time
	Kind   string
	Fields []string
}

func (e streamsEvent) field(i int) string {
	if i < len(e.Fields) {
		return e.Fields[i]
	}
	return ""
}

func (e streamsEvent) is(kind, id string) bool { return e.Kind == kind && e.field(0) == id }

// streamsInstance is a running StreamsApp JVM whose event lines the test follows.
type streamsInstance struct {
	t     *testing.T
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser // open while the test runs: the app halts when it closes

	mu      sync.Mutex
	events  []streamsEvent
	stderr  bytes.Buffer
	changed chan struct{} // closed and replaced on every new line and on exit
	exited  bool
	exitErr error
}

// startStreams runs scripts/streamsapp against bootstrap; the JVM is killed when the test ends.
func startStreams(t *testing.T, name, bootstrap string, args ...string) *streamsInstance {
	t.Helper()
	all := append([]string{"--bootstrap", bootstrap, "--exit-on-stdin-eof"}, args...)
	cmd := exec.Command(filepath.Join(repoRoot(t), "scripts", "streamsapp"), all...)
	cmd.Env = os.Environ()
	s := &streamsInstance{t: t, name: name, cmd: cmd, changed: make(chan struct{})}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = lockedWriter{mu: &s.mu, w: &s.stderr}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s (scripts/streamsapp): %v", name, err)
	}
	s.stdin = stdin
	go s.read(stdout)
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = stdin.Close()
		s.waitExit()
		if t.Failed() {
			t.Logf("%s stdout (commits left out):\n%s\n%s stderr:\n%s", name, s.transcript(), name, s.stderrText())
		}
	})
	t.Logf("%s: scripts/streamsapp %s (pid %d)", name, strings.Join(all, " "), cmd.Process.Pid)
	return s
}

func (s *streamsInstance) read(stdout io.Reader) {
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		s.mu.Lock()
		s.events = append(s.events, streamsEvent{At: time.Now(), Kind: f[0], Fields: f[1:]})
		s.notifyLocked()
		s.mu.Unlock()
	}
	err := s.cmd.Wait()
	s.mu.Lock()
	s.exited, s.exitErr = true, err
	s.notifyLocked()
	s.mu.Unlock()
}

func (s *streamsInstance) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// mark is the number of lines printed so far, for waitFor and first to look only at later ones.
func (s *streamsInstance) mark() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.events)
}

// first is the first event from index from on that ok accepts.
func (s *streamsInstance) first(from int, ok func(streamsEvent) bool) (streamsEvent, bool) {
	s.mu.Lock()
	// A copy, so that ok may call the instance's other methods.
	events := slices.Clone(s.events[min(from, len(s.events)):])
	s.mu.Unlock()
	for _, e := range events {
		if ok(e) {
			return e, true
		}
	}
	return streamsEvent{}, false
}

// waitFor blocks until the instance printed, from line from on, an event ok accepts. It fails
// the test when the instance exits first or ctx ends.
func (s *streamsInstance) waitFor(ctx context.Context, what string, from int, ok func(streamsEvent) bool) streamsEvent {
	s.t.Helper()
	for {
		if e, found := s.first(from, ok); found {
			return e
		}
		s.mu.Lock()
		exited, exitErr, changed := s.exited, s.exitErr, s.changed
		s.mu.Unlock()
		if exited {
			s.t.Fatalf("%s exited (%v) before %s; it printed:\n%s\nstderr:\n%s", s.name, exitErr, what, s.transcript(), s.stderrText())
		}
		select {
		case <-changed:
		case <-ctx.Done():
			s.t.Fatalf("waiting for %s to print %s: %v; it printed:\n%s", s.name, what, ctx.Err(), s.transcript())
		}
	}
}

// txnIDs waits for the instance's n thread producers and returns their transactional ids.
func (s *streamsInstance) txnIDs(ctx context.Context, n int) []string {
	s.t.Helper()
	var ids []string
	s.waitFor(ctx, fmt.Sprintf("%d producers", n), 0, func(e streamsEvent) bool {
		if e.Kind == "producer" && !slices.Contains(ids, e.field(1)) {
			ids = append(ids, e.field(1))
		}
		return len(ids) == n
	})
	slices.Sort(ids)
	return ids
}

// activeTasks are the tasks the instance's threads hold, by their latest thread lines.
func (s *streamsInstance) activeTasks() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	last := map[string]string{}
	for _, e := range s.events {
		if e.Kind == "thread" {
			last[e.field(0)] = strings.TrimPrefix(e.field(2), "active=")
		}
	}
	var tasks []string
	for _, a := range last {
		if a != "-" {
			tasks = append(tasks, strings.Split(a, ",")...)
		}
	}
	slices.Sort(tasks)
	return tasks
}

func (s *streamsInstance) running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.events) - 1; i >= 0; i-- {
		if e := s.events[i]; e.Kind == "state" {
			return e.field(0) == "RUNNING"
		}
	}
	return false
}

func (s *streamsInstance) signal(sig syscall.Signal) {
	s.t.Helper()
	if err := s.cmd.Process.Signal(sig); err != nil {
		s.t.Fatalf("%s to %s: %v", sig, s.name, err)
	}
}

// kill9 kills the JVM the way a crashed host does: no commit, no abort, no leaving the group.
// scripts/streamsapp execs java, so the process is the Streams instance itself.
func (s *streamsInstance) kill9(ctx context.Context) {
	s.t.Helper()
	s.signal(syscall.SIGKILL)
	done := make(chan int, 1)
	go func() { done <- s.waitExit() }()
	select {
	case code := <-done:
		if code != -1 {
			s.t.Errorf("%s exited with status %d after kill -9, want killed by the signal", s.name, code)
		}
	case <-ctx.Done():
		s.t.Fatalf("%s did not die after kill -9", s.name)
	}
}

// waitExit waits for the process to end and returns its exit status (-1 when killed by a signal).
func (s *streamsInstance) waitExit() int {
	for {
		s.mu.Lock()
		exited, err, changed := s.exited, s.exitErr, s.changed
		s.mu.Unlock()
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
		<-changed
	}
}

func (s *streamsInstance) transcript() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	commits := 0
	for _, e := range s.events {
		if e.Kind == "committed" {
			commits++
			continue
		}
		fmt.Fprintf(&b, "  %s  %s %s\n", e.At.Format("15:04:05.000"), e.Kind, strings.Join(e.Fields, " "))
	}
	fmt.Fprintf(&b, "  (%d commits)\n", commits)
	return b.String()
}

func (s *streamsInstance) stderrText() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

// waitStreamsTasks waits until the instances are RUNNING and hold the n tasks 0_0 … 0_(n-1) between
// them, each task once.
func waitStreamsTasks(ctx context.Context, t *testing.T, n int, insts ...*streamsInstance) {
	t.Helper()
	var want []string
	for p := range n {
		want = append(want, fmt.Sprintf("0_%d", p))
	}
	for {
		var got []string
		running := true
		for _, s := range insts {
			got = append(got, s.activeTasks()...)
			running = running && s.running()
		}
		slices.Sort(got)
		if running && slices.Equal(got, want) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for tasks %v over %d instances: have %v", want, len(insts), got)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// streamsFeed writes a steady keyed stream to every partition of topic (about 100 records a second,
// 20 keys) until the test ends: a non-transactional producer, like most that feed a Streams app.
func streamsFeed(ctx context.Context, t *testing.T, bootstrap, topic string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(0))
	if err != nil {
		t.Fatalf("feeder: %v", err)
	}
	fctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-fctx.Done():
				return
			case <-tick.C:
			}
			cl.Produce(fctx, &kgo.Record{Key: fmt.Appendf(nil, "k%02d", i%20), Value: fmt.Appendf(nil, "v%d", i)}, nil)
		}
	}()
	t.Cleanup(func() {
		stop()
		<-done
		cl.Close()
	})
}

// streamsDownstream runs a read_committed group consumer of topic, committing what it read, as a
// downstream reader of the Streams app's output would.
func streamsDownstream(ctx context.Context, t *testing.T, bootstrap, topic, group string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.AutoCommitInterval(500*time.Millisecond))
	if err != nil {
		t.Fatalf("downstream consumer: %v", err)
	}
	cctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for cctx.Err() == nil {
			cl.PollFetches(cctx)
		}
	}()
	t.Cleanup(func() {
		stop()
		<-done
		cl.Close()
	})
}

// streamsUnits are the unit names txnscope gives the Streams ids: <processUUID>-<thread>.
func streamsUnits(app string, ids []string) []string {
	var out []string
	for _, id := range ids {
		out = append(out, strings.TrimPrefix(id, app+"-"))
	}
	slices.Sort(out)
	return out
}

// streamsJob is the one job txnscope makes of the app's ids; no other job may hold any of them.
func streamsJob(t *testing.T, snap *model.Snapshot, h *model.History, app string) model.Job {
	t.Helper()
	var found []model.Job
	for _, j := range model.Jobs(snap, h, time.Now()) {
		if strings.Contains(j.ID.Name, app) {
			found = append(found, j)
		}
	}
	if len(found) != 1 || found[0].ID != (model.JobID{Family: model.StreamsApp, Name: app}) {
		var ids []model.JobID
		for _, j := range found {
			ids = append(ids, j.ID)
		}
		t.Fatalf("jobs of %s: %v, want one Streams job", app, ids)
	}
	return found[0]
}

func checkStreamsUnits(t *testing.T, when string, job model.Job, want []string) {
	t.Helper()
	var got []string
	for _, u := range job.Units {
		got = append(got, u.Name)
		if u.Subtask != -1 || len(u.Lingering) > 0 || u.Behind {
			t.Errorf("%s: unit %+v: a Streams thread has no subtask, nothing lingering, nothing behind", when, u)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("%s: units %v, want the threads %v", when, got, want)
	}
	if job.IDs != len(want) {
		t.Errorf("%s: %d ids, want %d (one a thread)", when, job.IDs, len(want))
	}
}

func streamsJobJSON(t *testing.T, js jsonout.SnapshotJSON, app string) jsonout.JobJSON {
	t.Helper()
	var found []jsonout.JobJSON
	for _, j := range js.Jobs {
		if strings.Contains(j.Name, app) {
			found = append(found, j)
		}
	}
	if len(found) != 1 {
		t.Fatalf("snapshot json: %d jobs name %s, want one", len(found), app)
	}
	return found[0]
}

// checkStreamsJSON checks the app's job in `snapshot -o json`: one Streams job, its threads as
// subtasks without a number, no checkpoint, nothing lingering, no shared prefix, no problem but
// those allowed (the snapshot rests on the log's last hour, as the TUI does).
func checkStreamsJSON(t *testing.T, when string, js jsonout.SnapshotJSON, app string, units, ids []string, allowed []model.ProblemKind) {
	t.Helper()
	j := streamsJobJSON(t, js, app)
	if j.Family != model.StreamsApp || j.Name != app {
		t.Errorf("%s: snapshot json job %s/%s, want streams/%s", when, j.Family, j.Name, app)
	}
	var got []string
	for _, s := range j.Subtasks {
		got = append(got, s.Name)
		if s.Subtask != nil || s.NewestCheckpoint != nil || s.Behind || len(s.Lingering) > 0 {
			t.Errorf("%s: snapshot json subtask %+v", when, s)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, units) {
		t.Errorf("%s: snapshot json subtasks %v, want %v", when, got, units)
	}
	unexpected := slices.ContainsFunc(j.Problems, func(p jsonout.ProblemJSON) bool { return !slices.Contains(allowed, p.Kind) })
	if len(j.Lingering) > 0 || j.PrefixShared || unexpected || j.NewestCheckpoint != nil {
		t.Errorf("%s: snapshot json job lingering %v prefix_shared %v problems %+v newest_checkpoint %v",
			when, j.Lingering, j.PrefixShared, j.Problems, j.NewestCheckpoint)
	}
	for _, id := range ids {
		i := slices.IndexFunc(js.Transactions, func(x jsonout.TxnJSON) bool { return x.TransactionalID == id })
		if i < 0 {
			t.Errorf("%s: snapshot json: %s missing", when, id)
		}
	}
}

// streamsProcess is the process id in a thread's transactional id, <app>-<process>-<thread>.
func streamsProcess(app, id string) string {
	rest := strings.TrimPrefix(id, app+"-")
	return rest[:strings.LastIndexByte(rest, '-')]
}

func streamsSameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func streamsDedup(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return slices.Compact(s)
}

func streamsLater(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
