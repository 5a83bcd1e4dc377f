package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/txnscope/txnscope/internal/testutil"
	"github.com/txnscope/txnscope/model"
)

// The third hostile pass found four ways resolve committed or aborted the
// wrong transaction. Each is staged here on real Kafka with real
// transactional producers, as a dead Flink job P leaves it: P-0-3 committed
// 50 records (checkpoint 3), P-0-4 holds 50 more, open (its checkpoint 4
// never completed, or, where the case says so, completed unreadably). The
// evidence given to `txnscope resolve` is what the pass gave it; a
// read_committed reader counts the records after each run. One case made it
// count 100 where 50 were right: committed records a restored job writes a
// second time.
func TestFailClosedResolve(t *testing.T) {
	t.Parallel()
	bootstrap := Bootstrap(t)
	buildCtx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin := buildTxnscope(buildCtx, t)
	const jobA, jobB = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	for _, c := range []struct {
		name string
		// stage writes the evidence and returns resolve's flags; then, and
		// fix's (nil: none), the flags that resolve it right.
		stage func(t *testing.T, d *deadJob) (flags []string, fix func() []string)
		// refused is what resolve says, sending nothing; planned what it
		// planned for P-0-4 before a re-check refused it ("": left open, or
		// nothing planned); fixed how many records read_committed counts
		// after the fix.
		refused, planned string
		fixed            int
	}{
		{"1-root-of-two-jobs", func(t *testing.T, d *deadJob) ([]string, func() []string) {
			d.checkpoint(t, jobA, 3, d.committable(t, d.done))
			d.checkpoint(t, jobB, 99, model.Committable{ID: d.prefix + "-0-99", ProducerID: 999999, Epoch: 0}) // another, live job
			return []string{"--flink-checkpoints", d.prefix + "=" + d.root}, func() []string {
				return []string{"--flink-checkpoints", d.prefix + "=" + filepath.Join(d.root, jobA)}
			}
		}, "holds the checkpoints of several jobs", "", 50},
		{"2-two-jobs-named-for-the-prefix", func(t *testing.T, d *deadJob) ([]string, func() []string) {
			backfill := deadFlinkJob(jobB, d.prefix+" v2 backfill", "FINISHED", 812, d.start, time.Second)
			backfill.StartMs = d.start.Add(-time.Minute).UnixMilli() // the newer of the two
			jm := jobManager(t, 0, deadFlinkJob(jobA, "enrich "+d.prefix+" (prod)", "FAILED", 3, d.start, -time.Minute), backfill)
			return []string{"--flink", jm.URL}, func() []string {
				return []string{"--flink", jm.URL, "--flink-prefix", "enrich " + d.prefix + " (prod)=" + d.prefix}
			}
		}, "several Flink jobs match prefix", "", 50},
		{"3-jobmanager-500-at-the-recheck", func(t *testing.T, d *deadJob) ([]string, func() []string) {
			// Checkpoint 4 completed here: the plan commits P-0-4. The
			// JobManager then fails over; the directory must not stand in
			// for it.
			d.checkpoint(t, jobA, 4, d.committable(t, d.open))
			jm := jobManager(t, 1, deadFlinkJob(jobA, d.prefix+" job", "FAILED", 4, d.start, 2*time.Second))
			return []string{"--flink", jm.URL, "--flink-checkpoints", d.prefix + "=" + d.root}, func() []string {
				// The JobManager is gone for good: the directory alone.
				return []string{"--flink-checkpoints", d.prefix + "=" + d.root}
			}
		}, "the JobManager at http://127.0.0.1", "commit", 100},
		{"4-metadata-a-fifo", func(t *testing.T, d *deadJob) ([]string, func() []string) {
			d.checkpoint(t, jobA, 3, d.committable(t, d.done))
			chk4 := filepath.Join(d.root, jobA, "chk-4")
			if err := os.MkdirAll(chk4, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(filepath.Join(chk4, "_metadata"), 0o644); err != nil {
				t.Fatal(err)
			}
			return []string{"--flink-checkpoints", d.prefix + "=" + d.root}, func() []string {
				// Readable after all: it holds P-0-4's committable.
				os.Remove(filepath.Join(chk4, "_metadata"))
				d.checkpoint(t, jobA, 4, d.committable(t, d.open))
				return []string{"--flink-checkpoints", d.prefix + "=" + d.root}
			}
		}, `"chk-4" holds a _metadata that is a named pipe (FIFO)`, "", 100},
		{"4-chk-a-symlink", func(t *testing.T, d *deadJob) ([]string, func() []string) {
			d.checkpoint(t, jobA, 3, d.committable(t, d.done))
			d.checkpoint(t, jobB, 4, d.committable(t, d.open))
			if err := os.Rename(filepath.Join(d.root, jobB), filepath.Join(d.root, "..", "elsewhere-"+jobB)); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(d.root, "..", "elsewhere-"+jobB, "chk-4"), filepath.Join(d.root, jobA, "chk-4")); err != nil {
				t.Fatal(err)
			}
			return []string{"--flink-checkpoints", d.prefix + "=" + d.root}, nil
		}, `"chk-4" is a symbolic link (not followed)`, "", 50},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			// Its own clock, from when it runs: parallel subtests queue behind the
			// package's other parallel tests (CI ran out a shared one before they began).
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			d := stageDeadJob(ctx, t, bootstrap)
			flags, fix := c.stage(t, d)
			doc, stderr := d.resolve(ctx, t, bin, flags...)
			if doc.OK || !strings.Contains(doc.Result+stderr+stepTexts(doc), c.refused) {
				t.Errorf("resolve %v: %+v\nstderr %s\nwant it refused saying %q", flags, doc, stderr, c.refused)
			}
			for _, s := range doc.Steps {
				if s.Sends != 0 || s.OK || s.Action != c.planned {
					t.Errorf("%s: %d requests sent, %q planned (%+v), want none sent, %q planned", s.ID, s.Sends, s.Action, s, c.planned)
				}
			}
			n, pinned := d.count(ctx, t)
			if n != 50 || !pinned {
				t.Errorf("after the refused resolve read_committed counts %d (pinned %v), want 50 behind the open P-0-4", n, pinned)
			}
			t.Logf("refused (%s); read_committed counts %d", firstLine(doc.Result+" "+stepTexts(doc)), n)
			if fix == nil {
				d.abandon(ctx, t)
				return
			}
			doc, stderr = d.resolve(ctx, t, bin, fix()...)
			if !doc.OK {
				t.Fatalf("resolve with the evidence right: %+v\nstderr %s", doc, stderr)
			}
			d.waitUnpinned(ctx, t)
			if n, _ := d.count(ctx, t); n != c.fixed {
				t.Errorf("after resolve read_committed counts %d, want %d", n, c.fixed)
			} else {
				t.Logf("with the evidence right, resolved; read_committed counts %d", n)
			}
		})
	}
}

// deadJob is what a Flink job P left on the broker when it died: P-0-3
// committed, P-0-4 open, each 50 records "P i".
type deadJob struct {
	prefix, root string
	done, open   string
	start        time.Time
	adm          *kadm.Client
	topic        string
	bootstrap    string
	openP        *kgo.Client
}

func stageDeadJob(ctx context.Context, t *testing.T, bootstrap string) *deadJob {
	t.Helper()
	adm := newAdmin(t, bootstrap)
	d := &deadJob{prefix: name(t, "fc"), root: filepath.Join(t.TempDir(), "checkpoints"), adm: adm, bootstrap: bootstrap}
	d.done, d.open = d.prefix+"-0-3", d.prefix+"-0-4"
	d.topic = topicWith(ctx, t, adm, 1)
	write := func(p *kgo.Client, from int) {
		if err := p.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		recs := make([]*kgo.Record, 50)
		for i := range recs {
			recs[i] = &kgo.Record{Topic: d.topic, Value: fmt.Appendf(nil, "%s %d", d.prefix, from+i)}
		}
		if err := p.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	p3 := producer(t, bootstrap, d.done, 10*time.Minute)
	write(p3, 0)
	endTxn(ctx, t, p3, true)
	d.start = time.Now()
	d.openP = producer(t, bootstrap, d.open, 10*time.Minute)
	write(d.openP, 50)
	return d
}

// committable is id's open (or last) transaction as Flink's committer
// would hold it: its producer id and epoch, as the broker has them.
func (d *deadJob) committable(t *testing.T, id string) model.Committable {
	t.Helper()
	described, err := d.adm.DescribeTransactions(context.Background(), id)
	if err != nil || described[id].Err != nil {
		t.Fatalf("describe %s: %v %+v", id, err, described[id])
	}
	return model.Committable{ID: id, ProducerID: described[id].ProducerID, Epoch: described[id].ProducerEpoch}
}

// checkpoint writes root/job/chk-n/_metadata holding cs, as Flink would.
func (d *deadJob) checkpoint(t *testing.T, job string, n int64, cs ...model.Committable) {
	t.Helper()
	dir := filepath.Join(d.root, job, fmt.Sprintf("chk-%d", n))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "_metadata"), testutil.FlinkMetadata(n, cs...), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (d *deadJob) resolve(ctx context.Context, t *testing.T, bin string, flags ...string) (resolveDoc, string) {
	t.Helper()
	args := append([]string{"resolve", "--job", d.prefix, "-b", d.bootstrap, "--yes", "-o", "json", "--audit-log", filepath.Join(t.TempDir(), "audit.log")}, flags...)
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	_ = cmd.Run()
	var doc resolveDoc
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatalf("resolve %v printed no JSON: %v\nstdout %s\nstderr %s", flags, err, stdout.String(), stderr.String())
	}
	return doc, stderr.String()
}

func stepTexts(doc resolveDoc) string {
	var b strings.Builder
	for _, s := range doc.Steps {
		fmt.Fprintf(&b, "%s %s %s %s %s\n", s.ID, s.Verdict, s.Evidence, s.LeftOpen, s.Result)
	}
	return b.String()
}

// count is how many records read_committed shows, and whether an open
// transaction still holds the LSO below the high watermark.
func (d *deadJob) count(ctx context.Context, t *testing.T) (n int, pinned bool) {
	t.Helper()
	lso := endOffsets(ctx, t, d.adm, d.topic, true)
	hwm := endOffsets(ctx, t, d.adm, d.topic, false)
	return len(indexes(readTopic(ctx, t, d.bootstrap, d.topic, true, lso))), lso[0] < hwm[0]
}

func (d *deadJob) waitUnpinned(ctx context.Context, t *testing.T) {
	t.Helper()
	if lso, hwm := waitStable(ctx, t, d.adm, d.topic, 30*time.Second); lso[0] != hwm[0] {
		t.Fatalf("the LSO %v stays below the high watermark %v", lso, hwm)
	}
}

// abandon aborts P-0-4, so that no test's transaction outlives it.
func (d *deadJob) abandon(ctx context.Context, t *testing.T) {
	t.Helper()
	endTxn(ctx, t, d.openP, false)
}

// jobManager serves jobs as a JobManager does; after failAfter reads of
// its overview (0: never) it answers 500, as one failing over does.
func jobManager(t *testing.T, failAfter int, jobs ...testutil.FakeJob) *testutil.FakeJobManager {
	return testutil.NewFakeJobManager(t, func(read int) ([]testutil.FakeJob, int) {
		if failAfter > 0 && read > failAfter {
			return nil, http.StatusInternalServerError
		}
		return jobs, http.StatusOK
	})
}

// deadFlinkJob is a Flink job whose latest completed checkpoint completed at
// acked from start, the dead job's open transaction's start; started an hour
// before it.
func deadFlinkJob(id, name, state string, latest int64, start time.Time, acked time.Duration) testutil.FakeJob {
	return testutil.FakeJob{ID: id, Name: name, State: state, StartMs: start.Add(-time.Hour).UnixMilli(),
		Latest: latest, TriggerMs: start.Add(acked - time.Second).UnixMilli(), AckMs: start.Add(acked).UnixMilli()}
}
