package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/testutil"
	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// A dead job's checkpoints in S3, no JobManager: resolve commits exactly the
// committable the newest completed checkpoint holds, with its producer id
// and epoch, and aborts the transaction whose checkpoint never completed.
func TestResolveFromS3(t *testing.T) {
	const job = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	_, bootstrap := kafkatest.NewCluster(t)
	for _, id := range []string{"orders-0-4", "orders-1-5"} {
		defer kafkatest.OpenTxn(t, bootstrap, id, "orders", 10*time.Minute).Close()
	}
	cl, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: bootstrap, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	s, err := cl.Refresh(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tx, _ := s.Txn("orders-0-4")
	s3 := testutil.NewS3(t, "ckpt")
	s3.Put("flink/"+job+"/chk-4/_metadata", testutil.FlinkMetadata(4, model.Committable{ID: tx.ID, ProducerID: tx.ProducerID, Epoch: tx.ProducerEpoch}))
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
		"orders-0-4": {"commit", "chk-4: " + (model.Committable{ID: tx.ID, ProducerID: tx.ProducerID, Epoch: tx.ProducerEpoch}).String() + ", pre-committed for checkpoint 4 (s3://ckpt/flink/" + job + "/chk-4/_metadata)"},
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

// A location txnscope cannot read is refused at the command line, in one
// line, before anything connects.
func TestCheckpointLocationErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--flink-checkpoints", "orders=gs://ckpt/flink"}, "bad --flink-checkpoints orders=gs://ckpt/flink: txnscope reads checkpoints from a local path, file:// or s3://"},
		{[]string{"--flink-checkpoints", "orders=s3://"}, "names no bucket"},
		{[]string{"--flink-checkpoints", "orders=/tmp/x", "--s3-endpoint", "http://127.0.0.1:1"}, "--s3-endpoint, --s3-path-style and --s3-region are for s3:// checkpoint locations"},
	} {
		code, _, errs := runArgs(t, append([]string{"snapshot", "-b", "127.0.0.1:1"}, c.args...)...)
		if first, _, _ := strings.Cut(errs, "\n"); code != 2 || !strings.Contains(first, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %q", c.args, code, errs, c.want)
		}
	}
}
