package integration

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/txnscope/txnscope/internal/audit"
	"github.com/txnscope/txnscope/model"
)

// TestScopeFenced: a second producer taking the same transactional.id while the first has a
// transaction open is a fence; the first producer's commit then fails as fenced.
func TestScopeFenced(t *testing.T) {
	t.Parallel()
	for _, cv := range clientVersions() {
		t.Run(cv.name, func(t *testing.T) {
			t.Parallel()
			testFenced(t, cv.opts)
		})
	}
}

func testFenced(t *testing.T, opts []kgo.Opt) {
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := newAdmin(t, bootstrap)
	tp := topicOn(ctx, t, adm)
	id := name(t, "txn")
	first := producer(t, bootstrap, id, time.Minute, opts...)
	openTxn(ctx, t, first, tp, 3, "first")

	sc := newScope(t, bootstrap)
	open := txnOf(t, sc.poll(ctx), id)
	if open.State != model.Ongoing {
		t.Fatalf("first producer's transaction shows as %s", open.State)
	}

	// InitProducerId, as every producer sends when it starts.
	second := producer(t, bootstrap, id, time.Minute, opts...)
	pid, epoch, err := second.ProducerID(ctx)
	if err != nil {
		t.Fatalf("second producer's InitProducerId: %v", err)
	}
	if pid != open.ProducerID || epoch <= open.ProducerEpoch {
		t.Fatalf("second producer got pid %d epoch %d; first had pid %d epoch %d", pid, epoch, open.ProducerID, open.ProducerEpoch)
	}
	s2 := sc.poll(ctx)
	fenced := txnOf(t, s2, id)
	if fenced.State.Open() || fenced.ProducerEpoch != epoch {
		t.Errorf("after the fence %+v, want idle with the second producer's epoch %d", fenced, epoch)
	}
	if got := sc.kinds(id); !slices.Equal(got, []model.EventKind{model.Fenced}) {
		t.Errorf("events %v, want [fenced]; %s", got, sc.describe(s2))
	}
	if part, ok := s2.Partition(tp); !ok || part.LastStableOffset != part.HighWatermark {
		t.Errorf("after the fence the partition shows %+v (%v), want LSO == HWM", part, ok)
	}

	if err := first.EndTransaction(ctx, true); !isFenced(err) {
		t.Errorf("first producer's commit after the fence: %v, want a fenced error", err)
	}

	// The new owner carries on normally.
	openTxn(ctx, t, second, tp, 1, "second")
	endTxn(ctx, t, second, true)
	sc.untilState(ctx, id, model.CompleteCommit)
	got := slices.DeleteFunc(sc.kinds(id), func(k model.EventKind) bool { return k == model.Began })
	if !slices.Equal(got, []model.EventKind{model.Fenced, model.Committed}) {
		t.Errorf("events %v, want fenced then committed", got)
	}
	if st := sc.hist.Stats(id); st.Aborts != 1 || st.Commits != 1 {
		t.Errorf("history %+v, want one abort (the fence) and one commit", st)
	}
	if hwm, lso := offsetsOf(ctx, t, adm, tp); hwm != lso {
		t.Errorf("broker: HWM %d LSO %d, want equal", hwm, lso)
	}
}

// forceTerminate is the action the TUI plans from the row the user chose
// (model.PlanForceTerminate); a row that cannot be planned is kept as it is,
// for the refusals.
func forceTerminate(tx model.Txn) model.Action {
	if a, err := model.PlanForceTerminate(tx); err == nil {
		return a
	}
	return model.Action{Kind: model.ForceTerminate, TransactionalID: tx.ID, Coordinator: tx.Coordinator,
		State: tx.State, Start: tx.StartTime(), Partitions: tx.Partitions, ProducerID: tx.ProducerID, ProducerEpoch: tx.ProducerEpoch}
}

// abortOn is the action the TUI plans from a partition's orphaned producer
// row, with the idle rule set aside as the operator may: the tests' hanging
// producers wrote moments ago.
func abortOn(p model.Partition, pr model.Producer) model.Action {
	a, _ := model.PlanAbortPartition(p, pr, 0, time.Now())
	return a
}

// execute runs a through the real audit log, and checks that it was written
// ahead: an attempt line before every request, the result after.
func (s *scope) execute(ctx context.Context, a model.Action) model.Result {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	path := filepath.Join(s.t.TempDir(), "audit.log")
	log := audit.New(path)
	if err := log.Open(); err != nil {
		s.t.Fatal(err)
	}
	defer log.Close()
	r := s.c.Execute(ctx, a, log.Begin("integration", a))
	if r.Action.Kind != a.Kind || r.Action.Target() != a.Target() || r.At.IsZero() {
		s.t.Fatalf("result does not carry its action and time: %+v", r)
	}
	checkAudit(s.t, path, r)
	return r
}

// checkAudit: one attempt line per request sent, then one result line, all of
// one attempt.
func checkAudit(t *testing.T, path string, r model.Result) {
	t.Helper()
	var attempts, results int
	for _, e := range readAudit(t, path) {
		switch {
		case e.Attempt != r.Attempt:
			t.Errorf("audit line of another attempt: %+v", e)
		case e.Phase == "attempt" && results == 0:
			attempts++
		case e.Phase == "result":
			results++
		default:
			t.Errorf("audit line out of order: %+v", e)
		}
	}
	if attempts != r.Sends || results != 1 {
		t.Errorf("audit log: %d attempt lines for %d requests, %d results", attempts, r.Sends, results)
	}
}

// TestScopeForceTerminate: force-terminate of a stuck transaction whose producer is gone
// (killed: it just stops talking) aborts it, releases the LSO, bumps the epoch and fences
// the producer should it come back.
func TestScopeForceTerminate(t *testing.T) {
	t.Parallel()
	for _, cv := range clientVersions() {
		t.Run(cv.name, func(t *testing.T) {
			t.Parallel()
			testForceTerminate(t, cv.opts)
		})
	}
}

func testForceTerminate(t *testing.T, opts []kgo.Opt) {
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := newAdmin(t, bootstrap)
	tp := topicOn(ctx, t, adm)
	id := name(t, "txn")
	killed := producer(t, bootstrap, id, 10*time.Minute, opts...)
	openTxn(ctx, t, killed, tp, 3, "stuck")

	sc := newScope(t, bootstrap)
	s1 := sc.poll(ctx)
	tx := txnOf(t, s1, id)
	if tx.State != model.Ongoing || !partOf(t, s1, tp).Pinned() {
		t.Fatalf("stuck transaction %+v, partition %+v: want Ongoing pinning the LSO", tx, partOf(t, s1, tp))
	}
	r := sc.execute(ctx, forceTerminate(tx))
	if !r.OK() {
		t.Fatalf("force-terminate: %s (%+v)", r.Summary(), r)
	}

	s2 := sc.poll(ctx)
	after := txnOf(t, s2, id)
	if after.State.Open() || after.ProducerID != tx.ProducerID || after.ProducerEpoch <= tx.ProducerEpoch {
		t.Errorf("after force-terminate %+v, want idle, same producer id, epoch above %d", after, tx.ProducerEpoch)
	}
	part := partOf(t, s2, tp) // pinned in the previous poll, so read again
	if part.LastStableOffset != part.HighWatermark || part.HighWatermark != 4 {
		t.Errorf("after force-terminate %+v, want LSO == HWM == 4 (3 records and the abort marker)", part)
	}
	// Kafka answers the fence CONCURRENT_TRANSACTIONS and aborts; txnscope
	// stops there rather than re-send (kafka-transactions.sh re-sends, which
	// bumps the epoch once more): the id rests in CompleteAbort one epoch up.
	if after.State != model.CompleteAbort || after.ProducerEpoch != tx.ProducerEpoch+1 || r.Sends != 1 ||
		!strings.Contains(r.Summary(), "answered CONCURRENT_TRANSACTIONS and is aborting it") {
		t.Errorf("after force-terminate %+v (%s), want CompleteAbort at epoch %d after one request", after, r.Summary(), tx.ProducerEpoch+1)
	}
	if got := sc.kinds(id); !slices.Equal(got, []model.EventKind{model.Fenced}) && !slices.Equal(got, []model.EventKind{model.Aborted}) {
		t.Errorf("events %v, want [fenced] or [aborted]; %s", got, sc.describe(s2))
	}
	if err := killed.EndTransaction(ctx, true); !isFenced(err) && !errors.Is(err, kerr.InvalidTxnState) {
		t.Errorf("the killed producer's commit after force-terminate: %v, want it refused", err)
	}
	if hwm, lso := offsetsOf(ctx, t, adm, tp); hwm != 4 || lso != 4 {
		t.Errorf("broker: HWM %d LSO %d, want 4 and 4", hwm, lso)
	}
}

// TestScopeForceTerminateRefusedWhenChanged: a force-terminate decided on an Ongoing transaction
// that committed before it was sent is refused, and nothing changes.
func TestScopeForceTerminateRefusedWhenChanged(t *testing.T) {
	t.Parallel()
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := newAdmin(t, bootstrap)
	tp := topicOn(ctx, t, adm)
	id := name(t, "txn")
	p := producer(t, bootstrap, id, time.Minute)
	openTxn(ctx, t, p, tp, 2, "racing")

	sc := newScope(t, bootstrap)
	tx := txnOf(t, sc.poll(ctx), id)
	if tx.State != model.Ongoing {
		t.Fatalf("transaction shows as %s", tx.State)
	}
	act := forceTerminate(tx)
	endTxn(ctx, t, p, true) // while the operator was typing "abort"
	_, committed := sc.untilState(ctx, id, model.CompleteCommit)
	hwm, lso := offsetsOf(ctx, t, adm, tp)

	r := sc.execute(ctx, act)
	if !r.Refused || r.Sent || r.OK() || r.Err == "" {
		t.Fatalf("result %+v (%s), want refused before sending", r, r.Summary())
	}
	t.Logf("refused: %s", r.Summary())
	if !strings.Contains(r.Err, "changed") {
		t.Errorf("refusal %q does not say what changed", r.Err)
	}

	now := txnOf(t, sc.poll(ctx), id)
	if now.State != model.CompleteCommit || now.ProducerID != committed.ProducerID || now.ProducerEpoch != committed.ProducerEpoch {
		t.Errorf("after the refusal %+v, want it as committed %+v", now, committed)
	}
	if got := sc.kinds(id); !slices.Equal(got, []model.EventKind{model.Committed}) {
		t.Errorf("events %v, want only [committed]", got)
	}
	if h, l := offsetsOf(ctx, t, adm, tp); h != hwm || l != lso {
		t.Errorf("offsets moved: HWM %d→%d, LSO %d→%d", hwm, h, lso, l)
	}
	// The producer was not fenced: it carries on.
	openTxn(ctx, t, p, tp, 1, "after")
	endTxn(ctx, t, p, true)
}

// TestScopeAbortHangingPartition: on the broker without partition verification, a transactional
// batch the coordinator never heard of pins the LSO (KIP-664's hanging transaction). txnscope,
// told to watch the partition, shows the pin and the orphaned producer, and the abort on the
// partition releases it; the official tool agrees.
func TestScopeAbortHangingPartition(t *testing.T) {
	t.Parallel()
	bootstrap := NoVerifyBootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	adm := newAdmin(t, bootstrap)
	tp := topicOn(ctx, t, adm)
	id := name(t, "txn")
	pid, epoch, err := produceUnaddedTxnBatch(ctx, t, bootstrap, tp.Topic, id)
	if err != nil {
		t.Fatalf("the no-verify broker refused the hanging batch: %v", err)
	}

	// No open transaction names the partition, so only a watch brings it into view.
	sc := newScope(t, bootstrap, tp)
	s1 := sc.poll(ctx)
	tx := txnOf(t, s1, id)
	if tx.State.Open() || len(tx.Partitions) != 0 || tx.ProducerID != pid {
		t.Errorf("coordinator view %+v, want an idle id of producer %d without partitions", tx, pid)
	}
	part := partOf(t, s1, tp)
	if part.Err != "" || part.HighWatermark != 1 || part.LastStableOffset != 0 {
		t.Fatalf("hanging partition %+v, want HWM 1 LSO 0", part)
	}
	pin, ok := part.Pinner()
	if !ok || pin.ProducerID != pid || pin.ProducerEpoch != epoch || pin.CurrentTxnStartOffset != 0 {
		t.Fatalf("pinner %+v (%v), want producer %d epoch %d from offset 0", pin, ok, pid, epoch)
	}
	orphans := model.Orphans(part, model.ByProducerID(s1))
	if len(orphans) != 1 || orphans[0].ProducerID != pid {
		t.Fatalf("orphans %+v, want producer %d", orphans, pid)
	}
	if start, ok := describeProducersStart(ctx, t, bootstrap, tp, pid); !ok || start != 0 {
		t.Fatalf("kafka-transactions.sh describe-producers before the abort: start offset %d (%v), want 0", start, ok)
	}

	act := abortOn(part, orphans[0])
	r := sc.execute(ctx, act)
	if !r.OK() {
		t.Fatalf("abort on %s-%d: %s (%+v)", tp.Topic, tp.Partition, r.Summary(), r)
	}
	// Confirming the same dialog twice sends nothing the second time.
	if again := sc.execute(ctx, act); !again.Refused || again.Sent {
		t.Errorf("second abort of the same transaction: %s (%+v), want refused", again.Summary(), again)
	}

	s2 := sc.poll(ctx)
	after := partOf(t, s2, tp)
	if after.LastStableOffset != after.HighWatermark || after.HighWatermark != 2 {
		t.Errorf("after the abort %+v, want LSO == HWM == 2 (the record and the marker)", after)
	}
	if o := model.Orphans(after, model.ByProducerID(s2)); len(o) != 0 {
		t.Errorf("orphans after the abort: %+v", o)
	}
	if start, ok := describeProducersStart(ctx, t, bootstrap, tp, pid); ok && start >= 0 {
		t.Errorf("kafka-transactions.sh describe-producers still shows an open transaction from offset %d", start)
	}
	if hwm, lso := offsetsOf(ctx, t, adm, tp); hwm != 2 || lso != 2 {
		t.Errorf("broker: HWM %d LSO %d, want 2 and 2", hwm, lso)
	}
	// The aborted record is gone for read_committed readers.
	p := producer(t, bootstrap, name(t, "after"), time.Minute)
	openTxn(ctx, t, p, tp, 1, "later")
	endTxn(ctx, t, p, true)
	if got := consume(ctx, t, bootstrap, tp, true, "later-0"); !slices.Equal(got, []string{"later-0"}) {
		t.Errorf("read_committed read %v, want only later-0", got)
	}
}

// TestScopeAbortPartitionRefusedForListedTxn: the abort on a partition is for transactions the
// coordinator forgot; on one it still lists, txnscope refuses and points to force-terminate,
// and the transaction goes on untouched.
func TestScopeAbortPartitionRefusedForListedTxn(t *testing.T) {
	t.Parallel()
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := newAdmin(t, bootstrap)
	tp := topicOn(ctx, t, adm)
	id := name(t, "txn")
	p := producer(t, bootstrap, id, time.Minute)
	openTxn(ctx, t, p, tp, 2, "listed")

	sc := newScope(t, bootstrap)
	s1 := sc.poll(ctx)
	part := partOf(t, s1, tp)
	pin, ok := part.Pinner()
	if !ok {
		t.Fatalf("no pinner on %+v", part)
	}
	if o := model.Orphans(part, model.ByProducerID(s1)); len(o) != 0 {
		t.Errorf("orphans %+v on a partition whose transaction the coordinator lists", o)
	}
	r := sc.execute(ctx, abortOn(part, pin))
	if !r.Refused || r.Sent || !strings.Contains(r.Err, "force-terminate") {
		t.Fatalf("abort on a listed transaction's partition: %s (%+v), want refused, pointing to force-terminate", r.Summary(), r)
	}
	if hwm, lso := offsetsOf(ctx, t, adm, tp); hwm != 2 || lso != 0 {
		t.Errorf("broker after the refusal: HWM %d LSO %d, want 2 and 0 (still open)", hwm, lso)
	}
	endTxn(ctx, t, p, true)
	sc.untilState(ctx, id, model.CompleteCommit)
	if got := sc.kinds(id); !slices.Equal(got, []model.EventKind{model.Committed}) {
		t.Errorf("events %v, want [committed]", got)
	}
}

// repoRoot is the module root, found from this file's location.
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the test source")
	}
	return filepath.Dir(filepath.Dir(file))
}

// describeProducersStart runs the official `kafka-transactions.sh describe-producers` for tp and
// returns pid's CurrentTransactionStartOffset (-1 when it has none); ok is false when pid is not listed.
func describeProducersStart(ctx context.Context, t *testing.T, bootstrap string, tp model.TopicPartition, pid int64) (int64, bool) {
	t.Helper()
	cmd := exec.CommandContext(ctx, filepath.Join(repoRoot(t), "scripts", "kafka-tools"), "transactions",
		"--bootstrap-server", bootstrap, "describe-producers", "--topic", tp.Topic, "--partition", strconv.Itoa(int(tp.Partition)))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kafka-tools transactions describe-producers: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) == 0 || !strings.HasPrefix(strings.TrimSpace(lines[0]), "ProducerId") {
		t.Fatalf("unexpected describe-producers output:\n%s", out)
	}
	header := strings.Fields(lines[0])
	col := slices.Index(header, "CurrentTransactionStartOffset")
	if col < 0 {
		t.Fatalf("no CurrentTransactionStartOffset column:\n%s", out)
	}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) != len(header) || f[0] != strconv.FormatInt(pid, 10) {
			continue
		}
		start, err := strconv.ParseInt(f[col], 10, 64)
		if err != nil { // "None" and the like: no open transaction
			return -1, true
		}
		return start, true
	}
	return -1, false
}
