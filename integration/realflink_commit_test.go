package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/jsonout"
	"github.com/txnscope/txnscope/internal/testutil"
	"github.com/txnscope/txnscope/model"
)

// The case txnscope's commit exists for, staged on real Flink: checkpoint N completed, the commit
// that follows never reached the broker, and the JobManager is gone. Flink's KafkaSink pre-commits
// a subtask's transaction when checkpoint N's barrier passes, opens the next one, and commits the
// first only after N completed; a JVM that dies in between leaves a transaction whose records
// Flink counts as delivered, Ongoing until its timeout aborts (loses) them. Here every Flink
// producer talks to the broker through kproxy, which from checkpoint N-1's completion on holds
// every EndTxn forever, so the commits of N are lost on the wire; then the JVM is killed.
//
// Records are counted exactly once throughout: the job writes "<job> <i>", i the generator's
// index; each subtask emits its own contiguous range in order, so a duplicate means a transaction
// was committed twice (or replayed over a committed one), and a gap that a checkpointed
// transaction's records were lost.

// TestRealFlinkCommit: on each Flink version, INCREMENTING ids and POOLING ones (2.2), the
// checkpoints in an S3-compatible store (gofakes3 on 127.0.0.1, written by Flink's own S3 file
// system): checkpoint N's commits held on the wire and the JVM killed; with no JobManager and no
// local copy, txnscope reads the committables out of the newest checkpoint in s3:// and says
// N's ids are checkpointed and N+1's not; `txnscope resolve` commits the first, with the
// committable's producer id and epoch, and aborts the second; nothing is lost or doubled, before
// the restore from chk-N or after it.
func TestRealFlinkCommit(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ flink, naming string }{{"1.20", "incrementing"}, {"2.2", "incrementing"}, {"2.2", "pooling"}} {
		t.Run(c.flink+"-"+c.naming, func(t *testing.T) {
			t.Parallel()
			testRealFlinkCommit(t, c.flink, c.naming == "pooling")
		})
	}
}

// checkpointsAt is where a real Flink job keeps its checkpoints, and what txnscope is told to
// read them.
type checkpointsAt struct {
	dir string // a local directory, or s3://BUCKET/PATH
	s3  *testutil.S3
}

func (c checkpointsAt) flags(prefix string) []string {
	f := []string{"--flink-checkpoints", prefix + "=" + c.dir}
	if c.s3 != nil {
		f = append(f, "--s3-endpoint", c.s3.URL, "--s3-path-style")
	}
	return f
}

func (c checkpointsAt) env() []string {
	if c.s3 == nil {
		return nil
	}
	return c.s3.Env()
}

func testRealFlinkCommit(t *testing.T, flink string, pooling bool) {
	holdFlinkSlot(t)
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	requireRealFlink(ctx, t, flink)
	began := time.Now()
	defer func() { t.Logf("Flink %s: the scenario took %s", flink, time.Since(began).Round(time.Second)) }()
	adm := newAdmin(t, bootstrap)
	const parallelism = 2
	// Two partitions: a transaction spans both, so a commit that reached only some of them
	// shows as a gap.
	topic := topicWith(ctx, t, adm, 2)
	prefix := name(t, "rf")
	bin := buildTxnscope(ctx, t)
	proxy := newProxy(t, bootstrap)
	store := testutil.StartS3(t, "ckpt")
	at := checkpointsAt{dir: "s3://ckpt/" + prefix, s3: store}
	args := realFlinkArgs{
		Flink: flink, Topic: topic, Prefix: prefix, Parallelism: parallelism,
		CheckpointInterval: 2 * time.Second, CheckpointDir: at.dir, S3: store,
		// Far beyond the test: no transaction may end by timing out.
		TransactionTimeout: 10 * time.Minute,
		// The next transaction gets only the records that flow between the barrier and the
		// held commit, which stops the subtask: 7 to 68 records per subtask seen at 1000/s.
		RecordsPerSecond: 2000,
	}
	if pooling {
		args.Naming = "pooling"
	}
	job := startRealFlink(t, "flink-"+flink, proxy.addr(), args)

	// 1-2. Checkpoint K completed: from now on every EndTxn is lost.
	cps := job.waitCheckpoints(ctx, prefix, 2)
	k := checkpointID(t, cps[len(cps)-1])
	passed, found := proxy.count(kmsg.EndTxn), proxy.count(kmsg.FindCoordinator)
	proxy.holdForever(kmsg.EndTxn)
	if passed < parallelism || found == 0 {
		t.Fatalf("after checkpoint %d the proxy forwarded %d EndTxn and %d FindCoordinator: Flink's commits do not go through it", k, passed, found)
	}
	t.Logf("checkpoint %d completed; %d EndTxn and %d FindCoordinator went through the proxy; every later EndTxn is held", k, passed, found)
	var next flinkEvent
	job.waitUntil(ctx, fmt.Sprintf("a checkpoint after %d", k), func() bool {
		for _, e := range job.checkpoints(prefix) {
			if checkpointID(t, e) > k {
				next = e
				return true
			}
		}
		return false
	})
	h := checkpointID(t, next) // K+1: completed, its commits about to be held
	held := waitHeldCommits(ctx, t, proxy, prefix, parallelism, h, pooling)

	// The committer runs in the task's mailbox thread, chained to the source and the writer: a
	// commit waiting for its answer stops the subtask, and the topic with it.
	hwm1 := endOffsets(ctx, t, adm, topic, false)
	time.Sleep(time.Second)
	hwm2 := endOffsets(ctx, t, adm, topic, false)
	if !slices.Equal(hwm1, hwm2) {
		t.Logf("the topic still grew while the commits of %d were held: high watermarks %v then %v", h, hwm1, hwm2)
	} else {
		t.Logf("the topic stopped while the commits of %d were held: high watermarks %v", h, hwm2)
	}
	job.kill9(ctx)
	if later := job.checkpoints(prefix); checkpointID(t, later[len(later)-1]) != h {
		t.Fatalf("checkpoints completed after %d while its commits were held: %v", h, later)
	}

	// What the kill left: the held ids Ongoing (checkpointed), each subtask's id of h+1 Ongoing
	// (not checkpointed), nothing else open.
	txns := describePrefix(ctx, t, adm, prefix)
	checkpointed := map[string]int64{} // id → its checkpoint
	for id, req := range held {
		n := h
		if !pooling {
			n = idCheckpoint(t, id)
		}
		checkpointed[id] = n
		if tx := txns[id]; tx.State != "Ongoing" || tx.ProducerID != req.ProducerID {
			t.Fatalf("%s, whose commit was held, is %s as producer %d; want Ongoing as producer %d\n%s", id, tx.State, tx.ProducerID, req.ProducerID, formatTxns(txns))
		}
	}
	notCheckpointed := map[string]int64{}
	for s := range parallelism {
		var id string
		if pooling {
			// The subtask's slot that is not the held one: its transaction began after h.
			for other, tx := range txns {
				if m := flinkIDPattern.FindStringSubmatch(other); m != nil && m[2] == strconv.Itoa(s) && held[other] == nil && tx.State == "Ongoing" {
					id = other
				}
			}
		} else {
			id = flinkID(prefix, s, h+1)
		}
		if tx := txns[id]; id != "" && tx.State == "Ongoing" {
			notCheckpointed[id] = h + 1
		} else {
			// A subtask whose commit stopped it before its next record: nothing to judge.
			t.Logf("subtask %d's next id %q is %q: no record between checkpoint %d's barrier and its held commit", s, id, tx.State, h)
		}
	}
	if len(notCheckpointed) == 0 {
		t.Fatalf("after kill -9 with the commits of %d held, no id of %d is Ongoing: no subtask wrote after the barrier\n%s", h, h+1, formatTxns(txns))
	}
	for id, tx := range txns {
		if _, ok := checkpointed[id]; !ok && notCheckpointed[id] == 0 && tx.State != "CompleteCommit" && tx.State != "Empty" {
			t.Errorf("%s is %s: only the held ids and those of %d may be open, the rest committed\n%s", id, tx.State, h+1, formatTxns(txns))
		}
	}
	t.Logf("after kill -9 (checkpoint %d completed, its commits held):\n%s", h, formatTxns(txns))
	kafkaWarnings(t, job, fmt.Sprintf("with the commits of %d held", h))

	// 5, before any resolve: the counter on the pinned topic. Nothing this run wrote was
	// aborted, so the read_committed view is exactly every record below the LSOs.
	lso := endOffsets(ctx, t, adm, topic, true)
	hwm := endOffsets(ctx, t, adm, topic, false)
	if slices.Equal(lso, hwm) {
		t.Fatalf("LSO %v = high watermark %v with transactions open", lso, hwm)
	}
	all := readTopic(ctx, t, bootstrap, topic, false, hwm)
	seen := readTopic(ctx, t, bootstrap, topic, true, lso)
	// A transaction's records carry its producer id and epoch: under POOLING a slot's
	// transactions share the producer id, each with an epoch of its own.
	owner := map[[2]int64]string{}
	for id, tx := range txns {
		owner[[2]int64{tx.ProducerID, int64(tx.ProducerEpoch)}] = id
	}
	var below []int64
	written := map[string]int{} // records per transactional id
	for _, r := range all {
		switch {
		case r.abort:
			t.Fatalf("an abort marker at %d/%d in a run that aborted nothing", r.partition, r.offset)
		case r.control:
			continue
		}
		written[owner[r.writer()]]++
		if r.offset < lso[r.partition] {
			below = append(below, r.index)
		}
	}
	for id := range notCheckpointed {
		if written[id] == 0 {
			t.Fatalf("%s is Ongoing but wrote no record to %s", id, topic)
		}
	}
	t.Logf("records per open transaction: %s", countsOf(written, checkpointed, notCheckpointed))
	ranges := generatorRanges(math.MaxInt64, parallelism)
	pinned := countOnce(indexes(seen), ranges)
	if bad := pinned.dups(); bad != "" {
		t.Errorf("read_committed while the LSO is pinned: %s", bad)
	}
	if bad := pinned.gapsNotBehind(all, lso); bad != "" {
		t.Errorf("read_committed while the LSO is pinned: %s", bad)
	}
	if !sameSet(indexes(seen), below) {
		t.Errorf("read_committed while the LSO is pinned shows %d records, below the LSOs %v are %d", len(indexes(seen)), lso, len(below))
	}
	for _, r := range seen {
		if id := owner[r.writer()]; checkpointed[id] > 0 || notCheckpointed[id] > 0 {
			t.Errorf("read_committed shows %d (%d/%d) of %s, still open", r.index, r.partition, r.offset, id)
		}
	}
	t.Logf("before resolve: LSO %v, high watermark %v; read_committed %s", lso, hwm, pinned)

	// 3. txnscope's verdicts, from the retained checkpoints alone: the JobManager is gone.
	out := &flinkOutputs{t: t, bin: bin, bootstrap: bootstrap, env: at.env()}
	_, j := out.snapshot(ctx, prefix, at.flags(prefix)...)
	if j == nil {
		t.Fatalf("no Flink job %s in the snapshot", prefix)
	}
	checkVerdicts(t, j.Verdicts, checkpointed, notCheckpointed, h, pooling)

	// 4. Resolve: commit the checkpointed, abort the rest.
	var committedRun1 []int64 // what run 1 delivered: everything up to checkpoint h
	for _, r := range all {
		if !r.control && notCheckpointed[owner[r.writer()]] == 0 {
			committedRun1 = append(committedRun1, r.index)
		}
	}
	audit := filepath.Join(t.TempDir(), "audit.log")
	checkResolved(t, resolveJob(ctx, t, bin, bootstrap, prefix, at, audit), checkpointed, notCheckpointed, held)
	waitEnded(ctx, t, adm, prefix, checkpointed, notCheckpointed, true)
	auditNames(t, audit, checkpointed, notCheckpointed)
	lso, hwm = waitStable(ctx, t, adm, topic, 30*time.Second)
	if !slices.Equal(lso, hwm) {
		t.Fatalf("after resolve the LSO %v is still below the high watermark %v\n%s", lso, hwm, formatTxns(describePrefix(ctx, t, adm, prefix)))
	}
	// 5. Exactly what the checkpoints up to h hold: all of it, once, nothing of h+1.
	seen = readTopic(ctx, t, bootstrap, topic, true, hwm)
	afterResolve := countOnce(indexes(seen), ranges)
	if bad := afterResolve.problem(); bad != "" {
		t.Errorf("read_committed after resolve: %s", bad)
	}
	if !sameSet(indexes(seen), committedRun1) {
		t.Errorf("read_committed after resolve shows %d records; the transactions up to checkpoint %d hold %d (and none of %d's %d)",
			len(indexes(seen)), h, len(committedRun1), h+1, len(indexes(all))-len(committedRun1))
	}
	t.Logf("after resolve: read_committed %s", afterResolve)

	// 6. Restore from chk-h, on the broker itself: Flink's committer commits what chk-h holds
	// again (already committed by resolve), and the source replays from there.
	chk, ok := strings.CutPrefix(strings.Join(next.Fields[1:], " "), "completed ")
	if !ok || path.Base(chk) != fmt.Sprintf("chk-%d", h) || !strings.HasPrefix(chk, at.dir+"/") {
		t.Fatalf("checkpoint %d's line %q names no chk-%d directory", h, next, h)
	}
	restoreArgs := args
	restoreArgs.Restore = chk
	second := startRealFlink(t, "flink-"+flink+"-restored", bootstrap, restoreArgs)
	second.waitUntil(ctx, fmt.Sprintf("restored from %d", h), func() bool { return len(second.all("restored")) > 0 })
	if r := second.all("restored"); r[0].int64Field(t, 0) != h {
		t.Fatalf("restored from %v, want checkpoint %d", r, h)
	}
	more := second.waitCheckpoints(ctx, prefix, 2)
	// Half an interval after a completion: its commits are done, the next checkpoint far off.
	time.Sleep(time.Second)
	if code := second.sigterm(ctx); code != 143 {
		t.Errorf("after SIGTERM the JVM exited with %d, want 143", code)
	}
	t.Logf("the restored run completed checkpoints %d and on, then SIGTERM", checkpointID(t, more[0]))
	kafkaWarnings(t, second, fmt.Sprintf("restored from chk-%d", h))
	// The restore commits chk-h's transactions again, already committed by resolve: the
	// commit txnscope sent (EndTxn v4, their own producer id and epoch) is the one the restored
	// committer sends, so the broker takes it as a retry. (After an EndTxn v5, which bumps the
	// epoch under transaction version 2, Flink 2.2 logged "already fenced ... most likely
	// signals data loss" for each.)
	for _, id := range failedCommits(second.log()) {
		t.Errorf("the restored run could not commit %s (see its log): a restore after resolve must find its commits done", id)
	}
	lso, hwm = waitStable(ctx, t, adm, topic, 15*time.Second)
	if !slices.Equal(lso, hwm) {
		// A checkpoint that completed just before the signal leaves its transactions open,
		// checkpointed: the case resolve is for.
		t.Logf("after SIGTERM still open:\n%s", formatTxns(describePrefix(ctx, t, adm, prefix)))
		resolveJob(ctx, t, bin, bootstrap, prefix, at, filepath.Join(t.TempDir(), "audit.log"))
		lso, hwm = waitStable(ctx, t, adm, topic, 30*time.Second)
	}
	seen = readTopic(ctx, t, bootstrap, topic, true, lso)
	c := countOnce(indexes(seen), ranges)
	if !slices.Equal(lso, hwm) {
		// Still pinned after a second resolve: count what is committed; a gap is allowed only
		// where a record sits behind the pin.
		t.Logf("after SIGTERM the LSO %v stays below the high watermark %v:\n%s", lso, hwm, formatTxns(describePrefix(ctx, t, adm, prefix)))
		if bad := c.dups(); bad != "" {
			t.Errorf("read_committed after the restore: %s", bad)
		}
		if bad := c.gapsNotBehind(readTopic(ctx, t, bootstrap, topic, false, hwm), lso); bad != "" {
			t.Errorf("read_committed after the restore: %s", bad)
		}
	} else if bad := c.problem(); bad != "" {
		t.Errorf("read_committed after the restore, across both runs: %s", bad)
	}
	if missing := minus(committedRun1, indexes(seen)); len(missing) > 0 {
		t.Errorf("after the restore %d records the first run delivered are gone: %s", len(missing), spans(missing, ranges))
	}
	if n := len(indexes(seen)); n <= len(committedRun1) {
		t.Errorf("after the restore read_committed shows %d records, the first run alone delivered %d: the restored run wrote nothing", n, len(committedRun1))
	}
	t.Logf("after the restore and SIGTERM: read_committed %s", c)
}

// waitHeldCommits waits until the proxy holds the commit of checkpoint h of every subtask and
// returns the held EndTxn requests by transactional id (a commit of h-1 that raced the hold
// among them). Under POOLING a slot's id names no checkpoint: one held commit per subtask.
func waitHeldCommits(ctx context.Context, t *testing.T, p *kproxy, prefix string, parallelism int, h int64, pooling bool) map[string]*kmsg.EndTxnRequest {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		held := map[string]*kmsg.EndTxnRequest{}
		for _, r := range p.heldRequests(kmsg.EndTxn) {
			e := r.(*kmsg.EndTxnRequest)
			if !e.Commit {
				t.Fatalf("the proxy holds an abort of %s: nothing should abort", e.TransactionalID)
			}
			if m := flinkIDPattern.FindStringSubmatch(e.TransactionalID); m == nil || m[1] != prefix {
				t.Fatalf("the proxy holds the commit of %q, not one of %s's ids", e.TransactionalID, prefix)
			}
			held[e.TransactionalID] = e
		}
		all := true
		for s := range parallelism {
			ok := false
			if pooling {
				// A slot's id names no checkpoint: one held commit per subtask.
				for id := range held {
					ok = ok || flinkIDPattern.FindStringSubmatch(id)[2] == strconv.Itoa(s)
				}
			} else {
				_, ok = held[flinkID(prefix, s, h)]
			}
			all = all && ok
		}
		if all {
			ids := slices.Sorted(maps.Keys(held))
			t.Logf("checkpoint %d completed; the proxy holds the commits of %v", h, ids)
			return held
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("30 s after checkpoint %d completed the proxy holds the commits of %v, want every subtask's", h, slices.Sorted(maps.Keys(held)))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// idCheckpoint is the checkpoint an INCREMENTING id belongs to: its last number.
func idCheckpoint(t *testing.T, id string) int64 {
	t.Helper()
	m := flinkIDPattern.FindStringSubmatch(id)
	if m == nil {
		t.Fatalf("%s is not PREFIX-SUBTASK-CHECKPOINT", id)
	}
	n, _ := strconv.ParseInt(m[3], 10, 64)
	return n
}

var failedCommit = regexp.MustCompile(`Unable to commit transaction \(.*transactionalId='?([^',}]+)`)

// failedCommits are the ids whose commit Flink's KafkaCommitter gave up on, in log.
func failedCommits(log string) []string {
	var out []string
	for _, m := range failedCommit.FindAllStringSubmatch(log, -1) {
		out = append(out, m[1])
	}
	return out
}

// kafkaWarnings logs the Kafka connector's and client's warnings and errors in job's log (a
// retried or failed commit is one), the last 10.
func kafkaWarnings(t *testing.T, job *realFlink, when string) {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(job.log(), "\n") {
		if (strings.Contains(l, " WARN ") || strings.Contains(l, " ERROR ")) &&
			(strings.Contains(l, "org.apache.flink.connector.kafka") || strings.Contains(l, "org.apache.kafka")) {
			lines = append(lines, l)
		}
	}
	if len(lines) > 10 {
		lines = lines[len(lines)-10:]
	}
	t.Logf("%s: %d warnings or errors of the Kafka connector and client %s\n%s", job.name, len(lines), when, strings.Join(lines, "\n"))
}

// checkVerdicts: the held ids checkpointed, held in chk-h; h+1's not checkpointed; no other.
// Every one is exact: read from the checkpoint's committables. Under POOLING a transaction that
// is in no checkpoint has no checkpoint number.
func checkVerdicts(t *testing.T, got []jsonout.VerdictJSON, checkpointed, notCheckpointed map[string]int64, h int64, pooling bool) {
	t.Helper()
	var said []string
	for _, v := range got {
		cp, in := int64(-1), int64(-1)
		if v.Checkpoint != nil {
			cp = *v.Checkpoint
		}
		if v.CompletedIn != nil {
			in = *v.CompletedIn
		}
		said = append(said, fmt.Sprintf("%s %s checkpoint %d completed_in %d: %s", v.TransactionalID, v.Verdict, cp, in, v.Evidence))
		if n, ok := checkpointed[v.TransactionalID]; ok {
			if v.Verdict != model.Checkpointed || cp != n || in != h || !v.Exact || v.RestsOn.Committable == nil {
				t.Errorf("verdict %s %s checkpoint %d completed_in %d (%s): its commit was held after checkpoint %d completed, want checkpointed, checkpoint %d, completed_in %d",
					v.TransactionalID, v.Verdict, cp, in, v.Evidence, h, n, h)
			}
		} else if n, ok := notCheckpointed[v.TransactionalID]; ok {
			if v.Verdict != model.NotCheckpointed || (cp != n && !(pooling && cp == -1)) || v.CompletedIn != nil || !v.Exact {
				t.Errorf("verdict %s %s checkpoint %d completed_in %d (%s): want not_checkpointed, checkpoint %d",
					v.TransactionalID, v.Verdict, cp, in, v.Evidence, n)
			}
		} else {
			t.Errorf("a verdict on %s, which is not open", v.TransactionalID)
		}
	}
	if len(got) != len(checkpointed)+len(notCheckpointed) {
		t.Errorf("%d verdicts, want one per open id (%d checkpointed, %d not):\n%s", len(got), len(checkpointed), len(notCheckpointed), strings.Join(said, "\n"))
	}
	t.Logf("txnscope's verdicts:\n%s", strings.Join(said, "\n"))
}

// resolveJob runs `txnscope resolve` on prefix's Flink job, judged by the retained checkpoints
// in dir: it commits each open transaction whose checkpoint completed and force-terminates the
// others. It returns the JSON values it printed (one document, or one per line).
func resolveJob(ctx context.Context, t *testing.T, bin, bootstrap, prefix string, at checkpointsAt, auditLog string) resolveDoc {
	t.Helper()
	r := runTxnscope(ctx, t, bin, at.env(), append([]string{"resolve", "--job", prefix, "--bootstrap-server", bootstrap,
		"--yes", "-o", "json", "--audit-log", auditLog}, at.flags(prefix)...)...)
	if r.code != 0 {
		t.Fatalf("resolve failed:\n%s", r)
	}
	var doc resolveDoc
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("resolve -o json is not one JSON document: %v\n%s", err, r)
	}
	t.Logf("txnscope resolve -o json:\n%s", r.stdout)
	if !doc.OK || len(doc.Steps) == 0 {
		t.Fatalf("resolve: %+v", doc)
	}
	return doc
}

// resolveDoc is what the test reads of `txnscope resolve -o json`.
type resolveDoc struct {
	OK     bool   `json:"ok"`
	Result string `json:"result"`
	Steps  []struct {
		ID          string `json:"transactional_id"`
		Verdict     string `json:"verdict"`
		CompletedIn int64  `json:"completed_in"`
		Evidence    string `json:"evidence"`
		Action      string `json:"action"`
		LeftOpen    string `json:"left_open"`
		Request     string `json:"request"`
		Sends       int    `json:"sends"`
		Result      string `json:"result"`
		OK          bool   `json:"ok"`
	} `json:"steps"`
}

// checkResolved: each checkpointed id committed with EndTxn v4 (what a restored committer
// sends) on the checkpoint that holds it, each other one force-terminated.
// A commit carries the producer id and epoch of the EndTxn Flink's committer sent (and the proxy
// held): the committable's.
func checkResolved(t *testing.T, doc resolveDoc, checkpointed, notCheckpointed map[string]int64, held map[string]*kmsg.EndTxnRequest) {
	t.Helper()
	for _, st := range doc.Steps {
		switch {
		case checkpointed[st.ID] > 0:
			want := fmt.Sprintf("producer id %d, epoch %d", held[st.ID].ProducerID, held[st.ID].ProducerEpoch)
			if st.Action != "commit" || !st.OK || st.CompletedIn != checkpointed[st.ID] || !strings.Contains(st.Request, ", v4) to coordinator broker") ||
				!strings.Contains(st.Request, want) {
				t.Errorf("resolve's step for %s (checkpoint %d): %+v", st.ID, checkpointed[st.ID], st)
			}
		case notCheckpointed[st.ID] > 0:
			if st.Action != "force-terminate" || !st.OK || st.Verdict != "not_checkpointed" {
				t.Errorf("resolve's step for %s: %+v", st.ID, st)
			}
		default:
			t.Errorf("resolve acted on %s, neither held nor open after the kill: %+v", st.ID, st)
		}
	}
	if len(doc.Steps) != len(checkpointed)+len(notCheckpointed) {
		t.Errorf("resolve took %d steps for %d open transactions", len(doc.Steps), len(checkpointed)+len(notCheckpointed))
	}
}

// waitEnded waits until the checkpointed ids are committed and the others ended: aborted, when
// aborted is set; after a restore, which reuses the ids, anything but open.
func waitEnded(ctx context.Context, t *testing.T, adm *kadm.Client, prefix string, checkpointed, notCheckpointed map[string]int64, aborted bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		txns := describePrefix(ctx, t, adm, prefix)
		problem := ""
		for id := range checkpointed {
			if s := txns[id].State; s != "CompleteCommit" {
				problem += fmt.Sprintf("%s is %q, want CompleteCommit; ", id, s)
			}
		}
		for id := range notCheckpointed {
			// Force-terminated: aborted, then Empty once the InitProducerId that aborted it
			// completes.
			switch s := txns[id].State; {
			case aborted && s != "CompleteAbort" && s != "Empty":
				problem += fmt.Sprintf("%s is %q, want CompleteAbort or Empty; ", id, s)
			case s == "Ongoing" || strings.HasPrefix(s, "Prepare") || s == "":
				problem += fmt.Sprintf("%s is %q, want ended; ", id, s)
			}
		}
		if problem == "" {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			// Not fatal: the count that follows says what the wrong ending cost.
			t.Errorf("30 s on: %s\n%s", problem, formatTxns(txns))
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// auditNames: the audit log names every id resolve ended.
func auditNames(t *testing.T, path string, ids ...map[string]int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("the audit log: %v", err)
		return
	}
	for _, m := range ids {
		for id := range m {
			if !strings.Contains(string(b), id) {
				t.Errorf("the audit log does not name %s:\n%s", id, b)
			}
		}
	}
}

// endOffsets are topic's high watermarks, or with stable its last stable offsets, by partition.
func endOffsets(ctx context.Context, t *testing.T, adm *kadm.Client, topic string, stable bool) []int64 {
	t.Helper()
	list := adm.ListEndOffsets
	if stable {
		list = adm.ListCommittedOffsets
	}
	listed, err := list(ctx, topic)
	if err == nil {
		err = listed.Error()
	}
	if err != nil {
		t.Fatalf("listing the offsets of %s: %v", topic, err)
	}
	out := make([]int64, len(listed[topic]))
	for p, o := range listed[topic] {
		out[p] = o.Offset
	}
	return out
}

// waitStable waits up to patience for LSO == high watermark on every partition, and returns both.
func waitStable(ctx context.Context, t *testing.T, adm *kadm.Client, topic string, patience time.Duration) (lso, hwm []int64) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for {
		lso, hwm = endOffsets(ctx, t, adm, topic, true), endOffsets(ctx, t, adm, topic, false)
		if slices.Equal(lso, hwm) || time.Now().After(deadline) || ctx.Err() != nil {
			return lso, hwm
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// logRecord is one record of the job's topic: the generator's index it carries, where it is
// and who wrote it; control marks a transaction marker, abort an abort marker.
type logRecord struct {
	index          int64
	partition      int32
	offset         int64
	producerID     int64
	producerEpoch  int16
	control, abort bool
}

func (r logRecord) writer() [2]int64 { return [2]int64{r.producerID, int64(r.producerEpoch)} }

// readTopic reads topic from the start up to ends (one offset per partition), read_committed
// or not, markers kept: under read_uncommitted and at a read_committed LSO equal to the high
// watermark every offset below the end is a record or a marker, so the read ends exactly at
// the last one. Below a pinned LSO an aborted record may be the last offset, which
// read_committed never shows: that read ends when nothing came for 3 s.
func readTopic(ctx context.Context, t *testing.T, bootstrap, topic string, committed bool, ends []int64) []logRecord {
	t.Helper()
	parts := map[int32]kgo.Offset{}
	for p := range ends {
		parts[int32(p)] = kgo.NewOffset().AtStart()
	}
	iso := kgo.ReadUncommitted()
	if committed {
		iso = kgo.ReadCommitted()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: parts}),
		kgo.FetchIsolationLevel(iso), kgo.KeepControlRecords(), kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	next := make([]int64, len(ends)) // the offset after the last one seen
	var out []logRecord
	last := time.Now()
	done := func() bool {
		for p, end := range ends {
			if next[p] < end {
				return false
			}
		}
		return true
	}
	for !done() {
		if time.Since(last) > 3*time.Second {
			if !committed {
				t.Fatalf("reading %s: stuck at %v, the high watermarks are %v", topic, next, ends)
			}
			break
		}
		pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		fs := cl.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			t.Fatalf("reading %s: %v", topic, ctx.Err())
		}
		fs.EachError(func(_ string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("reading %s partition %d: %v", topic, p, err)
			}
		})
		fs.EachRecord(func(r *kgo.Record) {
			last = time.Now()
			if int(r.Partition) >= len(ends) || r.Offset >= ends[r.Partition] {
				return
			}
			next[r.Partition] = max(next[r.Partition], r.Offset+1)
			lr := logRecord{partition: r.Partition, offset: r.Offset, producerID: r.ProducerID, producerEpoch: r.ProducerEpoch, index: -1}
			if r.Attrs.IsControl() {
				lr.control = true
				lr.abort = len(r.Key) >= 4 && r.Key[2] == 0 && r.Key[3] == 0
			} else {
				v := string(r.Value)
				i := strings.LastIndexByte(v, ' ')
				n, err := strconv.ParseInt(v[i+1:], 10, 64)
				if i < 0 || err != nil {
					t.Fatalf("record %q at %d/%d is not \"<job> <index>\"", v, r.Partition, r.Offset)
				}
				lr.index = n
			}
			out = append(out, lr)
		})
	}
	return out
}

// indexes are the generator indexes of the data records, in log order.
func indexes(rs []logRecord) []int64 {
	var out []int64
	for _, r := range rs {
		if !r.control {
			out = append(out, r.index)
		}
	}
	return out
}

// generatorRange is one split of the generator's index range: the subtask that reads it emits
// first, first+1, ... in order.
type generatorRange struct{ first, last int64 }

// generatorRanges are DataGeneratorSource's splits of 0..count-1 over n subtasks, as Flink's
// NumberSequenceIterator.split cuts them (Runner.java: count Long.MAX_VALUE; at parallelism 2,
// 0..2^62-1 and 2^62..2^63-2, checked with jshell on 1.20.5 and 2.2.1): equal lengths, the
// first ones one longer when n does not divide count.
func generatorRanges(count int64, n int) []generatorRange {
	per := count / int64(n)
	extra := count - per*int64(n)
	var out []generatorRange
	first := int64(0)
	for i := range int64(n) {
		size := per
		if i < extra {
			size++
		}
		out = append(out, generatorRange{first, first + size - 1})
		first += size
	}
	return out
}

// onceCount is what countOnce found in a set of records.
type onceCount struct {
	ranges  []generatorRange
	twice   map[int64]int // index → times seen, more than once
	missing []int64       // below the highest index seen in its range, not seen
	outside []int64       // in no range
	per     []int         // distinct indexes per range
	highest []int64       // per range, -1 when none
}

// countOnce counts indexes against the generator's ranges: each should appear once, and each
// range's from its first index up without a hole.
func countOnce(idx []int64, ranges []generatorRange) onceCount {
	c := onceCount{ranges: ranges, twice: map[int64]int{}, per: make([]int, len(ranges)), highest: make([]int64, len(ranges))}
	times := map[int64]int{}
	for _, i := range idx {
		times[i]++
	}
	byRange := make([][]int64, len(ranges))
	for i, n := range times {
		if n > 1 {
			c.twice[i] = n
		}
		r := slices.IndexFunc(ranges, func(g generatorRange) bool { return i >= g.first && i <= g.last })
		if r < 0 {
			c.outside = append(c.outside, i)
			continue
		}
		byRange[r] = append(byRange[r], i)
	}
	for r, is := range byRange {
		slices.Sort(is)
		c.per[r], c.highest[r] = len(is), -1
		want := ranges[r].first
		for _, i := range is {
			for ; want < i; want++ {
				c.missing = append(c.missing, want)
			}
			want = i + 1
			c.highest[r] = i
		}
	}
	slices.Sort(c.outside)
	return c
}

// dups says which indexes came more than once or lie in no range, or "".
func (c onceCount) dups() string {
	var b []string
	if len(c.twice) > 0 {
		ks := slices.Sorted(maps.Keys(c.twice))
		var shown []string
		for _, i := range ks[:min(len(ks), 20)] {
			shown = append(shown, fmt.Sprintf("%s ×%d", indexName(i, c.ranges), c.twice[i]))
		}
		b = append(b, fmt.Sprintf("%d indexes more than once (%s)", len(ks), strings.Join(shown, ", ")))
	}
	if len(c.outside) > 0 {
		b = append(b, fmt.Sprintf("%d indexes in no generator range (%v)", len(c.outside), c.outside[:min(len(c.outside), 20)]))
	}
	return strings.Join(b, "; ")
}

// problem says what is not exactly once: duplicates and gaps, or "".
func (c onceCount) problem() string {
	b := []string{}
	if d := c.dups(); d != "" {
		b = append(b, d)
	}
	if len(c.missing) > 0 {
		b = append(b, fmt.Sprintf("%d indexes missing below the highest seen, records of a committed checkpoint lost: %s", len(c.missing), spans(c.missing, c.ranges)))
	}
	return strings.Join(b, "; ")
}

// gapsNotBehind says which missing indexes no record at or past its partition's LSO holds,
// or "": while a transaction pins a partition, committed records after its first offset stay
// hidden, so a subtask's records on another partition show past them.
func (c onceCount) gapsNotBehind(log []logRecord, lso []int64) string {
	behind := map[int64]bool{}
	for _, r := range log {
		if !r.control && r.offset >= lso[r.partition] {
			behind[r.index] = true
		}
	}
	var lost []int64
	for _, i := range c.missing {
		if !behind[i] {
			lost = append(lost, i)
		}
	}
	if len(lost) == 0 {
		return ""
	}
	return fmt.Sprintf("%d indexes missing that no record behind the LSOs %v holds, lost: %s", len(lost), lso, spans(lost, c.ranges))
}

func (c onceCount) String() string {
	var parts []string
	total := 0
	for r := range c.ranges {
		total += c.per[r]
		last := "none"
		if c.highest[r] >= 0 {
			last = indexName(c.highest[r], c.ranges)
		}
		parts = append(parts, fmt.Sprintf("split %d: %d records, up to %s", r, c.per[r], last))
	}
	s := fmt.Sprintf("%d distinct indexes (%s)", total, strings.Join(parts, "; "))
	if len(c.twice) > 0 || len(c.missing) > 0 {
		s += fmt.Sprintf(", %d duplicated, %d missing", len(c.twice), len(c.missing))
	}
	return s
}

// indexName shows an index as split+offset: the raw numbers of split 1 have 19 digits.
func indexName(i int64, ranges []generatorRange) string {
	for r, g := range ranges {
		if i >= g.first && i <= g.last {
			return fmt.Sprintf("%d+%d", r, i-g.first)
		}
	}
	return strconv.FormatInt(i, 10)
}

// spans shows sorted indexes as runs (split+from..to), the first 20.
func spans(is []int64, ranges []generatorRange) string {
	is = slices.Clone(is)
	slices.Sort(is)
	var out []string
	for k := 0; k < len(is); {
		e := k
		for e+1 < len(is) && is[e+1] == is[e]+1 {
			e++
		}
		if e == k {
			out = append(out, indexName(is[k], ranges))
		} else {
			out = append(out, indexName(is[k], ranges)+".."+indexName(is[e], ranges))
		}
		k = e + 1
	}
	if len(out) > 20 {
		out = append(out[:20], fmt.Sprintf("and %d more runs", len(out)-20))
	}
	return strings.Join(out, ", ")
}

// sameSet: a and b hold the same indexes, each as often.
func sameSet(a, b []int64) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// minus is what of a is not in b.
func minus(a, b []int64) []int64 {
	in := map[int64]bool{}
	for _, i := range b {
		in[i] = true
	}
	var out []int64
	for _, i := range a {
		if !in[i] {
			out = append(out, i)
		}
	}
	return out
}

// countsOf shows how many records each open transaction wrote.
func countsOf(written map[string]int, open ...map[string]int64) string {
	var ids []string
	for _, m := range open {
		ids = append(ids, slices.Collect(maps.Keys(m))...)
	}
	sort.Strings(ids)
	var out []string
	for _, id := range ids {
		out = append(out, fmt.Sprintf("%s: %d", id, written[id]))
	}
	return strings.Join(out, ", ")
}
