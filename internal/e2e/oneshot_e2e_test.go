package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/audit"
	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
)

// tableRows parses kafka-transactions.sh's table format: a header line, then
// rows, every cell padded and followed by a tab.
func tableRows(t *testing.T, out string) (header []string, rows []map[string]string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	cells := func(l string) []string {
		if !strings.HasSuffix(l, "\t") {
			t.Errorf("line %q does not end with a tab, as kafka-transactions.sh's lines do", l)
		}
		f := strings.Split(strings.TrimSuffix(l, "\t"), "\t")
		for i := range f {
			f[i] = strings.TrimRight(f[i], " ")
		}
		return f
	}
	header = cells(lines[0])
	for _, l := range lines[1:] {
		c := cells(l)
		if len(c) != len(header) {
			t.Fatalf("row %q has %d cells, header %d", l, len(c), len(header))
		}
		r := map[string]string{}
		for i, h := range header {
			r[h] = c[i]
		}
		rows = append(rows, r)
	}
	return header, rows
}

func mustOK(t *testing.T, r result, args ...string) {
	t.Helper()
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("txnscope %s: exit %d, stderr %q\n%s", strings.Join(args, " "), r.code, r.stderr, r.stdout)
	}
}

func run1(t *testing.T, args ...string) result {
	t.Helper()
	return runProgram(t, args...)
}

// quickExit stops a race-enabled program from sleeping a second on every
// successful exit (the race runtime's atexit_sleep_ms): these tests run it
// dozens of times.
func quickExit(t *testing.T) {
	t.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
}

func offsets(t *testing.T, bs []string, topic string, p int32) (hwm, lso int64) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bs...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	stable, err := adm.ListCommittedOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := ends.Lookup(topic, p)
	s, _ := stable.Lookup(topic, p)
	return e.Offset, s.Offset
}

func TestE2EOneShotRead(t *testing.T) {
	quickExit(t)
	c, bs := kafkatest.NewCluster(t)
	b := strings.Join(bs, ",")
	kafkatest.OpenTxn(t, bs, "orders-sink-0-7", "orders", time.Minute)
	done := kafkatest.Producer(t, bs, "orders-sink-1-7", time.Minute)
	kafkatest.Begin(t, done)
	kafkatest.Produce(t, done, "orders", 1, 2)
	kafkatest.End(t, done, true)

	// list: kafka-transactions.sh's columns, one row per id, sorted by id.
	r := run1(t, "list", "-b", b)
	mustOK(t, r)
	header, rows := tableRows(t, r.stdout)
	if strings.Join(header, "|") != "TransactionalId|Coordinator|ProducerId|TransactionState" {
		t.Errorf("list columns %q", header)
	}
	if len(rows) != 2 || rows[0]["TransactionalId"] != "orders-sink-0-7" || rows[0]["TransactionState"] != "Ongoing" ||
		rows[1]["TransactionalId"] != "orders-sink-1-7" {
		t.Errorf("list rows %v", rows)
	}
	pid := rows[0]["ProducerId"]
	if _, err := strconv.Atoi(rows[0]["Coordinator"]); err != nil {
		t.Errorf("coordinator %q", rows[0]["Coordinator"])
	}
	// Byte for byte kafka-transactions.sh's layout: the widest cell sets the
	// column's width, every cell ends with a tab.
	pidWidth := max(len(rows[0]["ProducerId"]), len(rows[1]["ProducerId"]))
	wantHeader := "TransactionalId\tCoordinator\tProducerId" + strings.Repeat(" ", pidWidth-len("ProducerId")) + "\tTransactionState\t"
	if first, _, _ := strings.Cut(r.stdout, "\n"); first != wantHeader {
		t.Errorf("list header line %q, want %q", first, wantHeader)
	}

	// list -o json: the same rows.
	r = run1(t, "list", "-b", b, "-o", "json")
	mustOK(t, r)
	var lj struct {
		Transactions []map[string]any `json:"transactions"`
	}
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.UseNumber() // kfake's producer ids are beyond float64's integers
	if err := dec.Decode(&lj); err != nil {
		t.Fatalf("list -o json: %v\n%s", err, r.stdout)
	}
	if len(lj.Transactions) != 2 || keysOf(lj.Transactions[0]) != "coordinator,producer_id,state,transactional_id" ||
		lj.Transactions[0]["transactional_id"] != "orders-sink-0-7" || lj.Transactions[0]["producer_id"].(json.Number).String() != pid {
		t.Errorf("list -o json: %s", r.stdout)
	}

	// --duration-filter: the just-begun transaction is not running longer than a minute.
	r = run1(t, "list", "-b", b, "--duration-filter", "60000")
	mustOK(t, r)
	if strings.Contains(r.stdout, "orders-sink-0-7") {
		t.Errorf("--duration-filter 60000 kept a second-old transaction:\n%s", r.stdout)
	}
	r = run1(t, "list", "-b", b, "--duration-filter", "0")
	mustOK(t, r)
	if !strings.Contains(r.stdout, "orders-sink-0-7") {
		t.Errorf("--duration-filter 0 dropped the open transaction:\n%s", r.stdout)
	}
	r = run1(t, "list", "-b", b, "--transactional-id-pattern", "^orders-sink-1-")
	if r.code != 1 || !strings.Contains(r.stderr, "ListTransactions v2") {
		// kfake here is capped at Kafka 3.9: no pattern filter, and it must
		// not pass for an empty result.
		t.Errorf("pattern on a 3.9 cluster: exit %d, stderr %q, stdout %q", r.code, r.stderr, r.stdout)
	}

	// describe.
	r = run1(t, "describe", "-b", b, "--transactional-id", "orders-sink-0-7")
	mustOK(t, r)
	header, rows = tableRows(t, r.stdout)
	if strings.Join(header, "|") != "CoordinatorId|TransactionalId|ProducerId|ProducerEpoch|TransactionState|TransactionTimeoutMs|CurrentTransactionStartTimeMs|TransactionDurationMs|TopicPartitions" {
		t.Errorf("describe columns %q", header)
	}
	if len(rows) != 1 || rows[0]["TransactionState"] != "Ongoing" || rows[0]["TopicPartitions"] != "orders-0" ||
		rows[0]["TransactionTimeoutMs"] != "60000" || rows[0]["ProducerId"] != pid || rows[0]["CurrentTransactionStartTimeMs"] == "None" {
		t.Errorf("describe rows %v", rows)
	}
	r = run1(t, "describe", "-b", b, "--transactional-id", "orders-sink-0-7", "-o", "json")
	mustOK(t, r)
	var dj map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &dj); err != nil {
		t.Fatal(err)
	}
	if keysOf(dj) != "coordinator,duration_ms,partitions,producer_epoch,producer_id,start_timestamp,state,timeout_ms,transactional_id" ||
		dj["state"] != "Ongoing" || dj["start_timestamp"] == nil {
		t.Errorf("describe -o json: %s", r.stdout)
	}
	r = run1(t, "describe", "-b", b, "--transactional-id", "nobody")
	if r.code != 1 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "TRANSACTIONAL_ID_NOT_FOUND") {
		t.Errorf("describe of an unknown id: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}

	// describe-producers, at the leader and at a named broker.
	leader := strconv.Itoa(int(c.LeaderFor("orders", 0)))
	for _, extra := range [][]string{nil, {"--broker-id", leader}} {
		args := append([]string{"describe-producers", "-b", b, "--topic", "orders", "--partition", "0"}, extra...)
		r = run1(t, args...)
		mustOK(t, r, args...)
		header, rows = tableRows(t, r.stdout)
		if strings.Join(header, "|") != "ProducerId|ProducerEpoch|LatestCoordinatorEpoch|LastSequence|LastTimestamp|CurrentTransactionStartOffset" {
			t.Errorf("describe-producers columns %q", header)
		}
		if len(rows) != 1 || rows[0]["ProducerId"] != pid || rows[0]["CurrentTransactionStartOffset"] != "0" {
			t.Errorf("describe-producers %v: %v", extra, rows)
		}
	}
	r = run1(t, "describe-producers", "-b", b, "--topic", "orders", "--partition", "0", "-o", "json")
	mustOK(t, r)
	var pj struct {
		Topic     string           `json:"topic"`
		Partition int32            `json:"partition"`
		Producers []map[string]any `json:"producers"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &pj); err != nil || pj.Topic != "orders" || len(pj.Producers) != 1 ||
		keysOf(pj.Producers[0]) != "coordinator_epoch,current_txn_start_offset,last_sequence,last_timestamp,producer_epoch,producer_id" {
		t.Errorf("describe-producers -o json: %v\n%s", err, r.stdout)
	}
	r = run1(t, "describe-producers", "-b", b, "--topic", "nope", "--partition", "0", "--timeout", "2s")
	if r.code != 1 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "nope-0") {
		t.Errorf("describe-producers of a missing topic: exit %d, stderr %q", r.code, r.stderr)
	}

	// find-hanging: every open transaction here is listed by its coordinator.
	// (--broker-id asks a replica, which kfake does not answer for partitions
	// it does not lead; the real-Kafka parity test covers it.)
	for _, args := range [][]string{
		{"find-hanging", "-b", b, "--topic", "orders", "--max-transaction-timeout", "0"},
		{"find-hanging", "-b", b, "--topic", "orders", "--partition", "0", "--max-transaction-timeout", "0"},
	} {
		r = run1(t, args...)
		mustOK(t, r, args...)
		if header, rows = tableRows(t, r.stdout); len(rows) != 0 ||
			strings.Join(header, "|") != "Topic|Partition|ProducerId|ProducerEpoch|CoordinatorEpoch|StartOffset|LastTimestamp|Duration(min)" {
			t.Errorf("%s: %q %v", args, header, rows)
		}
	}
}

// hideOwners makes every ListTransactions filtered by producer id answer that
// no id owns them: the coordinator has forgotten the producer, as for a
// KIP-664 hanging transaction (which kfake cannot make for real).
func hideOwners(c *kfake.Cluster) {
	c.ControlKey(int16(kmsg.ListTransactions), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := kreq.(*kmsg.ListTransactionsRequest)
		if len(req.ProducerIDFilters) == 0 {
			return nil, nil, false
		}
		resp := req.ResponseKind().(*kmsg.ListTransactionsResponse)
		resp.Version = req.Version
		return resp, nil, true
	})
}

func auditLines(t *testing.T, path string) []audit.Entry {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []audit.Entry
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e audit.Entry
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("audit line %q: %v", l, err)
		}
		out = append(out, e)
	}
	return out
}

// auditResults are the result lines of the audit log, one per attempt.
func auditResults(t *testing.T, path string) []audit.Entry {
	t.Helper()
	var out []audit.Entry
	for _, e := range auditLines(t, path) {
		if e.Phase == "result" {
			out = append(out, e)
		}
	}
	return out
}

// checkWriteAhead fails unless every request of the audit log is an attempt
// line followed, for the same attempt, by a result counting it.
func checkWriteAhead(t *testing.T, path string) {
	t.Helper()
	sent := map[string]int{}
	for _, e := range auditLines(t, path) {
		switch e.Phase {
		case "attempt":
			sent[e.Attempt]++
		case "result":
			if e.Sends == nil || *e.Sends != sent[e.Attempt] {
				t.Errorf("attempt %s: %d attempt lines before a result saying %v sends", e.Attempt, sent[e.Attempt], e.Sends)
			}
			delete(sent, e.Attempt)
		default:
			t.Errorf("audit line of phase %q", e.Phase)
		}
	}
	for id := range sent {
		t.Errorf("attempt %s has no result line", id)
	}
}

func TestE2EFindHangingAndAbort(t *testing.T) {
	quickExit(t)
	c, bs := kafkatest.NewCluster(t)
	b := strings.Join(bs, ",")
	kafkatest.OpenTxn(t, bs, "lost-0-3", "orders", time.Minute)
	auditLog := filepath.Join(t.TempDir(), "audit.log")

	// The coordinator still lists the transaction: an abort on the partition is
	// refused by the re-check (force-terminate is the tool), and audited.
	r := run1(t, "abort", "-b", b, "--topic", "orders", "--partition", "0", "--start-offset", "0", "--yes", "--audit-log", auditLog,
		"--max-transaction-timeout", "0")
	if r.code != 1 || !strings.Contains(r.stderr, "use force-terminate") || strings.Count(r.stderr, "\n") != 1 {
		t.Fatalf("abort of a listed transaction: exit %d, stderr %q", r.code, r.stderr)
	}
	if a := auditLines(t, auditLog); len(a) != 1 || a[0].Action != "abort-partition" || !strings.Contains(a[0].Result, "refused") || a[0].Outcome != "refused" {
		t.Errorf("audit after a refusal: %+v", a)
	}

	hideOwners(c)
	time.Sleep(5 * time.Millisecond) // older than --max-transaction-timeout 0
	r = run1(t, "find-hanging", "-b", b, "--topic", "orders", "--max-transaction-timeout", "0")
	mustOK(t, r)
	_, rows := tableRows(t, r.stdout)
	if len(rows) != 1 || rows[0]["Topic"] != "orders" || rows[0]["Partition"] != "0" || rows[0]["StartOffset"] != "0" || rows[0]["Duration(min)"] != "0" {
		t.Fatalf("find-hanging: %v", rows)
	}
	pid, epoch := rows[0]["ProducerId"], rows[0]["ProducerEpoch"]
	// The default threshold (15 minutes) does not take a second-old transaction.
	r = run1(t, "find-hanging", "-b", b, "--topic", "orders")
	if _, rows := tableRows(t, r.stdout); r.code != 0 || len(rows) != 0 {
		t.Errorf("find-hanging with the default threshold: exit %d, %v", r.code, rows)
	}
	r = run1(t, "find-hanging", "-b", b, "--topic", "orders", "--partition", "0", "--max-transaction-timeout", "0", "-o", "json")
	mustOK(t, r)
	var fj struct {
		MaxMs    int64            `json:"max_transaction_timeout_ms"`
		Searched int              `json:"partitions_searched"`
		Hanging  []map[string]any `json:"hanging"`
		Possibly []map[string]any `json:"possibly_hanging"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &fj); err != nil || fj.Searched != 1 || len(fj.Hanging) != 1 ||
		fj.Possibly == nil || len(fj.Possibly) != 0 ||
		keysOf(fj.Hanging[0]) != "coordinator_epoch,duration_ms,last_timestamp,partition,producer_epoch,producer_id,reason,start_offset,topic,transactional_id" ||
		fj.Hanging[0]["reason"] != "no transactional id owns the producer" || fj.Hanging[0]["transactional_id"] != nil {
		t.Errorf("find-hanging -o json: %v\n%s", err, r.stdout)
	}

	// Without --yes and without a terminal to confirm on: refused before
	// anything is sent, exit 2.
	args := []string{"abort", "-b", b, "--topic", "orders", "--partition", "0", "--producer-id", pid, "--producer-epoch", epoch,
		"--coordinator-epoch", "0", "--audit-log", auditLog}
	// The producer wrote moments ago: under the idle rule it may be live.
	r = run1(t, append(args, "--yes")...)
	if r.code != 1 || !strings.Contains(r.stderr, "last wrote to orders-0") || !strings.Contains(r.stderr, "pass --max-transaction-timeout 0") {
		t.Errorf("abort of a producer that just wrote: exit %d, stderr %q", r.code, r.stderr)
	}
	args = append(args, "--max-transaction-timeout", "0")
	r = run1(t, args...)
	if line, _, ok := usageError(r.stderr); r.code != 2 || r.stdout != "" || !ok || !strings.Contains(line, "--yes") {
		t.Errorf("abort without --yes off a terminal: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if hwm, lso := offsets(t, bs, "orders", 0); lso != 0 || hwm != kafkatest.Records {
		t.Errorf("after the refused abort: HWM %d LSO %d, want %d and 0", hwm, lso, kafkatest.Records)
	}
	// --read-only: usage error, exit 2, one line and where the help is.
	r = run1(t, append(args, "--yes", "--read-only")...)
	if line, _, ok := usageError(r.stderr); r.code != 2 || !ok || !strings.Contains(line, "--read-only") {
		t.Errorf("abort --read-only: exit %d, stderr %.200q", r.code, r.stderr)
	}
	if a := auditLines(t, auditLog); len(a) != 1 {
		t.Errorf("refusals before sending were audited: %+v", a)
	}

	// With --yes: sent, the LSO moves on, an attempt line then a result.
	r = run1(t, append(args, "--yes")...)
	mustOK(t, r, args...)
	if !strings.HasPrefix(r.stdout, "abort-partition orders-0: sent; the broker accepted it; the last stable offset of orders-0 is now") ||
		!strings.Contains(r.stdout, "WriteTxnMarkers(ABORT, producer id "+pid) {
		t.Errorf("abort output %q", r.stdout)
	}
	if hwm, lso := offsets(t, bs, "orders", 0); lso != hwm {
		t.Errorf("after the abort: HWM %d LSO %d", hwm, lso)
	}
	a := auditLines(t, auditLog)
	if len(a) != 3 || a[1].Phase != "attempt" || a[1].Action != "abort-partition" || a[1].Target != "orders-0" || strconv.FormatInt(a[1].ProducerID, 10) != pid ||
		!strings.Contains(a[1].Wire, "WriteTxnMarkers") || a[1].Bootstrap != b || a[1].IdleRule != "waived by the operator" ||
		a[2].Phase != "result" || a[2].Attempt != a[1].Attempt || !strings.HasPrefix(a[2].Result, "sent; the broker accepted it") {
		t.Errorf("audit lines %+v", a)
	}
	checkWriteAhead(t, auditLog)

	// (A second abort is refused on real Kafka, see integration/parity_test.go;
	// kfake keeps listing the producer as open after the marker.)

	// By start offset, when nothing starts there; by a producer at another epoch.
	r = run1(t, "abort", "-b", b, "--topic", "orders", "--partition", "0", "--start-offset", "2", "--yes", "--audit-log", auditLog)
	if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "could not find any open transaction starting at offset 2 on orders-0") {
		t.Errorf("abort at an offset where nothing is open: exit %d, stderr %q", r.code, r.stderr)
	}
	r = run1(t, "abort", "-b", b, "--topic", "orders", "--partition", "0", "--producer-id", pid, "--producer-epoch", "9",
		"--coordinator-epoch", "0", "--yes", "--audit-log", auditLog)
	if r.code != 1 || !strings.Contains(r.stderr, "not 9") {
		t.Errorf("abort at the wrong epoch: exit %d, stderr %q", r.code, r.stderr)
	}
	if a := auditLines(t, auditLog); len(a) != 3 {
		t.Errorf("audit lines after refusals before sending: %+v", a)
	}
}

func TestE2EForceTerminate(t *testing.T) {
	quickExit(t)
	_, bs := kafkatest.NewCluster(t)
	b := strings.Join(bs, ",")
	kafkatest.OpenTxn(t, bs, "stuck-2-9", "orders", time.Minute)
	auditLog := filepath.Join(t.TempDir(), "audit.log")

	r := run1(t, "describe", "-b", b, "--transactional-id", "stuck-2-9", "-o", "json")
	mustOK(t, r)
	var before map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &before); err != nil {
		t.Fatal(err)
	}

	r = run1(t, "force-terminate", "-b", b, "--transactional-id", "stuck-2-9")
	if r.code != 2 || !strings.Contains(r.stderr, "--yes") {
		t.Errorf("force-terminate without --yes off a terminal: exit %d, stderr %q", r.code, r.stderr)
	}

	// kafka-transactions.sh's spelling, with JSON output.
	r = run1(t, "forceTerminateTransaction", "-b", b, "--transactionalId", "stuck-2-9", "--yes", "--audit-log", auditLog, "-o", "json")
	mustOK(t, r)
	var res map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("force-terminate -o json: %v\n%s", err, r.stdout)
	}
	if keysOf(res) != "action,attempt,audit_log,ok,producer_epoch,producer_id,refused,request,result,sends,sent,target,unknown" ||
		res["ok"] != true || res["action"] != "force-terminate" || res["target"] != "stuck-2-9" || res["audit_log"] != auditLog ||
		!strings.Contains(res["request"].(string), "InitProducerId") {
		t.Errorf("force-terminate -o json: %s", r.stdout)
	}

	r = run1(t, "describe", "-b", b, "--transactional-id", "stuck-2-9", "-o", "json")
	mustOK(t, r)
	var after map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &after); err != nil {
		t.Fatal(err)
	}
	if after["state"] == "Ongoing" || after["producer_epoch"].(float64) <= before["producer_epoch"].(float64) {
		t.Errorf("after force-terminate: %v (before %v)", after, before)
	}
	if hwm, lso := offsets(t, bs, "orders", 0); lso != hwm {
		t.Errorf("after force-terminate: HWM %d LSO %d", hwm, lso)
	}
	if a := auditResults(t, auditLog); len(a) != 1 || a[0].Action != "force-terminate" || a[0].Target != "stuck-2-9" ||
		!strings.HasPrefix(a[0].Result, "sent; the broker accepted it") || a[0].Attempt != res["attempt"] || a[0].TxnStart == "" {
		t.Errorf("audit lines %+v", a)
	}
	checkWriteAhead(t, auditLog)

	// Nothing open any more: refused, exit 1, nothing sent or logged.
	r = run1(t, "force-terminate", "-b", b, "--transactional-id", "stuck-2-9", "--yes", "--audit-log", auditLog)
	if r.code != 1 || !strings.Contains(r.stderr, "is Empty: force-terminate needs an Ongoing or PrepareEpochFence transaction") {
		t.Errorf("force-terminate of an idle id: exit %d, stderr %q", r.code, r.stderr)
	}
	if a := auditLines(t, auditLog); len(a) != 2 {
		t.Errorf("audit lines after the refusal: %+v", a)
	}
}

func TestE2EOneShotUsage(t *testing.T) {
	quickExit(t)
	for _, args := range [][]string{
		{"describe"},
		{"find-hanging", "-b", "127.0.0.1:1"},
		{"abort", "--topic", "t", "--partition", "0"},
		{"list", "--topic", "t"},
		{"describe-producers", "--topic", "t", "--partition", "zero"},
	} {
		r := run1(t, args...)
		if _, pointer, ok := usageError(r.stderr); r.code != 2 || r.stdout != "" || !ok || pointer != "see txnscope "+args[0]+" --help" {
			t.Errorf("%q: exit %d, stdout %q, stderr %.300q", args, r.code, r.stdout, r.stderr)
		}
		if r.took > 5*time.Second {
			t.Errorf("%q took %s", args, r.took)
		}
	}
	// An unreachable cluster is a failure (1), within the timeout.
	r := run1(t, "list", "-b", "127.0.0.1:1", "--timeout", "2s")
	if r.code != 1 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("list of an unreachable cluster: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// With neither HOME nor XDG_STATE_HOME there is no default audit log (never a
// shared temporary directory): reading works, an abort is refused before
// anything is read or sent, and says to pass --audit-log; a world-writable
// directory is refused the same way.
func TestE2ENoDefaultAuditLog(t *testing.T) {
	quickExit(t)
	_, bs := kafkatest.NewCluster(t)
	b := strings.Join(bs, ",")
	kafkatest.OpenTxn(t, bs, "stuck-3-1", "orders", time.Minute)
	env := []string{"HOME=", "XDG_STATE_HOME="}
	if r := runProgramEnv(t, env, "list", "-b", b); r.code != 0 || !strings.Contains(r.stdout, "stuck-3-1") {
		t.Errorf("list without HOME: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	r := runProgramEnv(t, env, "force-terminate", "-b", b, "--transactional-id", "stuck-3-1", "--yes")
	if r.code != 1 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "pass --audit-log PATH") ||
		!strings.Contains(r.stderr, "nothing sent") {
		t.Errorf("force-terminate without HOME: exit %d, stderr %q", r.code, r.stderr)
	}
	open := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(open, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(open, 0o777)
	for _, path := range []string{filepath.Join(open, "audit.log"), "/dev/full", t.TempDir()} {
		r := run1(t, "force-terminate", "-b", b, "--transactional-id", "stuck-3-1", "--yes", "--audit-log", path, "-o", "json")
		if r.code != 1 || !refusedDoc(r.stdout) || !strings.Contains(r.stderr, "audit log: ") || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("--audit-log %s: exit %d, stdout %q, stderr %q", path, r.code, r.stdout, r.stderr)
		}
	}
	if r := run1(t, "describe", "-b", b, "--transactional-id", "stuck-3-1"); !strings.Contains(r.stdout, "Ongoing") {
		t.Errorf("the refusals changed the transaction: %s", r.stdout)
	}
}

// refusedDoc reports whether out is the -o json document of an abort refused
// before anything was sent.
func refusedDoc(out string) bool {
	var doc struct {
		Refused, Sent, OK bool
		Sends             int
		Attempt, Result   string
	}
	return json.Unmarshal([]byte(out), &doc) == nil && doc.Refused && !doc.Sent && !doc.OK && doc.Sends == 0 &&
		doc.Attempt == "" && strings.Contains(doc.Result, "nothing sent")
}
