package e2e

import (
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
)

// resignCoordinators makes every kfake broker answer as a real Kafka broker
// does between losing its __transaction_state partitions and loading them
// again, while on is set: ListTransactions an empty list without error,
// DescribeTransactions NOT_COORDINATOR for every id.
func resignCoordinators(c *kfake.Cluster, on *atomic.Bool) {
	c.ControlKey(int16(kmsg.ListTransactions), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if !on.Load() {
			return nil, nil, false
		}
		req := kreq.(*kmsg.ListTransactionsRequest)
		resp := req.ResponseKind().(*kmsg.ListTransactionsResponse)
		resp.Version = req.Version
		return resp, nil, true
	})
	c.ControlKey(int16(kmsg.DescribeTransactions), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if !on.Load() {
			return nil, nil, false
		}
		req := kreq.(*kmsg.DescribeTransactionsRequest)
		resp := req.ResponseKind().(*kmsg.DescribeTransactionsResponse)
		resp.Version = req.Version
		for _, id := range req.TransactionalIDs {
			st := kmsg.NewDescribeTransactionsResponseTransactionState()
			st.TransactionalID, st.ErrorCode = id, kerr.NotCoordinator.Code
			resp.TransactionStates = append(resp.TransactionStates, st)
		}
		return resp, nil, true
	})
}

// TestE2EFindHangingWhileCoordinatorsLoad: while the coordinators cannot
// vouch for their listing, find-hanging reports nothing, exits 1 with the
// reason on one line (in -o json too), and abort refuses without a marker.
func TestE2EFindHangingWhileCoordinatorsLoad(t *testing.T) {
	quickExit(t)
	c, bs := kafkatest.NewCluster(t)
	b := strings.Join(bs, ",")
	kafkatest.OpenTxn(t, bs, "live-0-3", "orders", time.Minute)
	var resigned atomic.Bool
	resigned.Store(true)
	resignCoordinators(c, &resigned)
	var markers atomic.Int64
	c.ControlKey(int16(kmsg.WriteTxnMarkers), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		markers.Add(1)
		return nil, nil, false
	})
	time.Sleep(5 * time.Millisecond) // older than --max-transaction-timeout 0

	r := run1(t, "find-hanging", "-b", b, "--topic", "orders", "--max-transaction-timeout", "0")
	if _, rows := tableRows(t, r.stdout); r.code != 1 || len(rows) != 0 || strings.Count(r.stderr, "\n") != 1 ||
		!strings.Contains(r.stderr, "owners unknown") || !strings.Contains(r.stderr, "NOT_COORDINATOR") {
		t.Fatalf("find-hanging while resigned: exit %d, rows %v, stderr %q", r.code, rows, r.stderr)
	}
	var fj struct {
		Hanging       []map[string]any `json:"hanging"`
		OwnersUnknown *string          `json:"owners_unknown"`
	}
	r = run1(t, "find-hanging", "-b", b, "--topic", "orders", "--max-transaction-timeout", "0", "-o", "json")
	if err := json.Unmarshal([]byte(r.stdout), &fj); err != nil || r.code != 1 || len(fj.Hanging) != 0 ||
		fj.OwnersUnknown == nil || !strings.Contains(*fj.OwnersUnknown, "NOT_COORDINATOR") {
		t.Fatalf("find-hanging -o json while resigned: exit %d, %v\n%s", r.code, err, r.stdout)
	}
	r = run1(t, "abort", "-b", b, "--topic", "orders", "--partition", "0", "--start-offset", "0", "--yes",
		"--max-transaction-timeout", "0", "--audit-log", t.TempDir()+"/audit.log")
	if r.code != 1 || !strings.Contains(r.stderr, "refused") || !strings.Contains(r.stderr, "NOT_COORDINATOR") || markers.Load() != 0 {
		t.Fatalf("abort while resigned: exit %d, stderr %q, %d markers", r.code, r.stderr, markers.Load())
	}

	resigned.Store(false)
	r = run1(t, "find-hanging", "-b", b, "--topic", "orders", "--max-transaction-timeout", "0", "-o", "json")
	fj.OwnersUnknown = nil
	if err := json.Unmarshal([]byte(r.stdout), &fj); err != nil || r.code != 0 || len(fj.Hanging) != 0 || fj.OwnersUnknown != nil {
		t.Fatalf("find-hanging once loaded: exit %d, %v, stderr %q\n%s", r.code, err, r.stderr, r.stdout)
	}
}
