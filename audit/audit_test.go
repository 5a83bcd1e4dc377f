package audit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/txnscope/txnscope/model"
)

func forceTerminate(epoch int16) model.Result {
	return model.Result{
		Action: model.Action{Kind: model.ForceTerminate, TransactionalID: "orders-0-12", Coordinator: 2,
			State: model.Ongoing, ProducerID: 4001, ProducerEpoch: epoch},
		At:   time.Date(2026, 3, 1, 3, 4, 5, 0, time.FixedZone("CET", 3600)),
		Sent: true,
	}
}

func readLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q is not JSON: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

func TestRecordAppendsOneLinePerAttempt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "deep", "er", "audit.log")
	l := Open(path)
	if l.Path() != path {
		t.Errorf("Path = %q", l.Path())
	}
	if err := l.Record("127.0.0.1:9092", forceTerminate(7)); err != nil {
		t.Fatal(err)
	}
	refused := model.Result{
		Action: model.Action{Kind: model.AbortPartition, TopicPartition: model.TopicPartition{Topic: "orders", Partition: 5},
			Leader: 1, ProducerID: 9, ProducerEpoch: 2, StartOffset: 100},
		Refused: true, Err: "refused: producer epoch changed 2→3 since you confirmed",
	}
	if err := l.Record("127.0.0.1:9092", refused); err != nil {
		t.Fatal(err)
	}
	brokerErr := forceTerminate(8)
	brokerErr.ErrorCode, brokerErr.Err = "CONCURRENT_TRANSACTIONS", "retriable"
	if err := Open(path).Record("b:1", brokerErr); err != nil { // a second Log on the same file appends too
		t.Fatal(err)
	}

	lines := readLines(t, path)
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3", len(lines))
	}
	first := lines[0]
	for _, k := range []string{"time", "user", "bootstrap", "action", "target", "producer_id", "producer_epoch", "request", "result"} {
		if _, ok := first[k]; !ok {
			t.Errorf("entry lacks %q: %v", k, first)
		}
	}
	if _, ok := first["error_code"]; ok {
		t.Errorf("error_code present without an error: %v", first)
	}
	if first["time"] != "2026-03-01T02:04:05Z" || first["bootstrap"] != "127.0.0.1:9092" || first["action"] != "force-terminate" ||
		first["target"] != "orders-0-12" || first["producer_id"] != 4001.0 || first["producer_epoch"] != 7.0 ||
		first["result"] != "sent; the broker accepted it" || !strings.Contains(first["request"].(string), "InitProducerId") {
		t.Errorf("first entry = %v", first)
	}
	if u, _ := first["user"].(string); u == "" {
		t.Error("no user recorded")
	}
	second := lines[1]
	if second["action"] != "abort-partition" || second["target"] != "orders-5" || second["result"] != refused.Err {
		t.Errorf("second entry = %v", second)
	}
	if ts, err := time.Parse(time.RFC3339, second["time"].(string)); err != nil || time.Since(ts) > time.Minute {
		t.Errorf("a result without a time is stamped now: %v %v", second["time"], err)
	}
	if third := lines[2]; third["error_code"] != "CONCURRENT_TRANSACTIONS" || third["producer_epoch"] != 8.0 ||
		!strings.Contains(third["result"].(string), "CONCURRENT_TRANSACTIONS") {
		t.Errorf("third entry = %v", third)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("audit file mode = %v, %v; want 0600 (it names clusters and users)", fi.Mode(), err)
	}
}

func TestRecordConcurrentLinesDoNotInterleave(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	const writers, each = 8, 25
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Half share a Log, half open their own: both must keep lines whole.
			l := Open(path)
			for i := 0; i < each; i++ {
				r := forceTerminate(int16(i))
				r.Action.TransactionalID = fmt.Sprintf("w%d-%s", w, strings.Repeat("x", 2000))
				if err := l.Record("b:1", r); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	lines := readLines(t, path)
	if len(lines) != writers*each {
		t.Errorf("%d lines, want %d", len(lines), writers*each)
	}
}

func TestRecordUnwritablePath(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	err := Open(filepath.Join(blocker, "audit.log")).Record("b:1", forceTerminate(1))
	if err == nil || !strings.HasPrefix(err.Error(), "audit log: ") {
		t.Errorf("err = %v, want an audit log error", err)
	}
}

func TestDefaultPath(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/state")
	if got := DefaultPath(); got != "/state/txnscope/audit.log" {
		t.Errorf("DefaultPath = %q", got)
	}
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", "/home/op")
	if got := DefaultPath(); got != "/home/op/.local/state/txnscope/audit.log" {
		t.Errorf("DefaultPath = %q", got)
	}
}
