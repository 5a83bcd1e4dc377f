package audit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/txnscope/txnscope/model"
)

var start = time.Date(2026, 3, 1, 3, 0, 0, 120e6, time.UTC)

func terminate(epoch int16) model.Action {
	return model.Action{Kind: model.ForceTerminate, TransactionalID: "orders-0-12", Coordinator: 2, State: model.Ongoing,
		ProducerID: 4001, ProducerEpoch: epoch, Start: start, Partitions: []model.TopicPartition{{Topic: "orders", Partition: 0}}}
}

func openLog(t *testing.T, path string) *Log {
	t.Helper()
	l := New(path)
	if err := l.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
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
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q is not JSON: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

// An attempt is two lines joined by its id: the attempt, on disk before the
// request goes out, and the result.
func TestAttemptThenResult(t *testing.T) {
	path := filepath.Join(t.TempDir(), "deep", "er", "audit.log")
	l := openLog(t, path)
	at := l.Begin("127.0.0.1:9092", terminate(7))
	if err := at.Sending(1, ""); err != nil {
		t.Fatal(err)
	}
	// Written through before anything is sent: another reader sees it now.
	lines := readLines(t, path)
	if len(lines) != 1 || lines[0]["phase"] != "attempt" || lines[0]["try"] != 1.0 || lines[0]["attempt"] != at.ID() {
		t.Fatalf("after Sending: %v", lines)
	}
	first := lines[0]
	for k, want := range map[string]any{"bootstrap": "127.0.0.1:9092", "action": "force-terminate", "target": "orders-0-12",
		"transactional_id": "orders-0-12", "state": "Ongoing", "txn_start": "2026-03-01T03:00:00.12Z", "producer_id": 4001.0,
		"producer_epoch": 7.0, "pid": float64(os.Getpid())} {
		if first[k] != want {
			t.Errorf("attempt line %s = %v, want %v", k, first[k], want)
		}
	}
	if u, _ := first["user"].(string); u == "" {
		t.Error("no user recorded")
	}
	if !strings.Contains(first["request"].(string), "InitProducerId") || first["partitions"] == nil {
		t.Errorf("attempt line = %v", first)
	}
	r := model.Result{Action: terminate(7), At: start.Add(time.Second), Sent: true, Sends: 1, After: "now CompleteAbort at epoch 8"}
	if err := at.Done(r); err != nil {
		t.Fatal(err)
	}
	lines = readLines(t, path)
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2", len(lines))
	}
	res := lines[1]
	if res["phase"] != "result" || res["attempt"] != at.ID() || res["outcome"] != "sent" || res["sends"] != 1.0 ||
		res["result"] != "sent; the broker accepted it; now CompleteAbort at epoch 8" || res["time"] != "2026-03-01T03:00:01.12Z" ||
		res["target"] != "orders-0-12" {
		t.Errorf("result line = %v", res)
	}
	if _, ok := res["error_code"]; ok {
		t.Errorf("error_code without an error: %v", res)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("audit file mode = %v, %v; want 0600 (it names clusters and users)", fi.Mode(), err)
	}
	if at2 := l.Begin("b", terminate(7)); at2.ID() == at.ID() || len(at2.ID()) != 16 {
		t.Errorf("attempt ids %q and %q", at.ID(), at2.ID())
	}
}

func TestResultOutcomes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	l := openLog(t, path)
	ap := model.Action{Kind: model.AbortPartition, TopicPartition: model.TopicPartition{Topic: "orders", Partition: 5},
		Leader: 1, ProducerID: 9, ProducerEpoch: 2, CoordinatorEpoch: -1, StartOffset: 100, MinIdle: 15 * time.Minute}
	for _, tc := range []struct {
		r       model.Result
		outcome string
	}{
		{model.Result{Action: ap, Refused: true, Err: "refused: producer epoch changed 2→3 since it was shown"}, "refused"},
		{model.Result{Action: ap, Sent: true, Sends: 1, Unknown: true, Err: "interrupted while the request to broker 1 was in flight"}, "unknown"},
		{model.Result{Action: ap, Sent: true, Sends: 1, ErrorCode: "CLUSTER_AUTHORIZATION_FAILED", Err: "no"}, "failed"},
	} {
		if err := l.Begin("b:1", ap).Done(tc.r); err != nil {
			t.Fatal(err)
		}
	}
	lines := readLines(t, path)
	if len(lines) != 3 {
		t.Fatalf("%d lines", len(lines))
	}
	for i, want := range []string{"refused", "unknown", "failed"} {
		if lines[i]["outcome"] != want || lines[i]["phase"] != "result" {
			t.Errorf("line %d = %v, want outcome %s", i, lines[i], want)
		}
	}
	if l := lines[0]; l["target"] != "orders-5" || l["start_offset"] != 100.0 || l["coordinator_epoch"] != -1.0 ||
		l["idle_rule"] != "idle over 15m0s" || l["sends"] != 0.0 {
		t.Errorf("abort-partition line = %v", l)
	}
	if l := lines[2]; l["error_code"] != "CLUSTER_AUTHORIZATION_FAILED" {
		t.Errorf("error line = %v", l)
	}
}

// Ids are anyone's to choose: a line stays one line of JSON whatever they hold.
func TestHostileIDsStayOneLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	l := openLog(t, path)
	a := terminate(1)
	a.TransactionalID = "x\n{\"phase\":\"result\"}\r\x1b]0;pwned\x07\u2028\u009b31m\u202e"
	at := l.Begin("b", a)
	if err := at.Sending(1, ""); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if strings.Count(string(b), "\n") != 1 || strings.ContainsAny(string(b), "\r\x1b\x07\u009b\u202e\u2028") {
		t.Fatalf("line = %q", b)
	}
	if got := readLines(t, path)[0]["transactional_id"]; got != a.TransactionalID {
		t.Errorf("id read back %q", got)
	}
}

func TestConcurrentLinesDoNotInterleave(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	const writers, each = 8, 25
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Go(func() {
			// Each its own Log on the same file, as two txnscope processes.
			l := openLog(t, path)
			for i := 0; i < each; i++ {
				a := terminate(int16(i))
				a.TransactionalID = fmt.Sprintf("w%d-%s", w, strings.Repeat("x", 2000))
				if err := l.Begin("b:1", a).Sending(1, ""); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if lines := readLines(t, path); len(lines) != writers*each {
		t.Errorf("%d lines, want %d", len(lines), writers*each)
	}
}

// Every way the log can be unwritable is found by Open, before an abort can
// be confirmed, with one line saying why.
func TestOpenRefuses(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(dir, "anyone")
	if err := os.Mkdir(open, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(open, 0o777)
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o500); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, path, want string }{
		{"no path (HOME unset)", "", "neither XDG_STATE_HOME nor HOME is set"},
		{"a directory", dir, "is not a regular file (a directory)"},
		{"/dev/full", "/dev/full", "is not a regular file (a device)"},
		{"a FIFO", fifo, "is not a regular file (a FIFO)"},
		{"under a file", filepath.Join(file, "audit.log"), "not a directory"},
		{"a directory anyone may write", filepath.Join(open, "audit.log"), "is writable by anyone"},
	}
	if os.Geteuid() != 0 { // root writes anywhere
		cases = append(cases, struct{ name, path, want string }{"a read-only directory", filepath.Join(ro, "audit.log"), "permission denied"})
	}
	for _, tc := range cases {
		err := New(tc.path).Open()
		if err == nil || !strings.HasPrefix(err.Error(), "audit log: ") || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: Open = %v, want one line saying %q", tc.name, err, tc.want)
		}
	}
}

// A write that fails after Open (a full disk) fails Sending: the request is
// then not sent.
func TestSendingFailsWhenTheWriteFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	l := openLog(t, path)
	ro, err := os.Open(path) // the same file, refusing writes: as a full disk
	if err != nil {
		t.Fatal(err)
	}
	l.f.Close()
	l.f = ro
	if err := l.Begin("b", terminate(1)).Sending(1, ""); err == nil || !strings.HasPrefix(err.Error(), "audit log: ") {
		t.Errorf("Sending = %v", err)
	}
	if err := New("x").Begin("b", terminate(1)).Sending(1, ""); err == nil || !strings.Contains(err.Error(), "not open") {
		t.Errorf("Sending on a log never opened = %v", err)
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
	t.Setenv("XDG_STATE_HOME", "state") // relative: ignored
	if got := DefaultPath(); got != "/home/op/.local/state/txnscope/audit.log" {
		t.Errorf("DefaultPath with a relative XDG_STATE_HOME = %q", got)
	}
	t.Setenv("HOME", "")
	if got := DefaultPath(); got != "" {
		t.Errorf("DefaultPath without HOME = %q, want none (never a shared temporary directory)", got)
	}
}

// A log rotated or deleted while txnscope runs: the next line goes to the file
// at the path, where the operator will look, not to the unlinked one.
func TestFollowsTheFileAtItsPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	l := openLog(t, path)
	if err := l.Begin("b", terminate(1)).Sending(1, ""); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path, path+".1"); err != nil { // logrotate
		t.Fatal(err)
	}
	if err := l.Begin("b", terminate(2)).Sending(1, ""); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil { // deleted by hand
		t.Fatal(err)
	}
	if err := l.Begin("b", terminate(3)).Sending(1, ""); err != nil {
		t.Fatal(err)
	}
	if got := readLines(t, path); len(got) != 1 || got[0]["producer_epoch"] != 3.0 {
		t.Errorf("lines at the path: %v", got)
	}
	if got := readLines(t, path+".1"); len(got) != 1 || got[0]["producer_epoch"] != 1.0 {
		t.Errorf("lines in the rotated file: %v", got)
	}
}

// A commit's lines carry what its request rests on: the plan's evidence
// until the executor reads it again, then the evidence it read (when), with
// the Flink job and the checkpoint directory named.
func TestCommitLinesCarryTheRecheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	l := openLog(t, path)
	a := terminate(7)
	a.Kind = model.Commit
	a.Verdict = model.Verdict{Kind: model.Checkpointed, CompletedIn: 12, Evidence: "as planned",
		Basis: model.Basis{FlinkURL: "http://jm:8081", FlinkJobID: "0123456789abcdef0123456789abcdef", FlinkJobName: "orders", FlinkState: "FAILED", Dir: "/chk/0123456789abcdef0123456789abcdef"}}
	at := l.Begin("127.0.0.1:9092", a)
	if err := at.Sending(1, ""); err != nil {
		t.Fatal(err)
	}
	read := start.Add(5 * time.Second)
	again := a.Verdict
	again.Evidence, again.CompletedIn = "read again", 13
	again.Basis.Committable = &model.Committable{ID: "orders-0-12", ProducerID: 4001, Epoch: 7}
	at.Rests(model.CommitEvidence{Verdict: again, FlinkState: "FAILED", At: read})
	if err := at.Sending(2, ""); err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, path)
	if len(lines) != 2 {
		t.Fatalf("%d lines", len(lines))
	}
	if l := lines[0]; l["evidence"] != "as planned" || l["evidence_read_at"] != nil || l["flink_job_id"] != "0123456789abcdef0123456789abcdef" {
		t.Errorf("before the re-check: %v", l)
	}
	for k, want := range map[string]any{"evidence": "read again", "completed_in": 13.0, "evidence_read_at": "2026-03-01T03:00:05.12Z",
		"flink_job": "orders", "flink_job_id": "0123456789abcdef0123456789abcdef", "flink_state": "FAILED", "job_manager": "http://jm:8081",
		"checkpoint_dir": "/chk/0123456789abcdef0123456789abcdef", "committable": "orders-0-12 pid 4001 epoch 7"} {
		if lines[1][k] != want {
			t.Errorf("after the re-check, %s = %v, want %v", k, lines[1][k], want)
		}
	}
}
