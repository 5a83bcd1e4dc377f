package integration

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// Smoke tests of real Flink on the real broker: a healthy job's transactional ids as the coordinator
// lists and describes them.

// TestRealFlinkHealthy: a healthy EXACTLY_ONCE job, parallelism 3, checkpoints every 3 s, on each
// Flink version with INCREMENTING ids (<prefix>-<subtask>-<checkpoint>), and on 2.2 with POOLING ids
// (<prefix>-<subtask>-<slot>).
func TestRealFlinkHealthy(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ flink, naming string }{
		{"1.20", "incrementing"},
		{"2.2", "incrementing"},
		{"2.2", "pooling"},
	} {
		t.Run(c.flink+"-"+c.naming, func(t *testing.T) {
			t.Parallel()
			testRealFlinkHealthy(t, c.flink, c.naming)
		})
	}
}

func testRealFlinkHealthy(t *testing.T, flink, naming string) {
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	requireRealFlink(ctx, t, flink)
	adm := newAdmin(t, bootstrap)
	const parallelism = 3
	topic := topicWith(ctx, t, adm, parallelism)
	prefix := name(t, "rf")
	job := startRealFlink(t, "flink-"+flink, bootstrap, realFlinkArgs{
		Flink: flink, Topic: topic, Prefix: prefix, Parallelism: parallelism,
		CheckpointInterval: 3 * time.Second, TransactionTimeout: 60 * time.Second, Naming: naming,
		CheckpointDir: t.TempDir(),
	})
	cps := job.waitCheckpoints(ctx, prefix, 3)
	last := checkpointID(t, cps[len(cps)-1])

	// The committer commits after the checkpoint completed: poll until every subtask shows it.
	var txns map[string]kadm.DescribedTransaction
	deadline := time.Now().Add(30 * time.Second)
	for {
		txns = describePrefix(ctx, t, adm, prefix)
		if problem := checkFlinkIDs(prefix, parallelism, naming, last, txns); problem == "" {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("after checkpoint %d of a healthy %s job on Flink %s: %s\ntransactions:\n%s",
				last, naming, flink, problem, formatTxns(txns))
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("Flink %s, %s, after checkpoint %d:\n%s", flink, naming, last, formatTxns(txns))
}

var flinkIDPattern = regexp.MustCompile(`^(.*)-(\d+)-(\d+)$`)

// checkFlinkIDs says what is wrong with a healthy job's ids after checkpoint last completed, or "".
// INCREMENTING: every id is <prefix>-<subtask>-<checkpoint>, subtasks 0..p-1, and each subtask's
// id of checkpoint last is committed. POOLING: <prefix>-<subtask>-<slot>, a few slots reused
// (fewer ids per subtask than checkpoints), each subtask has a committed one.
func checkFlinkIDs(prefix string, parallelism int, naming string, last int64, txns map[string]kadm.DescribedTransaction) string {
	perSubtask := map[int][]int64{}
	committed := map[int]int{}
	for id, tx := range txns {
		m := flinkIDPattern.FindStringSubmatch(id)
		if m == nil || m[1] != prefix {
			return fmt.Sprintf("%s is not %s-<subtask>-<n>", id, prefix)
		}
		s, _ := strconv.Atoi(m[2])
		n, _ := strconv.ParseInt(m[3], 10, 64)
		if s < 0 || s >= parallelism {
			return fmt.Sprintf("%s: subtask %d of a job of parallelism %d", id, s, parallelism)
		}
		perSubtask[s] = append(perSubtask[s], n)
		if tx.State == "CompleteCommit" {
			committed[s]++
		}
	}
	for s := range parallelism {
		if len(perSubtask[s]) == 0 {
			return fmt.Sprintf("subtask %d has no id", s)
		}
		switch naming {
		case "pooling":
			if committed[s] == 0 {
				return fmt.Sprintf("subtask %d has no committed id", s)
			}
			if int64(len(perSubtask[s])) >= last {
				return fmt.Sprintf("subtask %d has %d ids after %d checkpoints: not a pool", s, len(perSubtask[s]), last)
			}
		default:
			id := fmt.Sprintf("%s-%d-%d", prefix, s, last)
			if tx, ok := txns[id]; !ok || tx.State != "CompleteCommit" {
				return fmt.Sprintf("%s (subtask %d, checkpoint %d) is %q, want CompleteCommit", id, s, last, tx.State)
			}
		}
	}
	return ""
}

// describePrefix lists and describes the transactions whose id starts with prefix+"-".
func describePrefix(ctx context.Context, t *testing.T, adm *kadm.Client, prefix string) map[string]kadm.DescribedTransaction {
	t.Helper()
	listed, err := adm.ListTransactions(ctx, nil, nil)
	if err != nil {
		t.Fatalf("ListTransactions: %v", err)
	}
	var ids []string
	for id := range listed {
		if strings.HasPrefix(id, prefix+"-") {
			ids = append(ids, id)
		}
	}
	out := map[string]kadm.DescribedTransaction{}
	if len(ids) == 0 {
		return out
	}
	described, err := adm.DescribeTransactions(ctx, ids...)
	if err != nil {
		t.Fatalf("DescribeTransactions: %v", err)
	}
	for id, d := range described {
		if d.Err == nil {
			out[id] = d
		}
	}
	return out
}

func formatTxns(txns map[string]kadm.DescribedTransaction) string {
	ids := make([]string, 0, len(txns))
	for id := range txns {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var b strings.Builder
	for _, id := range ids {
		tx := txns[id]
		fmt.Fprintf(&b, "  %s %s pid=%d epoch=%d partitions=%d\n", id, tx.State, tx.ProducerID, tx.ProducerEpoch, len(tx.Topics))
	}
	return b.String()
}
