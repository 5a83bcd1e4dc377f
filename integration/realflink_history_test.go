package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/testutil"
	"github.com/txnscope/txnscope/model"
)

// TestRealFlinkHistoryServer: the job's JobManager is gone for good, as an application cluster's
// is when its job fails. Flink 2.2, checkpoints in S3: checkpoint h completed, its commits held on
// the wire; the job is cancelled, so its cluster archives it, then the JVM is killed. Flink's own
// History Server serves the archive; `txnscope resolve --flink HISTORYSERVER` finds the job there,
// follows the external path of its latest completed checkpoint into S3, and commits exactly the
// committables that checkpoint holds.
func TestRealFlinkHistoryServer(t *testing.T) {
	t.Parallel()
	holdFlinkSlot(t)
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const flink = "2.2"
	requireRealFlink(ctx, t, flink)
	adm := newAdmin(t, bootstrap)
	topic := topicWith(ctx, t, adm, 2)
	prefix := name(t, "hs")
	bin := buildTxnscope(ctx, t)
	proxy := newProxy(t, bootstrap)
	store := testutil.StartS3(t, "ckpt")
	archive := t.TempDir()
	args := realFlinkArgs{
		Flink: flink, Topic: topic, Prefix: prefix, Parallelism: 2, CheckpointInterval: 2 * time.Second,
		CheckpointDir: "s3://ckpt/" + prefix, S3: store, TransactionTimeout: 10 * time.Minute, RecordsPerSecond: 2000,
		Extra: []string{"--archive-dir", archive},
	}
	job := startRealFlink(t, "flink-hs", proxy.addr(), args)
	cps := job.waitCheckpoints(ctx, prefix, 2)
	k := checkpointID(t, cps[len(cps)-1])
	proxy.holdForever(kmsg.EndTxn)
	var h int64
	job.waitUntil(ctx, fmt.Sprintf("a checkpoint after %d", k), func() bool {
		for _, e := range job.checkpoints(prefix) {
			h = max(h, checkpointID(t, e))
		}
		return h > k
	})
	held := waitHeldCommits(ctx, t, proxy, prefix, 2, h, false)

	// Cancelled, the job is over for good: its cluster archives it. Then the cluster is gone.
	var jobID string
	for _, e := range job.all("started") {
		if e.ID == prefix {
			jobID = e.Fields[0]
		}
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPatch, job.restURL(prefix)+"/jobs/"+jobID+"?mode=cancel", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode/100 != 2 {
		t.Fatalf("cancelling %s: %v %v", jobID, resp, err)
	}
	// Cancelling waits for the committer's commit to give up on its held EndTxn: the producer's
	// max.block.ms, 60 s.
	waitWithin(ctx, t, 150*time.Second, "the job's archive", func() bool {
		_, err := os.Stat(filepath.Join(archive, jobID))
		return err == nil
	})
	job.kill9(ctx)
	txns := describePrefix(ctx, t, adm, prefix)
	for id, req := range held {
		if tx := txns[id]; tx.State != "Ongoing" || tx.ProducerID != req.ProducerID {
			t.Fatalf("%s, whose commit was held, is %s; want Ongoing\n%s", id, tx.State, formatTxns(txns))
		}
	}
	t.Logf("cancelled and killed with the commits of %d held:\n%s", h, formatTxns(txns))

	ports, err := freePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	hsURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	startScript(t, "historyserver", "flinkjob", []string{"--flink", flink, "--history-server", archive, "--rest-port", strconv.Itoa(ports[0]),
		"--log-file", filepath.Join(t.TempDir(), "historyserver.log")}, store.Env(), nil)
	waitWithin(ctx, t, 60*time.Second, "the History Server to list the job", func() bool {
		resp, err := http.Get(hsURL + "/jobs/overview")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var doc struct{ Jobs []struct{ Jid, State string } }
		return json.NewDecoder(resp.Body).Decode(&doc) == nil && len(doc.Jobs) == 1 && doc.Jobs[0].Jid == jobID
	})

	// The verdicts, exact, from the checkpoint the History Server names.
	flags := []string{"--flink", hsURL, "--s3-endpoint", store.URL, "--s3-path-style"}
	out := &flinkOutputs{t: t, bin: bin, bootstrap: bootstrap, env: store.Env()}
	_, j := out.snapshot(ctx, prefix, flags...)
	if j == nil {
		t.Fatalf("no Flink job %s in the snapshot", prefix)
	}
	dir := "s3://ckpt/" + prefix + "/" + jobID
	checked := 0
	for _, v := range j.Verdicts {
		t.Logf("%s %s exact=%v: %s", v.TransactionalID, v.Verdict, v.Exact, v.Evidence)
		if held[v.TransactionalID] == nil {
			continue
		}
		checked++
		if v.Verdict != model.Checkpointed || !v.Exact || v.CompletedIn == nil || *v.CompletedIn != h || v.RestsOn.CheckpointDir == nil || *v.RestsOn.CheckpointDir != dir ||
			v.RestsOn.FlinkJob == nil || v.RestsOn.FlinkJob.State != "CANCELED" || v.RestsOn.FlinkJob.JobManager != hsURL {
			t.Errorf("%s: %+v; want checkpointed in %d, exact, resting on the cancelled job at the History Server and %s", v.TransactionalID, v, h, dir)
		}
	}
	if checked != len(held) {
		t.Errorf("verdicts on %d of the %d held ids", checked, len(held))
	}

	r := runTxnscope(ctx, t, bin, store.Env(), append([]string{"resolve", "--job", prefix, "--bootstrap-server", bootstrap, "--yes", "-o", "json",
		"--audit-log", filepath.Join(t.TempDir(), "audit.log")}, flags...)...)
	if r.code != 0 {
		t.Fatalf("resolve:\n%s", r)
	}
	t.Logf("txnscope resolve -o json:\n%s", r.stdout)
	committed := map[string]int64{}
	for id := range held {
		committed[id] = h
	}
	waitEnded(ctx, t, adm, prefix, committed, nil, false)
	lso, hwm := waitStable(ctx, t, adm, topic, 30*time.Second)
	if fmt.Sprint(lso) != fmt.Sprint(hwm) {
		t.Errorf("after resolve the LSO %v is below the high watermark %v\n%s", lso, hwm, formatTxns(describePrefix(ctx, t, adm, prefix)))
	}
	if strings.Contains(r.stdout, `"unknown": true`) {
		t.Errorf("an outcome unknown:\n%s", r.stdout)
	}
}

// waitWithin polls cond until it holds, for at most d.
func waitWithin(ctx context.Context, t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("%s after waiting for %s", d, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
