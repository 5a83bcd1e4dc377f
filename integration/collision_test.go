package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/txnscope/txnscope/model"
)

// Scenario 4: two jobs with the same transactional-id prefix keep fencing each other, and
// txnscope flags the prefix; a single restart of one job (which fences its own leftovers
// once) is not flagged. See model/collision.go for the rule.

// sinkJob is a franz-go stand-in for the subtasks of a Flink KafkaSink job (EXACTLY_ONCE,
// INCREMENTING ids <prefix>-<subtask>-<checkpoint>): one transaction per checkpoint per
// subtask, on a fresh producer for each id, committed when the checkpoint completes.
type sinkJob struct {
	t         *testing.T
	name      string
	bootstrap string
	prefix    string
	tp        model.TopicPartition
	opts      []kgo.Opt

	fenced  atomic.Int32 // transactions this job lost to another producer
	commits atomic.Int32

	left []*kgo.Client // producers abandoned with their transaction open (killed)
}

func sinkID(prefix string, subtask int, checkpoint int64) string {
	return fmt.Sprintf("%s-%d-%d", prefix, subtask, checkpoint)
}

func (j *sinkJob) producer(id string) (*kgo.Client, error) {
	return kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(j.bootstrap),
		kgo.TransactionalID(id),
		kgo.TransactionTimeout(time.Minute),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		// A fenced producer must say so at once, not retry until the context ends.
		kgo.RetryTimeout(10 * time.Second),
	}, j.opts...)...)
}

func (j *sinkJob) write(ctx context.Context, cl *kgo.Client, id string) error {
	return cl.ProduceSync(ctx, &kgo.Record{Topic: j.tp.Topic, Partition: j.tp.Partition, Value: []byte(j.name + " " + id)}).FirstErr()
}

// open begins the transaction of one checkpoint and writes its first record (the
// producer's InitProducerId goes out here: this is where a collision fences the other job).
func (j *sinkJob) open(ctx context.Context, subtask int, cp int64) (*kgo.Client, error) {
	id := sinkID(j.prefix, subtask, cp)
	cl, err := j.producer(id)
	if err != nil {
		return nil, err
	}
	if err := cl.BeginTransaction(); err != nil {
		cl.Close()
		return nil, err
	}
	if err := j.write(ctx, cl, id); err != nil {
		cl.Close()
		return nil, err
	}
	return cl, nil
}

// checkpoint runs the transaction of checkpoint cp on subtask from opening until until:
// a record every 100 ms, then the commit. It reports whether another producer fenced it.
func (j *sinkJob) checkpoint(ctx context.Context, subtask int, cp int64, until time.Time) (fenced bool) {
	id := sinkID(j.prefix, subtask, cp)
	cl, err := j.open(ctx, subtask, cp)
	for err == nil && time.Now().Before(until) {
		sleepCtx(ctx, min(100*time.Millisecond, time.Until(until)))
		err = j.write(ctx, cl, id)
	}
	if err == nil {
		err = cl.EndTransaction(ctx, kgo.TryCommit)
	}
	if cl != nil {
		if ctx.Err() != nil {
			// The test is over: abort rather than leave the transaction to its timeout.
			actx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = cl.AbortBufferedRecords(actx)
			_ = cl.EndTransaction(actx, kgo.TryAbort)
			cancel()
		}
		cl.Close()
	}
	switch {
	case err == nil:
		j.commits.Add(1)
		return false
	case isFenced(err):
		j.fenced.Add(1)
		return true
	case ctx.Err() != nil:
		return false
	}
	j.t.Errorf("%s: %s: %v", j.name, id, err)
	return false
}

// abortLingering is what KafkaSink does when a job starts: for each subtask, initialize the
// ids from the restored checkpoint + 1 onwards until one was never used (epoch 0). Every
// transaction its previous run left open is aborted: fenced, once.
func (j *sinkJob) abortLingering(ctx context.Context, subtasks int, restored int64) {
	for s := range subtasks {
		for cp := restored + 1; ; cp++ {
			cl, err := j.producer(sinkID(j.prefix, s, cp))
			if err != nil {
				j.t.Fatalf("%s: %v", j.name, err)
			}
			_, epoch, err := cl.ProducerID(ctx)
			cl.Close()
			if err != nil {
				j.t.Fatalf("%s: InitProducerId for %s: %v", j.name, sinkID(j.prefix, s, cp), err)
			}
			if epoch == 0 {
				break
			}
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// prefixProblem is the collision line txnscope shows for id, "" when none.
func (s *scope) prefixProblem(snap *model.Snapshot, id string, now time.Time) string {
	tx, ok := snap.Txn(id)
	if !ok {
		return ""
	}
	for _, p := range model.Problems(tx, s.hist.Stats(id), snap, model.Query{}, now) {
		if strings.HasPrefix(p, "prefix ") {
			return p
		}
	}
	return ""
}

// openOf returns the ids of prefix that snap shows open.
func openOf(snap *model.Snapshot, prefix string) []string {
	var out []string
	for _, tx := range snap.Txns {
		if strings.HasPrefix(tx.ID, prefix+"-") && tx.State.Open() {
			out = append(out, tx.ID)
		}
	}
	return out
}

// takeoversOf lists the ids of prefix that txnscope saw taken over, in order.
func (s *scope) takeoversOf(prefix string) []string {
	var out []string
	for _, e := range s.events {
		if strings.HasPrefix(e.ID, prefix+"-") && model.IsTakeover(e) {
			out = append(out, strings.TrimPrefix(e.ID, prefix+"-"))
		}
	}
	return out
}

// takeoverKinds counts how the takeovers of prefix showed: fenced (the id seen idle after
// the fence) or ended (the new owner had already begun by the next poll).
func (s *scope) takeoverKinds(prefix string) map[model.EventKind]int {
	out := map[model.EventKind]int{}
	for _, e := range s.events {
		if strings.HasPrefix(e.ID, prefix+"-") && model.IsTakeover(e) {
			out[e.Kind]++
		}
	}
	return out
}

// TestCollisionFlagged: two jobs started with the same prefix share checkpoint numbers
// (one checkpoint a second) and so the same ids; at each checkpoint the one that opens the
// id second fences the other, which moves on to the next checkpoint. txnscope sees the
// takeovers and flags the prefix on its open ids.
func TestCollisionFlagged(t *testing.T) {
	t.Parallel()
	for _, cv := range clientVersions() {
		t.Run(cv.name, func(t *testing.T) {
			t.Parallel()
			testCollisionFlagged(t, cv.opts)
		})
	}
}

func testCollisionFlagged(t *testing.T, opts []kgo.Opt) {
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := newAdmin(t, bootstrap)
	tp := topicOn(ctx, t, adm)
	prefix := name(t, "orders-enricher")
	jobs := [2]*sinkJob{
		{t: t, name: "job-a", bootstrap: bootstrap, prefix: prefix, tp: tp, opts: opts},
		{t: t, name: "job-b", bootstrap: bootstrap, prefix: prefix, tp: tp, opts: opts},
	}
	sc := newScope(t, bootstrap)
	sc.poll(ctx)

	// The shared checkpoint clock. At each checkpoint the jobs take turns opening the id
	// first (sources ready at once) and second (350 ms later), so each fences the other in
	// turn and the first one's transaction is open long enough for a poll to see it.
	const interval = time.Second
	t0 := time.Now()
	jctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for cp := int64(1); jctx.Err() == nil; cp++ {
				start := t0.Add(time.Duration(cp-1) * interval)
				delay := 50 * time.Millisecond
				if (int(cp)+i)%2 == 0 {
					delay = 400 * time.Millisecond
				}
				sleepCtx(jctx, time.Until(start.Add(delay)))
				if jctx.Err() != nil {
					return
				}
				// Fenced or not, the job goes on with the next checkpoint's id.
				j.checkpoint(jctx, 0, cp, start.Add(interval-150*time.Millisecond))
			}
		}()
	}
	defer func() {
		stop()
		wg.Wait()
	}()

	var flagged, open string
	snap := sc.until(ctx, "the prefix flagged as shared", func(snap *model.Snapshot) bool {
		for _, id := range openOf(snap, prefix) {
			if p := sc.prefixProblem(snap, id, snap.TakenAt); p != "" {
				flagged, open = p, id
				return true
			}
		}
		return false
	})
	elapsed := time.Since(t0)
	stop()
	wg.Wait()

	a, b := jobs[0], jobs[1]
	t.Logf("flagged after %s: %q on %s; job-a fenced %d committed %d, job-b fenced %d committed %d; takeovers seen on %v as %v",
		elapsed.Round(100*time.Millisecond), flagged, open, a.fenced.Load(), a.commits.Load(), b.fenced.Load(), b.commits.Load(),
		sc.takeoversOf(prefix), sc.takeoverKinds(prefix))
	if a.fenced.Load() == 0 || b.fenced.Load() == 0 || a.commits.Load() == 0 || b.commits.Load() == 0 {
		t.Errorf("the jobs did not fence each other while both committing: a fenced %d committed %d, b fenced %d committed %d",
			a.fenced.Load(), a.commits.Load(), b.fenced.Load(), b.commits.Load())
	}
	var n int
	if _, err := fmt.Sscanf(flagged, "prefix "+prefix+" looks shared: %d fences in 5m", &n); err != nil || n < 3 {
		t.Errorf("problem %q: want \"prefix %s looks shared: N fences in 5m\" with N ≥ 3 (%v)", flagged, prefix, err)
	}
	if ids := slices.Compact(slices.Sorted(slices.Values(sc.takeoversOf(prefix)))); len(ids) < 3 {
		t.Errorf("takeovers on %v, want at least three ids", ids)
	}
	// The list's "problems only" filter shows the prefix's open id.
	rows := model.Rows(snap, sc.hist, model.Query{Filter: model.FilterProblems}, snap.TakenAt)
	if !slices.ContainsFunc(rows, func(i int) bool { return snap.Txns[i].ID == open }) {
		t.Errorf("problems only does not list %s", open)
	}
}

// TestCollisionNotOnRestart: a job at parallelism 2 is killed between pre-commit and commit
// (two transactions open per subtask) and restarted: the restart fences its four leftovers,
// and txnscope records the takeovers, but does not flag the prefix.
func TestCollisionNotOnRestart(t *testing.T) {
	t.Parallel()
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := newAdmin(t, bootstrap)
	tp := topicOn(ctx, t, adm)
	prefix := name(t, "orders-enricher")
	const subtasks = 2
	const interval = 600 * time.Millisecond
	job := &sinkJob{t: t, name: "job", bootstrap: bootstrap, prefix: prefix, tp: tp}
	sc := newScope(t, bootstrap)
	sc.poll(ctx)
	noFlag := func(snap *model.Snapshot) {
		t.Helper()
		for _, tx := range snap.Txns {
			if strings.HasPrefix(tx.ID, prefix+"-") {
				if p := sc.prefixProblem(snap, tx.ID, snap.TakenAt); p != "" {
					t.Fatalf("%s flagged %q; takeovers %v", tx.ID, p, sc.takeoversOf(prefix))
				}
			}
		}
	}

	// First run: two checkpoints committed.
	runCheckpoints(ctx, job, subtasks, 1, 2, interval)
	// Checkpoint 3 pre-committed (its records flushed), checkpoint 4 begun, then killed:
	// nothing is committed or closed.
	for cp := int64(3); cp <= 4; cp++ {
		for s := range subtasks {
			cl, err := job.open(ctx, s, cp)
			if err != nil {
				t.Fatalf("open %s: %v", sinkID(prefix, s, cp), err)
			}
			job.left = append(job.left, cl)
		}
	}
	t.Cleanup(func() {
		for _, cl := range job.left {
			cl.Close()
		}
	})
	sc.until(ctx, "the killed job's four transactions open", func(snap *model.Snapshot) bool {
		noFlag(snap)
		return len(openOf(snap, prefix)) == 2*subtasks
	})

	// The restart: lingering transactions aborted from the restored checkpoint 2, then the
	// job carries on from checkpoint 3, re-using the ids it had open.
	restarted := time.Now()
	job.abortLingering(ctx, subtasks, 2)
	done := make(chan struct{})
	go func() {
		defer close(done)
		runCheckpoints(ctx, job, subtasks, 3, 6, interval)
	}()
	for {
		select {
		case <-done:
		case <-time.After(100 * time.Millisecond):
			noFlag(sc.poll(ctx))
			continue
		}
		break
	}
	// Past the end of the restart's burst, with the job committing again.
	final := sc.until(ctx, "the restarted job's last checkpoint committed", func(snap *model.Snapshot) bool {
		noFlag(snap)
		tx, ok := snap.Txn(sinkID(prefix, subtasks-1, 6))
		return ok && tx.State == model.CompleteCommit
	})
	noFlag(final)
	takeovers := sc.takeoversOf(prefix)
	t.Logf("restart took %s; takeovers seen on %v as %v; commits %d", time.Since(restarted).Round(100*time.Millisecond),
		takeovers, sc.takeoverKinds(prefix), job.commits.Load())
	if len(takeovers) < subtasks {
		t.Errorf("takeovers %v: txnscope did not see the restart fence the leftovers of every subtask", takeovers)
	}
	if job.commits.Load() != 2*subtasks+4*subtasks || job.fenced.Load() != 0 {
		t.Errorf("commits %d fenced %d, want %d and 0", job.commits.Load(), job.fenced.Load(), 6*subtasks)
	}
	for _, cl := range job.left {
		if err := cl.EndTransaction(ctx, kgo.TryCommit); !isFenced(err) {
			t.Errorf("a killed producer's commit after the restart: %v, want fenced", err)
		}
	}
}

// runCheckpoints runs checkpoints from..to on every subtask at once, one per interval.
func runCheckpoints(ctx context.Context, j *sinkJob, subtasks int, from, to int64, interval time.Duration) {
	for cp := from; cp <= to && ctx.Err() == nil; cp++ {
		until := time.Now().Add(interval)
		var wg sync.WaitGroup
		for s := range subtasks {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if j.checkpoint(ctx, s, cp, until) {
					j.t.Errorf("%s fenced", sinkID(j.prefix, s, cp))
				}
			}()
		}
		wg.Wait()
	}
}
