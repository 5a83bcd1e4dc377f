package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/txnscope/txnscope/internal/testutil"
	"github.com/txnscope/txnscope/model"
)

// TestBinaryResolve: the built binary resolves a dead Flink job from its
// retained checkpoints alone (the JobManager is gone): `commit` refuses the
// transaction whose checkpoint never completed; `resolve` commits the one
// whose committable chk-5 holds and force-terminates the other; read_committed
// consumers then see the first one's records and none of the second's.
func TestBinaryResolve(t *testing.T) {
	t.Parallel()
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	bin := buildTxnscope(ctx, t)
	adm := newAdmin(t, bootstrap)
	tp := topicOn(ctx, t, adm)
	waitTopic(ctx, t, adm, tp.Topic, 1)
	prefix := name(t, "job")
	done, open := prefix+"-0-5", prefix+"-0-6"
	openTxn(ctx, t, producer(t, bootstrap, done, 10*time.Minute), tp, 3, "checkpointed")
	openTxn(ctx, t, producer(t, bootstrap, open, 10*time.Minute), tp, 2, "replayed")
	dir := t.TempDir()
	writeCheckpoint(ctx, t, adm, dir, 5, done)
	audit := filepath.Join(t.TempDir(), "audit.log")
	run := func(args ...string) (string, string, error) {
		cmd := exec.CommandContext(ctx, bin, append(args, "-b", bootstrap, "--flink-checkpoints", prefix+"="+dir, "--yes", "-o", "json", "--audit-log", audit)...)
		cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir())
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}

	stdout, stderr, err := run("commit", "--transactional-id", open)
	if err == nil || !strings.Contains(stdout, `"refused": true`) || !strings.Contains(stderr, "is not checkpointed") {
		t.Fatalf("commit of a transaction whose checkpoint never completed: err %v\nstdout %s\nstderr %s", err, stdout, stderr)
	}

	stdout, stderr, err = run("resolve", "--job", prefix)
	if err != nil {
		t.Fatalf("resolve: %v\nstdout %s\nstderr %s", err, stdout, stderr)
	}
	t.Logf("%s", stdout)
	var doc struct {
		OK    bool
		Steps []struct {
			TransactionalID string `json:"transactional_id"`
			Verdict, Action string
			CompletedIn     int64 `json:"completed_in"`
			OK              bool
			Request         string
		}
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
	}
	if !doc.OK || len(doc.Steps) != 2 {
		t.Fatalf("resolve: %+v", doc)
	}
	for _, s := range doc.Steps {
		switch s.TransactionalID {
		case done:
			if s.Verdict != "checkpointed" || s.CompletedIn != 5 || s.Action != "commit" || !s.OK || !strings.Contains(s.Request, "EndTxn(COMMIT") {
				t.Errorf("the checkpointed one: %+v", s)
			}
		case open:
			if s.Verdict != "not_checkpointed" || s.Action != "force-terminate" || !s.OK {
				t.Errorf("the other: %+v", s)
			}
		}
	}
	if doc.Steps[0].TransactionalID != done {
		t.Errorf("the commit must go first: %+v", doc.Steps)
	}
	vals := consume(ctx, t, bootstrap, tp, true, "checkpointed-2")
	if strings.Join(vals, " ") != "checkpointed-0 checkpointed-1 checkpointed-2" {
		t.Errorf("read_committed sees %v", vals)
	}
	// The refused commit was refused when planned: nothing attempted.
	if lines := readAudit(t, audit); len(lines) != 4 || lines[0].Action != "commit" || lines[0].Verdict != "checkpointed" || lines[0].CompletedIn != 5 ||
		lines[2].Action != "force-terminate" || lines[2].Verdict != "not_checkpointed" {
		t.Errorf("audit log: want each step's attempt and result, the commit's with its verdict: %+v", lines)
	}
}

// writeCheckpoint writes dir/chk-n/_metadata as Flink would for a checkpoint
// whose KafkaSink committer holds ids' open transactions as they are now
// (their producer ids and epochs).
func writeCheckpoint(ctx context.Context, t *testing.T, adm *kadm.Client, dir string, n int64, ids ...string) {
	t.Helper()
	described, err := adm.DescribeTransactions(ctx, ids...)
	if err != nil {
		t.Fatalf("DescribeTransactions: %v", err)
	}
	var cs []model.Committable
	for _, id := range ids {
		d, ok := described[id]
		if !ok || d.Err != nil {
			t.Fatalf("%s: %+v", id, d)
		}
		cs = append(cs, model.Committable{ID: id, ProducerID: d.ProducerID, Epoch: d.ProducerEpoch})
	}
	chk := filepath.Join(dir, fmt.Sprintf("chk-%d", n))
	if err := os.MkdirAll(chk, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(chk, "_metadata"), testutil.FlinkMetadata(n, cs...), 0o644); err != nil {
		t.Fatal(err)
	}
}
