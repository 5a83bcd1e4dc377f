package cli

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/testutil"
	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/model"
)

// A dead job's checkpoints in S3, no JobManager: resolve commits exactly the
// committable the newest completed checkpoint holds, with its producer id
// and epoch, and aborts the transaction whose checkpoint never completed.
func TestResolveFromS3(t *testing.T) {
	const job = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	bootstrap, cl, s := openTxns(t, "orders-0-4", "orders-1-5")
	mine := committableOf(s, "orders-0-4")
	s3 := testutil.NewS3(t, "ckpt")
	s3.Put("flink/"+job+"/chk-4/_metadata", testutil.FlinkMetadata(4, mine))
	s3.Put("flink/"+job+"/chk-5/", nil) // triggered, never completed

	code, out, errs := runArgs(t, "resolve", "-b", strings.Join(bootstrap, ","), "--job", "orders", "--yes", "-o", "json",
		"--flink-checkpoints", "orders=s3://ckpt/flink", "--s3-endpoint", s3.URL, "--s3-path-style",
		"--audit-log", filepath.Join(t.TempDir(), "audit.log"))
	var doc resolveJSON
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("exit %d, stdout %q, stderr %q: %v", code, out, errs, err)
	}
	if code != 0 || !doc.OK || len(doc.Steps) != 2 {
		t.Fatalf("exit %d, stderr %q: %s", code, errs, out)
	}
	want := map[string]struct{ action, evidence string }{
		"orders-0-4": {"commit", "chk-4: " + mine.String() + ", pre-committed for checkpoint 4 (s3://ckpt/flink/" + job + "/chk-4/_metadata)"},
		"orders-1-5": {"force-terminate", "the newest completed checkpoint in s3://ckpt/flink/" + job + " is chk-4, before its own (5)"},
	}
	for _, st := range doc.Steps {
		w := want[st.TransactionalID]
		if st.Action != w.action || !st.OK || !strings.Contains(st.Evidence, w.evidence) || st.RestsOn.CheckpointDir == nil || *st.RestsOn.CheckpointDir != "s3://ckpt/flink/"+job {
			t.Errorf("%s: %+v\nwant %s, %q", st.TransactionalID, st, w.action, w.evidence)
		}
	}
	now, err := cl.Refresh(t.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	// kfake shows an ended transaction as Empty: which end is the steps'
	// (and, on real Kafka, integration's TestRealFlinkS3).
	for _, id := range []string{"orders-0-4", "orders-1-5"} {
		if tx, _ := now.Txn(id); tx.State.Open() {
			t.Errorf("%s is still %s", id, tx.State)
		}
	}
}

// The JobManager gone, Flink's History Server (the same REST paths) lists
// the failed job and the external path of its latest completed checkpoint
// in S3: resolve reads the committables there, with no --flink-checkpoints.
func TestResolveFromTheHistoryServer(t *testing.T) {
	const job = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	bootstrap, _, s := openTxns(t, "orders-0-4", "orders-1-5")
	mine := committableOf(s, "orders-0-4")
	s3 := testutil.NewS3(t, "ckpt")
	s3.Put("flink/"+job+"/chk-4/_metadata", testutil.FlinkMetadata(4, mine, model.Committable{ID: "other-0-4", ProducerID: 1}))
	now := time.Now()
	hs := testutil.NewFakeJobManager(t, func(int) ([]testutil.FakeJob, int) {
		return []testutil.FakeJob{{ID: job, Name: "orders", State: "FAILED", StartMs: now.Add(-time.Hour).UnixMilli(), Latest: 4,
			TriggerMs: now.Add(-time.Second).UnixMilli(), AckMs: now.Add(time.Second).UnixMilli(), Path: "s3://ckpt/flink/" + job + "/chk-4"}}, http.StatusOK
	})
	code, out, errs := runArgs(t, "resolve", "-b", strings.Join(bootstrap, ","), "--job", "orders", "--yes", "-o", "json",
		"--flink", hs.URL, "--s3-endpoint", s3.URL, "--s3-path-style", "--audit-log", filepath.Join(t.TempDir(), "audit.log"))
	var doc resolveJSON
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("exit %d, stdout %q, stderr %q: %v", code, out, errs, err)
	}
	if code != 0 || !doc.OK || len(doc.Steps) != 2 {
		t.Fatalf("exit %d, stderr %q: %s", code, errs, out)
	}
	for _, st := range doc.Steps {
		want := map[string]string{"orders-0-4": "commit", "orders-1-5": "force-terminate"}[st.TransactionalID]
		if st.Action != want || !st.OK || st.RestsOn.CheckpointDir == nil || *st.RestsOn.CheckpointDir != "s3://ckpt/flink/"+job ||
			st.RestsOn.FlinkJob == nil || st.RestsOn.FlinkJob.JobID != job {
			t.Errorf("%s: %+v, want %s resting on the job's checkpoints in S3", st.TransactionalID, st, want)
		}
	}
	if c := doc.Steps[0]; c.TransactionalID == "orders-0-4" && !strings.HasPrefix(c.Evidence, "chk-4: "+mine.String()) {
		t.Errorf("evidence %q", c.Evidence)
	}
}

// A location txnscope cannot read is refused at the command line, in one
// line, before anything connects.
func TestCheckpointLocationErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--flink-checkpoints", "orders=gs://ckpt/flink"}, "bad --flink-checkpoints orders=gs://ckpt/flink: txnscope reads checkpoints from a local path, file:// or s3://"},
		{[]string{"--flink-checkpoints", "orders=s3://"}, "names no bucket"},
		{[]string{"--flink-checkpoints", "orders=/tmp/x", "--s3-endpoint", "http://127.0.0.1:1"}, "--s3-endpoint, --s3-path-style and --s3-region are for s3:// checkpoints"},
	} {
		code, _, errs := runArgs(t, append([]string{"snapshot", "-b", "127.0.0.1:1"}, c.args...)...)
		if first, _, _ := strings.Cut(errs, "\n"); code != 2 || !strings.Contains(first, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %q", c.args, code, errs, c.want)
		}
	}
}

// A History Server that names a checkpoint path full of escape sequences
// gets them written out, on every output: never a terminal's command.
func TestHostileExternalPath(t *testing.T) {
	_, bootstrap := kafkatest.NewCluster(t)
	defer kafkatest.OpenTxn(t, bootstrap, "orders-0-4", "orders", 10*time.Minute).Close()
	s3 := testutil.NewS3(t, "ckpt")
	now := time.Now()
	hs := testutil.NewFakeJobManager(t, func(int) ([]testutil.FakeJob, int) {
		return []testutil.FakeJob{{ID: "cccccccccccccccccccccccccccccccc", Name: "orders", State: "FAILED", StartMs: now.Add(-time.Hour).UnixMilli(), Latest: 4,
			AckMs: now.Add(time.Second).UnixMilli(), Path: "s3://ckpt/\x1b]0;pwned\x07\x1b[2J/chk-4"}}, http.StatusOK
	})
	for _, args := range [][]string{
		{"resolve", "--job", "orders", "--yes", "--audit-log", filepath.Join(t.TempDir(), "audit.log")},
		{"snapshot"},
	} {
		code, out, errs := runArgs(t, append(args, "-b", strings.Join(bootstrap, ","), "--flink", hs.URL, "--s3-endpoint", s3.URL, "--s3-path-style")...)
		if strings.ContainsAny(out+errs, "\x1b\x07") {
			t.Errorf("%s: exit %d, raw escapes in\n%q\n%q", args[0], code, out, errs)
		}
		if args[0] == "resolve" && (code == 0 || !strings.Contains(out+errs, `\x1b`)) {
			t.Errorf("resolve: exit %d, stderr %q: want refused, the path written out", code, errs)
		}
	}
}
