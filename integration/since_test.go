package integration

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/jsonout"
	"github.com/txnscope/txnscope/internal/testutil"
)

// TestBinarySnapshotSince runs `txnscope snapshot --since 10m` against the
// real broker: the replay lists a commit, a producer's abort and a timeout
// of the window with the coordinator's times and who ended each; the rows
// count them; the table prints the same events under the table.
func TestBinarySnapshotSince(t *testing.T) {
	t.Parallel()
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	bin := buildTxnscope(ctx, t)
	tp := topicOn(ctx, t, newAdmin(t, bootstrap))
	id := name(t, "txn")
	p := producer(t, bootstrap, id, 2*time.Second)
	openTxn(ctx, t, p, tp, 1, "c")
	endTxn(ctx, t, p, true)
	openTxn(ctx, t, p, tp, 1, "a")
	endTxn(ctx, t, p, false)
	openTxn(ctx, t, p, tp, 1, "t") // left to time out

	var doc jsonout.SnapshotJSON
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Second) {
		out := mustRun(ctx, t, bin, "snapshot", "--since", "10m", "-o", "json", "-b", bootstrap)
		testutil.CheckSnapshotJSON(t, out)
		doc = jsonout.SnapshotJSON{}
		if err := json.Unmarshal(out, &doc); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, out)
		}
		if tx := sinceRow(doc, id); tx != nil && tx.AbortsSeen == 2 || time.Now().After(deadline) {
			break
		}
	}
	var got []string
	for _, e := range doc.Replay.Events {
		if e.TransactionalID == id && e.Kind.Ends() {
			got = append(got, string(e.Kind))
			if e.Begin == nil || e.DurationMs == nil || *e.Partitions != 1 || e.At.Before(*e.Begin) {
				t.Errorf("event %+v: want its begin, duration and partitions", e)
			}
		}
	}
	if strings.Join(got, ", ") != "committed, aborted, aborted at timeout" {
		t.Fatalf("replayed endings %q, want committed, aborted, aborted at timeout", got)
	}
	if doc.History.Source != "coordinator log" || doc.Replay.CompleteSince == nil || time.Since(doc.Replay.Since) < 10*time.Minute {
		t.Errorf("history %+v, replay since %s complete since %v", doc.History, doc.Replay.Since, doc.Replay.CompleteSince)
	}
	if tx := sinceRow(doc, id); tx == nil || tx.CommitsSeen != 1 || tx.AbortsSeen != 2 || len(tx.RecentTransactions) != 3 {
		t.Errorf("row %+v: want 1 commit and 2 aborts seen, 3 recent transactions", tx)
	}

	// Without --since, the same history from the log's last hour, the events not printed; with
	// --history polls, one read of the cluster, and the JSON says which.
	var plain jsonout.SnapshotJSON
	if err := json.Unmarshal(mustRun(ctx, t, bin, "snapshot", "-o", "json", "-b", bootstrap), &plain); err != nil {
		t.Fatal(err)
	}
	if plain.History.Source != "coordinator log" || plain.History.WindowSince == nil || time.Since(*plain.History.WindowSince) < 59*time.Minute || plain.Replay != nil {
		t.Errorf("snapshot without --since: history %+v, replay %v: want the log's last hour, no replay printed", plain.History, plain.Replay != nil)
	}
	if tx := sinceRow(plain, id); tx == nil || tx.CommitsSeen != 1 || tx.AbortsSeen != 2 || tx.Commits60m != 1 {
		t.Errorf("row without --since %+v: want the hour's 1 commit and 2 aborts", tx)
	}
	var polls jsonout.SnapshotJSON
	if err := json.Unmarshal(mustRun(ctx, t, bin, "snapshot", "-o", "json", "--history", "polls", "-b", bootstrap), &polls); err != nil {
		t.Fatal(err)
	}
	if polls.History.Source != "polls" || polls.History.WindowSince != nil || !strings.Contains(polls.History.Why, "--history polls") {
		t.Errorf("snapshot --history polls: history %+v", polls.History)
	}
	if tx := sinceRow(polls, id); tx == nil || tx.Commits60m != 0 {
		t.Errorf("row on one read %+v: want no counts of the last hour", tx)
	}

	table := string(mustRun(ctx, t, bin, "snapshot", "--since", "10m", "-b", bootstrap))
	for _, want := range []string{"# the coordinators' log since ", "committed", "aborted-at-timeout"} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}
}

// mustRun runs the binary and returns its stdout, failing on a non-zero exit.
func mustRun(ctx context.Context, t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	stdout, stderr, code := runBin(ctx, bin, args...)
	if code != 0 {
		t.Fatalf("txnscope %s: exit %d\nstderr: %s", strings.Join(args, " "), code, stderr)
	}
	return []byte(stdout)
}

func sinceRow(doc jsonout.SnapshotJSON, id string) *jsonout.TxnJSON {
	for i := range doc.Transactions {
		if doc.Transactions[i].TransactionalID == id {
			return &doc.Transactions[i]
		}
	}
	return nil
}
