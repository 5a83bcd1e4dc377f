package cli

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/testutil"
	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// resolve refused before the cluster is read (here --read-only) prints
// resolve's own -o json document: the job, no steps, why; never an
// abort-partition document.
func TestResolveRefusedBeforeTheClusterPrintsItsDocument(t *testing.T) {
	code, out, errs := runArgs(t, "resolve", "-b", "127.0.0.1:1", "--read-only", "--job", "orders", "--flink-checkpoints", "orders="+t.TempDir(),
		"--audit-log", filepath.Join(t.TempDir(), "audit.log"), "-o", "json")
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("exit %d, stdout %q, stderr %q: %v", code, out, errs, err)
	}
	if code != 2 || doc["job"] != "orders" || doc["ok"] != false || !strings.Contains(doc["result"].(string), "--read-only forbids it") ||
		doc["action"] != nil || len(doc["steps"].([]any)) != 0 {
		t.Errorf("exit %d: %s", code, out)
	}
}

// A --flink-checkpoints directory that cannot be read leaves its trace in
// snapshot -o json, as a JobManager that does not answer does.
func TestSnapshotNamesAnUnreadableCheckpointDir(t *testing.T) {
	_, bootstrap := kafkatest.NewCluster(t)
	missing := filepath.Join(t.TempDir(), "gone")
	code, out, errs := runArgs(t, "snapshot", "-b", strings.Join(bootstrap, ","), "--flink-checkpoints", "orders="+missing, "-o", "json")
	var doc struct {
		Flink struct {
			CheckpointDirs []struct {
				Prefix, Dir string
				Error       *string
			} `json:"checkpoint_dirs"`
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 {
		t.Fatalf("exit %d, stderr %q: %v", code, errs, err)
	}
	if d := doc.Flink.CheckpointDirs; len(d) != 1 || d[0].Prefix != "orders" || d[0].Dir != missing || d[0].Error == nil || !strings.Contains(*d[0].Error, "no such file") {
		t.Errorf("checkpoint_dirs %+v", d)
	}
	testutil.CheckSnapshotJSON(t, []byte(out))
}

// A resolve whose JobManager says FAILED when planned and RUNNING at the
// first re-check (the job came back) sends nothing, and stops there: the
// job's other transactions are not tried on an answer that holds for all
// of them.
func TestResolveStopsWhenTheJobComesBack(t *testing.T) {
	_, bootstrap := kafkatest.NewCluster(t)
	now := time.Now()
	kafkatest.InitIDs(t, bootstrap, 10*time.Minute, "orders-0-3")
	for _, id := range []string{"orders-0-4", "orders-1-4"} {
		defer kafkatest.OpenTxn(t, bootstrap, id, "orders", 10*time.Minute).Close()
	}
	job := testutil.FakeJob{ID: "0123456789abcdef0123456789abcdef", Name: "orders", State: "FAILED", StartMs: now.Add(-time.Hour).UnixMilli(),
		Latest: 3, TriggerMs: now.Add(-time.Minute).UnixMilli(), AckMs: now.Add(-time.Minute).UnixMilli()}
	jm := testutil.NewFakeJobManager(t, func(read int) ([]testutil.FakeJob, int) {
		j := job
		if read > 1 {
			j.State = "RUNNING"
		}
		return []testutil.FakeJob{j}, http.StatusOK
	})
	audit := filepath.Join(t.TempDir(), "audit.log")
	code, out, errs := runArgs(t, "resolve", "-b", strings.Join(bootstrap, ","), "--job", "orders", "--flink", jm.URL, "--yes", "-o", "json", "--audit-log", audit)
	var doc resolveJSON
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("exit %d, stdout %q, stderr %q: %v", code, out, errs, err)
	}
	if code != 1 || doc.OK || len(doc.Steps) != 2 {
		t.Fatalf("exit %d: %s", code, out)
	}
	first, second := doc.Steps[0], doc.Steps[1]
	if !first.Refused || first.Sends != 0 || !strings.Contains(first.Result, `RUNNING) at `+jm.URL+`: the job ends`) {
		t.Errorf("the first: %+v, want refused, the job running again", first)
	}
	if second.Sends != 0 || second.Attempt != "" || !strings.HasPrefix(second.NotSent, "not sent: ") {
		t.Errorf("the second: %+v, want not sent", second)
	}
	if first.RestsOn.FlinkJob == nil || first.RestsOn.FlinkJob.JobID != job.ID || first.RestsOn.FlinkJob.State != "RUNNING" {
		t.Errorf("the first rests on %+v, want the re-check's Flink job, RUNNING", first.RestsOn)
	}
	if strings.Contains(errs, "refused: refused") {
		t.Errorf("stderr %q", errs)
	}
}

// A refused commit says "refused" once, and names what its verdict rested on.
func TestCommitRefusedOnce(t *testing.T) {
	_, bootstrap := kafkatest.NewCluster(t)
	defer kafkatest.OpenTxn(t, bootstrap, "orders-0-4", "orders", 10*time.Minute).Close()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "chk-3"), 0o755); err != nil {
		t.Fatal(err)
	}
	meta := testutil.FlinkMetadata(3, model.Committable{ID: "orders-1-3", ProducerID: 77, Epoch: 0})
	if err := os.WriteFile(filepath.Join(dir, "chk-3", "_metadata"), meta, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runArgs(t, "commit", "-b", strings.Join(bootstrap, ","), "--transactional-id", "orders-0-4", "--flink-checkpoints", "orders="+dir,
		"--yes", "--audit-log", filepath.Join(t.TempDir(), "audit.log"))
	if code != 1 || strings.Count(errs, "refused") != 1 || !strings.Contains(errs, "commit refused: orders-0-4 is not checkpointed (the newest checkpoint in "+dir+" is chk-3") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

// A commit on the operator's word of an id that is no Flink sink's says
// what txnscope cannot know: when its producer last wrote, and that a live
// producer's own abort will not undo it.
func TestUnverifiedCommitOfAForeignID(t *testing.T) {
	_, bootstrap := kafkatest.NewCluster(t)
	defer kafkatest.OpenTxn(t, bootstrap, "payments-tx", "orders", 10*time.Minute).Close()
	cl, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: bootstrap, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	s, err := cl.Refresh(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tx, _ := s.Txn("payments-tx")
	a, err := model.PlanCommit(tx, model.CommitEvidence{}, true)
	if err != nil {
		t.Fatal(err)
	}
	a.LastWrite = lastWrite(s, a)
	if a.LastWrite.IsZero() {
		t.Fatal("the producer's last write was not found")
	}
	text := promptText(a, time.Now(), "/audit.log")
	for _, want := range []string{"is not a Flink sink's id", "Its producer last wrote at", "its own abort later fails", "last write   "} {
		if !strings.Contains(text, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "Flink checkpointed it") || strings.Contains(text, "No JobManager") {
		t.Errorf("the prompt speaks of Flink for an id that is not a Flink sink's:\n%s", text)
	}
}
