package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/jsonout"
	"github.com/txnscope/txnscope/internal/testutil"
	"github.com/txnscope/txnscope/model"
)

// buildTxnscope builds the real command from the repository root into a temp dir.
func buildTxnscope(ctx context.Context, t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go tool is not on PATH: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "txnscope")
	cmd := exec.CommandContext(ctx, goTool, "build", "-o", bin, ".")
	cmd.Dir = repoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build -o %s . (in %s): %v\n%s", bin, cmd.Dir, err, out)
	}
	return bin
}

// TestBinarySnapshotJSON runs `txnscope snapshot -o json` against the real broker while a
// transaction is open and checks the documented schema and what it says about that transaction.
func TestBinarySnapshotJSON(t *testing.T) {
	t.Parallel()
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	bin := buildTxnscope(ctx, t)
	adm := newAdmin(t, bootstrap)
	tp := topicOn(ctx, t, adm)
	id := name(t, "txn")
	const timeout = 30 * time.Second
	p := producer(t, bootstrap, id, timeout)
	openTxn(ctx, t, p, tp, 1, "before")
	endTxn(ctx, t, p, true) // offsets 0 and 1 (marker): the open one starts at 2
	openTxn(ctx, t, p, tp, 2, "open")
	time.Sleep(300 * time.Millisecond) // a visible age

	cmd := exec.CommandContext(ctx, bin, "snapshot", "-o", "json", "-b", bootstrap, "--timeout", "10s")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("txnscope snapshot -o json: %v\nstderr: %s", err, stderr.String())
	}

	// The published schema holds the real broker's output.
	testutil.CheckSnapshotJSON(t, stdout.Bytes())
	// The raw form: every documented key is present, with the documented kind of value.
	var raw map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &raw); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, stdout.String())
	}
	wantKeys(t, "snapshot", raw, "taken_at", "bootstrap", "broker_max_timeout_ms", "transactions", "partitions")
	if raw["bootstrap"] != bootstrap {
		t.Errorf("bootstrap %v, want %s", raw["bootstrap"], bootstrap)
	}
	rawTx := findObject(t, raw["transactions"], "transactional_id", id)
	wantKeys(t, "transaction", rawTx, "transactional_id", "state", "producer_id", "producer_epoch", "coordinator",
		"timeout_ms", "start_time", "age_ms", "timeout_ratio", "partitions", "commits_seen", "aborts_seen")
	for _, k := range []string{"start_time", "age_ms", "timeout_ratio"} {
		if rawTx[k] == nil {
			t.Errorf("open transaction has %s null", k)
		}
	}
	rawPart := findObject(t, raw["partitions"], "topic", tp.Topic)
	wantKeys(t, "partition", rawPart, "topic", "partition", "leader", "high_watermark", "last_stable_offset", "producers")
	prods, _ := rawPart["producers"].([]any)
	if len(prods) != 1 {
		t.Fatalf("partition producers %v, want one", rawPart["producers"])
	}
	rawProd, _ := prods[0].(map[string]any)
	wantKeys(t, "producer", rawProd, "producer_id", "producer_epoch", "last_sequence", "last_timestamp",
		"coordinator_epoch", "current_txn_start_offset")

	// The typed form: the values are right.
	var snap jsonout.SnapshotJSON
	if err := json.Unmarshal(stdout.Bytes(), &snap); err != nil {
		t.Fatalf("output does not decode as the snapshot schema: %v", err)
	}
	if age := time.Since(snap.TakenAt); age < 0 || age > time.Minute {
		t.Errorf("taken_at %s is not now", snap.TakenAt)
	}
	if snap.BrokerMaxTimeoutMs == nil || *snap.BrokerMaxTimeoutMs != 900000 {
		t.Errorf("broker_max_timeout_ms %v, want Kafka's default 900000", snap.BrokerMaxTimeoutMs)
	}
	var tx *jsonout.TxnJSON
	for i := range snap.Transactions {
		if snap.Transactions[i].TransactionalID == id {
			tx = &snap.Transactions[i]
		}
	}
	described := adm.FindTxnCoordinators(ctx, id)[id]
	switch {
	case tx == nil:
		t.Fatalf("%s not in the snapshot", id)
	case tx.State != model.Ongoing:
		t.Errorf("state %s, want Ongoing", tx.State)
	case tx.ProducerID < 0 || tx.ProducerEpoch < 0:
		t.Errorf("producer id %d epoch %d", tx.ProducerID, tx.ProducerEpoch)
	case described.Err != nil || tx.Coordinator != described.NodeID:
		t.Errorf("coordinator %d, FindCoordinator says %d (%v)", tx.Coordinator, described.NodeID, described.Err)
	case tx.TimeoutMs != int32(timeout/time.Millisecond):
		t.Errorf("timeout_ms %d, want %d", tx.TimeoutMs, timeout/time.Millisecond)
	case tx.StartTime == nil || tx.AgeMs == nil || tx.TimeoutRatio == nil:
		t.Errorf("start/age/ratio missing: %+v", tx)
	case *tx.AgeMs < 300 || *tx.AgeMs > 60000 || tx.StartTime.After(snap.TakenAt):
		t.Errorf("start %s, age %d ms at %s: want an age of a few hundred ms up to a minute", tx.StartTime, *tx.AgeMs, snap.TakenAt)
	case *tx.TimeoutRatio <= 0 || *tx.TimeoutRatio >= 1:
		t.Errorf("timeout_ratio %f, want between 0 and 1", *tx.TimeoutRatio)
	case len(tx.Partitions) != 1 || tx.Partitions[0] != tp:
		t.Errorf("partitions %v, want [%v]", tx.Partitions, tp)
	case tx.CommitsSeen != 1 || tx.AbortsSeen != 0:
		// The log's last hour holds the commit before the open transaction.
		t.Errorf("commits_seen %d aborts_seen %d, want the commit before it, from the log's last hour", tx.CommitsSeen, tx.AbortsSeen)
	case snap.History.Source != "coordinator log" || snap.History.WindowSince == nil:
		t.Errorf("history %+v, want the coordinators' log's last hour", snap.History)
	}
	var part *jsonout.PartitionJSON
	for i := range snap.Partitions {
		if snap.Partitions[i].Topic == tp.Topic && snap.Partitions[i].Partition == tp.Partition {
			part = &snap.Partitions[i]
		}
	}
	if part == nil {
		t.Fatalf("%s-%d not in the snapshot's partitions", tp.Topic, tp.Partition)
	}
	hwm, lso := offsetsOf(ctx, t, adm, tp)
	if part.HighWatermark != 4 || part.LastStableOffset != 2 || hwm != 4 || lso != 2 {
		t.Errorf("partition HWM %d LSO %d (broker %d, %d), want 4 and 2", part.HighWatermark, part.LastStableOffset, hwm, lso)
	}
	if part.Leader < 0 {
		t.Errorf("leader %d", part.Leader)
	}
	pr := part.Producers[0]
	if tx != nil && (pr.ProducerID != tx.ProducerID || pr.ProducerEpoch != tx.ProducerEpoch) {
		t.Errorf("producer row %+v is not the transaction's producer %d/%d", pr, tx.ProducerID, tx.ProducerEpoch)
	}
	if pr.CurrentTxnStartOffset == nil || *pr.CurrentTxnStartOffset != 2 {
		t.Errorf("current_txn_start_offset %v, want 2 (the LSO it pins)", pr.CurrentTxnStartOffset)
	}
	if pr.LastTimestamp <= 0 || pr.LastSequence < 0 {
		t.Errorf("producer row %+v: want a last timestamp and sequence", pr)
	}

	endTxn(ctx, t, p, true)
}

func wantKeys(t *testing.T, what string, obj map[string]any, keys ...string) {
	t.Helper()
	var missing []string
	for _, k := range keys {
		if _, ok := obj[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		t.Errorf("%s lacks %s: %v", what, strings.Join(missing, ", "), obj)
	}
}

// findObject returns the element of a JSON array whose key equals want.
func findObject(t *testing.T, arr any, key, want string) map[string]any {
	t.Helper()
	list, ok := arr.([]any)
	if !ok {
		t.Fatalf("not a JSON array: %v", arr)
	}
	for _, el := range list {
		if m, ok := el.(map[string]any); ok && m[key] == want {
			return m
		}
	}
	t.Fatalf("no element with %s = %q among %d", key, want, len(list))
	return nil
}
