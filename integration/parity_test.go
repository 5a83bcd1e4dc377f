package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/txnscope/txnscope/model"
)

// TestParityWithKafkaTransactions runs the official kafka-transactions.sh
// (TransactionsCommand of the broker's own version) and `txnscope` with the
// same arguments on the same cluster, in the same scenarios, and asserts the
// same rows: an ongoing transaction, a committed one, an aborted one, a
// lingering one (its producer died with it open), and a hanging one on the
// broker without partition verification. Then txnscope aborts the hanging
// transaction and force-terminates the lingering one, and the official tool
// sees the effect. The official tool costs about a second of JVM start per
// call, so the calls of each phase run side by side.
func TestParityWithKafkaTransactions(t *testing.T) {
	t.Parallel()
	mainBS, nv := Bootstrap(t), NoVerifyBootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bin := buildTxnscope(ctx, t)

	// Long enough that no transaction times out while the test runs, however
	// slow the machine.
	const txnTimeout = 10 * time.Minute

	// The main broker: one topic, one scenario per partition.
	adm := newAdmin(t, mainBS)
	topic := topicWith(ctx, t, adm, 4)
	tpOf := func(p int32) model.TopicPartition { return model.TopicPartition{Topic: topic, Partition: p} }
	ids := map[string]string{}
	for _, s := range []string{"ongoing", "committed", "aborted", "lingering"} {
		ids[s] = name(t, s)
	}
	ongoing := producer(t, mainBS, ids["ongoing"], txnTimeout)
	openTxn(ctx, t, ongoing, tpOf(0), 2, "ongoing")
	committed := producer(t, mainBS, ids["committed"], txnTimeout)
	openTxn(ctx, t, committed, tpOf(1), 3, "committed")
	endTxn(ctx, t, committed, true)
	aborted := producer(t, mainBS, ids["aborted"], txnTimeout)
	openTxn(ctx, t, aborted, tpOf(2), 1, "aborted")
	endTxn(ctx, t, aborted, false)
	lingering := producer(t, mainBS, ids["lingering"], txnTimeout)
	openTxn(ctx, t, lingering, tpOf(3), 2, "lingering")
	lingering.Close()                                   // dies with its transaction open, as a crashed job does
	produce(ctx, t, ongoing, tpOf(2), 1, "ongoing-too") // a second partition, after the aborted batch

	// The no-verify broker: a transactional batch its coordinator never heard of.
	nvAdm := newAdmin(t, nv)
	hTopic := topicOn(ctx, t, nvAdm).Topic
	ids["hanging"] = name(t, "hanging")
	hPID, _, err := produceUnaddedTxnBatch(ctx, t, nv, hTopic, ids["hanging"])
	if err != nil {
		t.Fatalf("hanging batch: %v", err)
	}
	nvBroker := brokerID(ctx, t, nvAdm)
	time.Sleep(5 * time.Millisecond) // strictly older than --max-transaction-timeout 0

	ourIDs := func(r row) bool { return slices.Contains(valuesOf(ids), r["TransactionalId"]) }
	onTopics := func(r row) bool { return r["Topic"] == topic || r["Topic"] == hTopic }
	var all func(row) bool // every row, compared byte for byte too
	p := newParity(t, bin)
	p.add("list", mainBS, ourIDs, nil, "list")
	for _, s := range []string{"ongoing", "committed", "aborted", "lingering"} {
		p.add("describe "+s, mainBS, all, []string{"TransactionDurationMs"}, "describe", "--transactional-id", ids[s])
	}
	for part := range int32(4) {
		p.add(fmt.Sprintf("describe-producers %d", part), mainBS, all, nil,
			"describe-producers", "--topic", topic, "--partition", strconv.Itoa(int(part)))
	}
	p.add("find-hanging on a topic without hanging transactions", mainBS, all, nil,
		"find-hanging", "--topic", topic, "--max-transaction-timeout", "0")
	p.add("describe of an unknown id", mainBS, all, nil, "describe", "--transactional-id", name(t, "nobody"))
	p.add("list on the no-verify broker", nv, ourIDs, nil, "list")
	p.add("describe hanging", nv, all, []string{"TransactionDurationMs"}, "describe", "--transactional-id", ids["hanging"])
	p.add("describe-producers hanging", nv, all, nil, "describe-producers", "--topic", hTopic, "--partition", "0")
	p.add("find-hanging --topic", nv, all, nil, "find-hanging", "--topic", hTopic, "--max-transaction-timeout", "0")
	p.add("find-hanging --broker-id", nv, onTopics, nil,
		"find-hanging", "--broker-id", strconv.Itoa(int(nvBroker)), "--max-transaction-timeout", "0")
	p.add("find-hanging default timeout", nv, all, nil, "find-hanging", "--topic", hTopic, "--partition", "0")
	res := p.run(ctx)
	res0 := res

	// What the scenarios must show, beyond both tools agreeing.
	wantRows(t, res["list"].ours, "TransactionState", map[string]string{
		ids["ongoing"]: "Ongoing", ids["committed"]: "CompleteCommit", ids["aborted"]: "CompleteAbort", ids["lingering"]: "Ongoing",
	}, "TransactionalId", ourIDs)
	if got := res["describe ongoing"].ours.rows[0]["TopicPartitions"]; got != fmt.Sprintf("%s-0,%s-2", topic, topic) {
		t.Errorf("describe ongoing: TopicPartitions %q", got)
	}
	if rows := res["find-hanging on a topic without hanging transactions"].ours.rows; len(rows) != 0 {
		t.Errorf("find-hanging on the main broker's topic: %v, want none (every open transaction is listed by its coordinator)", rows)
	}
	if r := res["describe of an unknown id"]; r.ours.code != 1 || r.theirs.code != 1 {
		t.Errorf("describe of an unknown id: exit %d (official %d), want 1", r.ours.code, r.theirs.code)
	}
	hanging := res["find-hanging --topic"].ours.rows
	if len(hanging) != 1 || hanging[0]["ProducerId"] != strconv.FormatInt(hPID, 10) || hanging[0]["StartOffset"] != "0" {
		t.Fatalf("find-hanging --topic %s: %v, want producer %d from offset 0", hTopic, hanging, hPID)
	}
	if rows := res["find-hanging default timeout"].ours.rows; len(rows) != 0 {
		t.Errorf("a seconds-old hanging transaction is not over the default 15 minutes: %v", rows)
	}

	// txnscope acts; the official tool sees the effect.
	auditLog := filepath.Join(t.TempDir(), "audit.log")
	for _, args := range [][]string{
		// The hanging producer wrote seconds ago: the idle rule is set aside,
		// as find-hanging's threshold is above.
		{"abort", "-b", nv, "--topic", hTopic, "--partition", "0", "--start-offset", "0", "--max-transaction-timeout", "0", "--yes", "--audit-log", auditLog},
		{"force-terminate", "-b", mainBS, "--transactional-id", ids["lingering"], "--yes", "--audit-log", auditLog},
	} {
		if r := runTool(ctx, bin, args...); r.code != 0 {
			t.Fatalf("txnscope %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
	// The same abort again: nothing open there any more, refused before sending.
	if r := runTool(ctx, bin, "abort", "-b", nv, "--topic", hTopic, "--partition", "0", "--start-offset", "0", "--max-transaction-timeout", "0", "--yes", "--audit-log", auditLog); r.code != 1 ||
		!strings.Contains(r.stderr, "could not find any open transaction starting at offset 0") {
		t.Errorf("second abort: exit %d, stderr %q", r.code, r.stderr)
	}
	if b, err := os.ReadFile(auditLog); err != nil || strings.Count(string(b), `"phase":"result"`) != 2 || strings.Count(string(b), `"phase":"attempt"`) != 2 ||
		!strings.Contains(string(b), `"action":"abort-partition"`) || !strings.Contains(string(b), `"action":"force-terminate"`) {
		t.Errorf("audit log (%v):\n%s", err, b)
	}
	p = newParity(t, bin)
	p.add("describe lingering after force-terminate", mainBS, all, []string{"TransactionDurationMs"}, "describe", "--transactional-id", ids["lingering"])
	p.add("describe-producers lingering after force-terminate", mainBS, all, nil, "describe-producers", "--topic", topic, "--partition", "3")
	p.add("find-hanging after the abort", nv, all, nil, "find-hanging", "--topic", hTopic, "--max-transaction-timeout", "0")
	p.add("describe-producers after the abort", nv, all, nil, "describe-producers", "--topic", hTopic, "--partition", "0")
	res = p.run(ctx)
	// The coordinator aborted it and bumped the epoch; once the InitProducerId
	// completes the id is Empty at that epoch.
	before := res0["describe lingering"].theirs.rows[0]["ProducerEpoch"]
	if d := res["describe lingering after force-terminate"].theirs.rows; len(d) != 1 ||
		(d[0]["TransactionState"] != "CompleteAbort" && d[0]["TransactionState"] != "Empty") || atoi(d[0]["ProducerEpoch"]) <= atoi(before) {
		t.Errorf("official describe after force-terminate: %v, want CompleteAbort or Empty past epoch %s", d, before)
	}
	for _, r := range res["describe-producers lingering after force-terminate"].theirs.rows {
		if r["CurrentTransactionStartOffset"] != "None" {
			t.Errorf("official describe-producers after force-terminate: %v still open", r)
		}
	}
	if rows := res["find-hanging after the abort"].theirs.rows; len(rows) != 0 {
		t.Errorf("official find-hanging after txnscope's abort: %v, want none", rows)
	}
	for _, r := range res["describe-producers after the abort"].theirs.rows {
		if r["ProducerId"] == strconv.FormatInt(hPID, 10) && r["CurrentTransactionStartOffset"] != "None" {
			t.Errorf("official describe-producers after txnscope's abort: %v still open", r)
		}
	}
	if hwm, lso := offsetsOf(ctx, t, nvAdm, model.TopicPartition{Topic: hTopic}); hwm != lso {
		t.Errorf("after the abort: HWM %d, LSO %d", hwm, lso)
	}
}

// row is one table row by column name.
type row map[string]string

// table is a command's parsed output.
type table struct {
	code           int
	stdout, stderr string
	header         []string
	rows           []row
}

type toolRun struct {
	code           int
	stdout, stderr string
	took           time.Duration
}

func runTool(ctx context.Context, exe string, args ...string) toolRun {
	cmd := exec.CommandContext(ctx, exe, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	r := toolRun{stdout: out.String(), stderr: errb.String(), took: time.Since(start)}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	default:
		r.code, r.stderr = -1, err.Error()
	}
	return r
}

// parseTable reads kafka-transactions.sh's format: cells padded with spaces,
// each followed by a tab, a header line first.
func parseTable(r toolRun) table {
	tb := table{code: r.code, stdout: r.stdout, stderr: r.stderr}
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	if r.stdout == "" || len(lines) == 0 {
		return tb
	}
	cells := func(l string) []string {
		f := strings.Split(strings.TrimSuffix(l, "\t"), "\t")
		for i := range f {
			f[i] = strings.TrimRight(f[i], " ")
		}
		return f
	}
	tb.header = cells(lines[0])
	for _, l := range lines[1:] {
		c := cells(l)
		rw := row{}
		for i, h := range tb.header {
			if i < len(c) {
				rw[h] = c[i]
			}
		}
		tb.rows = append(tb.rows, rw)
	}
	return tb
}

// parity collects pairs of calls (official, txnscope) and runs them side by side.
type parity struct {
	t     *testing.T
	bin   string
	cases []parityCase
}

type parityCase struct {
	name      string
	bootstrap string
	keep      func(row) bool
	ignore    []string
	args      []string
}

type pair struct {
	ours, theirs table
	diffs        []string
}

func newParity(t *testing.T, bin string) *parity { return &parity{t: t, bin: bin} }

// add compares `kafka-transactions.sh --bootstrap-server B args...` with
// `txnscope args... -b B` on the rows keep accepts (nil: all, and then the
// output byte for byte unless columns are ignored), ignoring the columns that
// depend on when each ran.
func (p *parity) add(name, bootstrap string, keep func(row) bool, ignore []string, args ...string) {
	p.cases = append(p.cases, parityCase{name, bootstrap, keep, ignore, args})
}

// run executes every call (four at a time: each official call is a JVM) and
// compares each pair.
func (p *parity) run(ctx context.Context) map[string]pair {
	t := p.t
	t.Helper()
	tools := filepath.Join(repoRoot(t), "scripts", "kafka-tools")
	out := make(map[string]pair, len(p.cases))
	var (
		mu  sync.Mutex
		wg  sync.WaitGroup
		sem = make(chan struct{}, 4)
	)
	start := time.Now()
	for _, c := range p.cases {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			// Other tests share the brokers and create and delete topics
			// between the two calls (a broker-wide find-hanging sees them):
			// a pair that disagrees is asked again, twice at most. A real
			// difference disagrees every time.
			var pr pair
			for attempt := 1; attempt <= 3; attempt++ {
				theirs := runTool(ctx, tools, append([]string{"transactions", "--bootstrap-server", c.bootstrap}, c.args...)...)
				ours := runTool(ctx, p.bin, append(append([]string{}, c.args...), "-b", c.bootstrap)...)
				pr = pair{ours: parseTable(ours), theirs: parseTable(theirs)}
				if pr.diffs = compare(c, pr); len(pr.diffs) == 0 {
					break
				}
				t.Logf("%s: attempt %d disagrees, asking again: %s", c.name, attempt, pr.diffs[0])
			}
			mu.Lock()
			out[c.name] = pr
			mu.Unlock()
		})
	}
	wg.Wait()
	t.Logf("%d pairs of calls in %s", len(p.cases), time.Since(start).Round(time.Millisecond))
	for _, c := range p.cases {
		for _, d := range out[c.name].diffs {
			t.Error(d)
		}
	}
	return out
}

// compare returns how the pair disagrees (nil when it does not).
func compare(c parityCase, pr pair) []string {
	ours, theirs := pr.ours, pr.theirs
	if ours.code != theirs.code {
		return []string{fmt.Sprintf("%s: exit %d, official %d\nours: %s%s\nofficial: %s%s", c.name, ours.code, theirs.code,
			ours.stdout, ours.stderr, theirs.stdout, theirs.stderr)}
	}
	if theirs.code != 0 {
		return nil // both failed, as they should: the rows of a failure are not compared
	}
	var diffs []string
	if !slices.Equal(ours.header, theirs.header) {
		diffs = append(diffs, fmt.Sprintf("%s: columns %q, official %q", c.name, ours.header, theirs.header))
	}
	norm := func(tb table) []string {
		var rs []string
		for _, r := range tb.rows {
			if c.keep != nil && !c.keep(r) {
				continue
			}
			var cells []string
			for _, h := range tb.header {
				v := r[h]
				switch {
				case slices.Contains(c.ignore, h):
					v = "*"
				case h == "TopicPartitions":
					// A set in Java's output; txnscope sorts it.
					ps := strings.Split(v, ",")
					slices.Sort(ps)
					v = strings.Join(ps, ",")
				}
				cells = append(cells, h+"="+v)
			}
			rs = append(rs, strings.Join(cells, " "))
		}
		slices.Sort(rs)
		return rs
	}
	if o, th := norm(ours), norm(theirs); !slices.Equal(o, th) {
		diffs = append(diffs, fmt.Sprintf("%s: rows differ\nours:\n  %s\nofficial:\n  %s\n(raw official output:\n%s)", c.name,
			strings.Join(o, "\n  "), strings.Join(th, "\n  "), theirs.stdout))
	}
	// Same rows, same widths: the lines are byte for byte the same, in some order.
	if len(c.ignore) == 0 && c.keep == nil {
		o, th := strings.Split(ours.stdout, "\n"), strings.Split(theirs.stdout, "\n")
		slices.Sort(o)
		slices.Sort(th)
		if !slices.Equal(o, th) {
			diffs = append(diffs, fmt.Sprintf("%s: not byte for byte the same\nours:\n%q\nofficial:\n%q", c.name, ours.stdout, theirs.stdout))
		}
	}
	return diffs
}

func wantRows(t *testing.T, tb table, col string, want map[string]string, key string, keep func(row) bool) {
	t.Helper()
	got := map[string]string{}
	for _, r := range tb.rows {
		if keep(r) {
			got[r[key]] = r[col]
		}
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s of %s = %q, want %q (rows: %v)", col, k, got[k], v, tb.rows)
		}
	}
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

func valuesOf(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// brokerID is the node id of a single-broker cluster.
func brokerID(ctx context.Context, t *testing.T, adm *kadm.Client) int32 {
	t.Helper()
	meta, err := adm.BrokerMetadata(ctx)
	if err != nil || len(meta.Brokers) == 0 {
		t.Fatalf("BrokerMetadata: %v", err)
	}
	return meta.Brokers[0].NodeID
}
