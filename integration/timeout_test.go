package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/txnscope/txnscope/internal/jsonout"
	"github.com/txnscope/txnscope/model"
)

// Scenario 6: transaction.timeout.ms against the broker's transaction.max.timeout.ms, and
// against the job's checkpoint interval.

const belowInterval = "timeout below 2× the checkpoint interval"

// runSnapshot runs the built `txnscope snapshot` with args and returns its stdout.
func runSnapshot(ctx context.Context, t *testing.T, bin, bootstrap string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, append([]string{"snapshot", "-b", bootstrap, "--timeout", "10s"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("txnscope snapshot %s: %v\nstderr: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

func snapshotJSON(ctx context.Context, t *testing.T, bin, bootstrap string, args ...string) jsonout.SnapshotJSON {
	t.Helper()
	out := runSnapshot(ctx, t, bin, bootstrap, append([]string{"-o", "json"}, args...)...)
	var snap jsonout.SnapshotJSON
	if err := json.Unmarshal([]byte(out), &snap); err != nil {
		t.Fatalf("snapshot -o json %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return snap
}

func txnJSON(t *testing.T, snap jsonout.SnapshotJSON, id string) jsonout.TxnJSON {
	t.Helper()
	for _, tx := range snap.Transactions {
		if tx.TransactionalID == id {
			return tx
		}
	}
	t.Fatalf("%s not in the snapshot (%d transactions)", id, len(snap.Transactions))
	return jsonout.TxnJSON{}
}

// tableRow returns the table row of id split into its first 12 columns, the last one
// (PROBLEMS) whole.
func tableRow(t *testing.T, table, id string) []string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) == 0 || !strings.HasSuffix(strings.TrimSpace(lines[0]), "COORD  PROBLEMS") {
		t.Fatalf("table header does not end with PROBLEMS:\n%s", table)
	}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) >= 12 && f[0] == id {
			// The eleven columns before PROBLEMS hold no spaces; problems hold single ones.
			return append(f[:11:11], strings.Join(f[11:], " "))
		}
	}
	t.Fatalf("no row for %s in:\n%s", id, table)
	return nil
}

// TestTimeoutAboveBrokerMax: a producer asking for a transaction.timeout.ms above the broker's
// transaction.max.timeout.ms (Kafka's default, 15 minutes, on the test broker) is refused with
// INVALID_TRANSACTION_TIMEOUT and its id never exists; one asking for exactly the maximum is
// accepted. txnscope's snapshot shows the broker's maximum, and no problem for the accepted one.
func TestTimeoutAboveBrokerMax(t *testing.T) {
	t.Parallel()
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	bin := buildTxnscope(ctx, t)
	adm := newAdmin(t, bootstrap)
	tp := topicOn(ctx, t, adm)
	const brokerMax = 15 * time.Minute

	refusedID := name(t, "txn-refused")
	refused := producer(t, bootstrap, refusedID, brokerMax+time.Second, kgo.RetryTimeout(10*time.Second))
	// franz-go sends InitProducerId as soon as the client starts; the broker's refusal is
	// what every transactional call then returns.
	_, _, err := refused.ProducerID(ctx)
	if !errors.Is(err, kerr.InvalidTransactionTimeout) {
		t.Fatalf("InitProducerId with transaction.timeout.ms above the broker max: %v, want INVALID_TRANSACTION_TIMEOUT", err)
	}
	t.Logf("refused: %v", err)
	if err := refused.BeginTransaction(); !errors.Is(err, kerr.InvalidTransactionTimeout) {
		t.Errorf("BeginTransaction after the refusal: %v, want INVALID_TRANSACTION_TIMEOUT", err)
	}

	acceptedID := name(t, "txn-at-max")
	accepted := producer(t, bootstrap, acceptedID, brokerMax)
	openTxn(ctx, t, accepted, tp, 1, "at-max")

	snap := snapshotJSON(ctx, t, bin, bootstrap)
	if snap.BrokerMaxTimeoutMs == nil || *snap.BrokerMaxTimeoutMs != brokerMax.Milliseconds() {
		t.Errorf("broker_max_timeout_ms %v, want %d", snap.BrokerMaxTimeoutMs, brokerMax.Milliseconds())
	}
	if slices.ContainsFunc(snap.Transactions, func(tx jsonout.TxnJSON) bool { return tx.TransactionalID == refusedID }) {
		t.Errorf("the refused producer's id %s exists", refusedID)
	}
	tx := txnJSON(t, snap, acceptedID)
	if tx.State != model.Ongoing || tx.TimeoutMs != int32(brokerMax.Milliseconds()) || len(tx.Problems) != 0 {
		t.Errorf("accepted transaction %+v: want Ongoing, timeout_ms %d, no problems", tx, brokerMax.Milliseconds())
	}
	endTxn(ctx, t, accepted, false)
}

// TestTimeoutBelowCheckpointInterval: a transaction with a 15 s timeout is flagged by the real
// `txnscope snapshot` (table and JSON) when the jobs checkpoint every 10 s (15 s < 2 × 10 s),
// and not without --checkpoint-interval or with a 5 s one.
func TestTimeoutBelowCheckpointInterval(t *testing.T) {
	t.Parallel()
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	bin := buildTxnscope(ctx, t)
	adm := newAdmin(t, bootstrap)
	tp := topicOn(ctx, t, adm)
	id := name(t, "txn")
	p := producer(t, bootstrap, id, 15*time.Second)
	openTxn(ctx, t, p, tp, 2, "short")

	for _, tc := range []struct {
		args    []string
		flagged bool
	}{
		{[]string{"--checkpoint-interval", "10s"}, true},
		{nil, false},
		{[]string{"--checkpoint-interval", "5s"}, false},
	} {
		what := "snapshot " + strings.Join(tc.args, " ")
		row := tableRow(t, runSnapshot(ctx, t, bin, bootstrap, append([]string{"-o", "table"}, tc.args...)...), id)
		if row[1] != "Ongoing" || row[5] != "15s" {
			t.Errorf("%s: row %q, want Ongoing with TIMEOUT 15s", what, row)
		}
		if got := strings.Contains(row[11], belowInterval); got != tc.flagged {
			t.Errorf("%s -o table: PROBLEMS %q, flagged %v, want %v", what, row[11], got, tc.flagged)
		}
		tx := txnJSON(t, snapshotJSON(ctx, t, bin, bootstrap, tc.args...), id)
		if tx.Problems == nil {
			t.Errorf("%s -o json: problems is null, want an array", what)
		}
		if got := slices.Contains(tx.Problems, belowInterval); got != tc.flagged {
			t.Errorf("%s -o json: problems %q, flagged %v, want %v", what, tx.Problems, got, tc.flagged)
		}
		if tx.State != model.Ongoing || tx.TimeoutMs != 15000 {
			t.Errorf("%s -o json: %+v, want Ongoing with timeout_ms 15000", what, tx)
		}
	}
	endTxn(ctx, t, p, true)
}
