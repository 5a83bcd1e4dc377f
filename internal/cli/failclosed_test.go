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
	writeMetadata(t, filepath.Join(dir, "chk-3"), 3, model.Committable{ID: "orders-1-3", ProducerID: 77, Epoch: 0})
	code, _, errs := runArgs(t, "commit", "-b", strings.Join(bootstrap, ","), "--transactional-id", "orders-0-4", "--flink-checkpoints", "orders="+dir,
		"--yes", "--audit-log", filepath.Join(t.TempDir(), "audit.log"))
	if code != 1 || strings.Count(errs, "refused") != 1 || !strings.Contains(errs, "commit refused: orders-0-4 is not checkpointed (the newest completed checkpoint in "+dir+" is chk-3") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

// A commit on the operator's word of an id that is no Flink sink's says
// what txnscope cannot know: when its producer last wrote, and that a live
// producer's own abort will not undo it.
func TestUnverifiedCommitOfAForeignID(t *testing.T) {
	_, _, s := openTxns(t, "payments-tx")
	a, err := model.Reading{Snap: s, Now: time.Now()}.PlanCommit("payments-tx", true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.LastWrite.IsZero() {
		t.Fatal("the producer's last write was not found")
	}
	text := promptText(a, a.ConfirmWord(), time.Now(), "/audit.log")
	for _, want := range []string{"is not a Flink sink's id", "Its producer last wrote at", "its own abort later fails", "last write   "} {
		if !strings.Contains(text, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "Flink checkpointed it") || strings.Contains(text, "No JobManager") {
		t.Errorf("the prompt speaks of Flink for an id that is not a Flink sink's:\n%s", text)
	}
}

// Pass 3's four wrong resolves, on kfake: a dead job's orders-0-4 open (its
// checkpoint 4 never completed, or completed unreadably), and the evidence
// the pass gave resolve. Each is refused with nothing sent; the same on real
// Kafka, with a read_committed count: TestFailClosedResolve (integration).
func TestResolveFailsClosed(t *testing.T) {
	const jobA, jobB = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	now := time.Now()
	for _, c := range []struct {
		name    string
		stage   func(t *testing.T, root string, open model.Committable) []string
		refused string
	}{
		{"a checkpoint root holding two jobs", func(t *testing.T, root string, _ model.Committable) []string {
			writeMetadata(t, filepath.Join(root, jobA, "chk-3"), 3, model.Committable{ID: "orders-0-3", ProducerID: 30})
			writeMetadata(t, filepath.Join(root, jobB, "chk-99"), 99, model.Committable{ID: "orders-0-99", ProducerID: 990})
			return []string{"--flink-checkpoints", "orders=" + root}
		}, "holds the checkpoints of several jobs"},
		{"two Flink jobs hold the prefix", func(t *testing.T, _ string, _ model.Committable) []string {
			jobs := []testutil.FakeJob{
				{ID: jobA, Name: "enrich orders (prod)", State: "FAILED", StartMs: now.Add(-time.Hour).UnixMilli(), Latest: 3, AckMs: now.Add(-time.Hour).UnixMilli()},
				{ID: jobB, Name: "orders v2 backfill", State: "FINISHED", StartMs: now.Add(-time.Minute).UnixMilli(), Latest: 812, AckMs: now.Add(time.Second).UnixMilli()},
			}
			jm := testutil.NewFakeJobManager(t, func(int) ([]testutil.FakeJob, int) { return jobs, http.StatusOK })
			return []string{"--flink", jm.URL}
		}, "several Flink jobs match prefix"},
		{"the JobManager answers 500 at the re-check", func(t *testing.T, root string, open model.Committable) []string {
			writeMetadata(t, filepath.Join(root, jobA, "chk-4"), 4, open)
			job := testutil.FakeJob{ID: jobA, Name: "orders", State: "FAILED", StartMs: now.Add(-time.Hour).UnixMilli(), Latest: 4, AckMs: time.Now().Add(time.Second).UnixMilli()}
			jm := testutil.NewFakeJobManager(t, func(read int) ([]testutil.FakeJob, int) {
				if read > 1 {
					return nil, http.StatusInternalServerError
				}
				return []testutil.FakeJob{job}, http.StatusOK
			})
			return []string{"--flink", jm.URL, "--flink-checkpoints", "orders=" + root}
		}, "did not answer"},
		{"an unreadable chk-4", func(t *testing.T, root string, _ model.Committable) []string {
			writeMetadata(t, filepath.Join(root, jobA, "chk-3"), 3, model.Committable{ID: "orders-0-3", ProducerID: 30})
			if err := os.MkdirAll(filepath.Join(root, jobA, "chk-4", "_metadata"), 0o755); err != nil {
				t.Fatal(err)
			}
			return []string{"--flink-checkpoints", "orders=" + root}
		}, `"chk-4" holds a _metadata that is a directory`},
	} {
		t.Run(c.name, func(t *testing.T) {
			bootstrap, cl, s := openTxns(t, "orders-0-4")
			flags := c.stage(t, t.TempDir(), committableOf(s, "orders-0-4"))
			args := append([]string{"resolve", "-b", strings.Join(bootstrap, ","), "--job", "orders", "--yes", "-o", "json", "--audit-log", filepath.Join(t.TempDir(), "audit.log")}, flags...)
			code, out, errs := runArgs(t, args...)
			var doc resolveJSON
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatalf("exit %d, stdout %q, stderr %q: %v", code, out, errs, err)
			}
			text := doc.Result
			for _, st := range doc.Steps {
				text += " " + st.Evidence + " " + st.LeftOpen + " " + st.Result
				if st.Sends != 0 || st.OK {
					t.Errorf("%s: %d requests sent", st.TransactionalID, st.Sends)
				}
			}
			if code != 1 || doc.OK || !strings.Contains(text, c.refused) {
				t.Errorf("exit %d: %s\nwant refused, saying %q", code, out, c.refused)
			}
			if now, _ := cl.Refresh(t.Context(), s); now != nil {
				if tx, _ := now.Txn("orders-0-4"); tx.State != model.Ongoing {
					t.Errorf("orders-0-4 is %s, want still open", tx.State)
				}
			}
		})
	}
}

// openTxns opens a transaction on a fresh kfake cluster for each id (topic
// orders), and returns the cluster, a client of it and a snapshot taken
// once they are open.
func openTxns(t *testing.T, ids ...string) ([]string, *kafkaadmin.Client, *model.Snapshot) {
	t.Helper()
	_, bootstrap := kafkatest.NewCluster(t)
	for _, id := range ids {
		p := kafkatest.OpenTxn(t, bootstrap, id, "orders", 10*time.Minute)
		t.Cleanup(p.Close)
	}
	cl, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: bootstrap, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	s, err := cl.Refresh(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return bootstrap, cl, s
}

// committableOf is the committable of id's open transaction in s.
func committableOf(s *model.Snapshot, id string) model.Committable {
	tx, _ := s.Txn(id)
	return model.Committable{ID: tx.ID, ProducerID: tx.ProducerID, Epoch: tx.ProducerEpoch}
}

func writeMetadata(t *testing.T, dir string, n int64, cs ...model.Committable) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "_metadata"), testutil.FlinkMetadata(n, cs...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// commit -o json names what the commit rested on: the verdict read just
// before the request, the checkpoint directory and the committable in it.
func TestCommitJSONNamesWhatItRestsOn(t *testing.T) {
	bootstrap, _, s := openTxns(t, "orders-0-4")
	mine := committableOf(s, "orders-0-4")
	dir := filepath.Join(t.TempDir(), "0123456789abcdef0123456789abcdef")
	writeMetadata(t, filepath.Join(dir, "chk-4"), 4, mine)
	code, out, errs := runArgs(t, "commit", "-b", strings.Join(bootstrap, ","), "--transactional-id", "orders-0-4", "--flink-checkpoints", "orders="+dir,
		"--yes", "-o", "json", "--audit-log", filepath.Join(t.TempDir(), "audit.log"))
	var doc actionJSON
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q: %v", code, out, errs, err)
	}
	if doc.Verdict != "checkpointed" || doc.CompletedIn != 4 || doc.RestsOn == nil || doc.RestsOn.CheckpointDir == nil || *doc.RestsOn.CheckpointDir != dir ||
		doc.RestsOn.Committable == nil || doc.RestsOn.Committable.ProducerID != mine.ProducerID || doc.RestsOn.FlinkJob != nil {
		t.Errorf("%s", out)
	}
}
