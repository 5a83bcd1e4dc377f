package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/txnscope/txnscope/internal/jsonout"
	"github.com/txnscope/txnscope/model"
)

// The seed scenarios 1-3 with a Flink-like EXACTLY_ONCE job written with the official Java client
// (kafka/flinklike, run through scripts/flinklike), watched by txnscope's Kafka layer polling the
// way the TUI does, and once by the real `txnscope snapshot -o json`.

// TestFlinkExactlyOnce (scenario 1): a running job's ids go Ongoing → CompleteCommit, txnscope
// counts every commit once, and a read_committed consumer sees each record only after its
// checkpoint committed: about half a checkpoint interval late on average.
func TestFlinkExactlyOnce(t *testing.T) {
	t.Parallel()
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	requireFlinkLike(ctx, t)
	adm := newAdmin(t, bootstrap)
	const (
		parallelism = 2
		checkpoints = 4
		records     = 10
		interval    = time.Second
	)
	topic := topicWith(ctx, t, adm, parallelism)
	prefix := name(t, "job")
	sc := newScope(t, bootstrap)
	sc.poll(ctx)
	visible := readCommitted(ctx, bootstrap, topic, parallelism*checkpoints*records)

	job := startFlink(t, "job", bootstrap, "--topic", topic, "--prefix", prefix,
		"--parallelism", fmt.Sprint(parallelism), "--checkpoint-interval-ms", fmt.Sprint(interval.Milliseconds()),
		"--transaction-timeout-ms", "10000", "--records", fmt.Sprint(records), "--checkpoints", fmt.Sprint(checkpoints))
	var ids []string
	for s := range parallelism {
		for cp := int64(1); cp <= checkpoints; cp++ {
			ids = append(ids, flinkID(prefix, s, cp))
		}
	}
	tr := newTracker(prefix)
	sc.until(ctx, "the job to finish and txnscope to show its commits", func(s *model.Snapshot) bool {
		tr.add(s)
		if len(job.all("done")) == 0 {
			return false
		}
		for _, id := range ids {
			if tx, ok := s.Txn(id); !ok || tx.State != model.CompleteCommit {
				return false
			}
		}
		return true
	})
	t.Logf("states txnscope saw:\n%s", tr)
	if code := job.waitExit(ctx); code != 0 {
		t.Errorf("job exit status %d, want 0", code)
	}

	var commitIDs []string
	for _, e := range job.all("commit") {
		commitIDs = append(commitIDs, e.ID)
	}
	slices.Sort(commitIDs)
	if want := slices.Sorted(slices.Values(ids)); !slices.Equal(commitIDs, want) {
		t.Fatalf("the job committed %v, want one transaction per subtask and checkpoint %v", commitIDs, want)
	}
	seenOpen, total := 0, 0
	for _, id := range ids {
		if tr.saw(id, model.Ongoing) {
			seenOpen++
		}
		if got := slices.DeleteFunc(sc.kinds(id), func(k model.EventKind) bool { return k == model.Began }); !slices.Equal(got, []model.EventKind{model.Committed}) {
			t.Errorf("%s: events %v, want [committed]", id, got)
		}
		st := sc.hist.Stats(id)
		if st.Commits != 1 || st.Aborts != 0 || st.Last != model.Committed {
			t.Errorf("%s: history %+v, want exactly one commit", id, st)
		}
		total += st.Commits
	}
	if total != len(ids) {
		t.Errorf("txnscope counted %d commits, the job made %d", total, len(ids))
	}
	// Each transaction is open for a whole interval while txnscope polls every ~100 ms: it must
	// have been seen open, not only learnt about after the fact.
	if seenOpen < len(ids)-1 {
		t.Errorf("only %d of %d transactions were seen Ongoing before their commit", seenOpen, len(ids))
	}

	recs, err := visible()
	if err != nil {
		t.Fatalf("read_committed consumer: %v", err)
	}
	precommit := map[string]time.Time{}
	for _, e := range job.all("precommit") {
		precommit[e.ID] = time.UnixMilli(e.int64Field(t, 0))
	}
	var delays []time.Duration
	for _, r := range recs {
		id, _, _ := strings.Cut(r.value, "/")
		pc, ok := precommit[id]
		switch {
		case !ok:
			t.Errorf("record %q of no checkpoint the job reported", r.value)
		case r.seen.Before(pc):
			t.Errorf("read_committed saw %q at %s, before its checkpoint started committing at %s",
				r.value, r.seen.Format("15:04:05.000"), pc.Format("15:04:05.000"))
		}
		delays = append(delays, r.seen.Sub(r.produced))
	}
	if len(recs) != parallelism*checkpoints*records {
		t.Fatalf("read_committed read %d records, want %d", len(recs), parallelism*checkpoints*records)
	}
	slices.Sort(delays)
	var sum time.Duration
	for _, d := range delays {
		sum += d
	}
	mean := sum / time.Duration(len(delays))
	t.Logf("visibility delay (record timestamp → seen by read_committed) over %d records, checkpoint interval %s: "+
		"min %s, mean %s, median %s, max %s", len(delays), interval, delays[0].Round(time.Millisecond),
		mean.Round(time.Millisecond), delays[len(delays)/2].Round(time.Millisecond), delays[len(delays)-1].Round(time.Millisecond))
	// Records are spread over each interval and released together at its end: a mean near half
	// the interval, a maximum near the whole interval (plus the commit's own latency).
	if mean < interval/4 || mean > interval+time.Second {
		t.Errorf("mean visibility delay %s, want roughly half the %s checkpoint interval", mean, interval)
	}
	if longest := delays[len(delays)-1]; longest > interval+3*time.Second {
		t.Errorf("max visibility delay %s, want at most about one checkpoint interval (%s)", longest, interval)
	}
}

// TestFlinkKilledJobTimesOut (scenario 2): a job killed with kill -9 leaves its transactions open:
// they age toward transaction.timeout.ms pinning the LSO of their partitions at their first
// offset, until the coordinator aborts them; txnscope says aborted at timeout, and the LSO moves on.
func TestFlinkKilledJobTimesOut(t *testing.T) {
	t.Parallel()
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	requireFlinkLike(ctx, t)
	bin := buildTxnscope(ctx, t)
	adm := newAdmin(t, bootstrap)
	const (
		parallelism = 2
		timeout     = 7 * time.Second
	)
	topic := topicWith(ctx, t, adm, parallelism)
	prefix := name(t, "job")
	sc := newScope(t, bootstrap)
	sc.poll(ctx)

	job := startFlink(t, "job", bootstrap, "--topic", topic, "--prefix", prefix,
		"--parallelism", fmt.Sprint(parallelism), "--checkpoint-interval-ms", "1000",
		"--transaction-timeout-ms", fmt.Sprint(timeout.Milliseconds()), "--records", "10")
	// Checkpoint 1 commits; kill the job as soon as checkpoint 2's transactions hold records.
	open := map[string]model.TopicPartition{}
	startAt := map[string]int64{}
	for s := range parallelism {
		id := flinkID(prefix, s, 2)
		first := job.waitEvent(ctx, "first", id)
		open[id] = model.TopicPartition{Topic: topic, Partition: int32(first.int64Field(t, 0))}
		startAt[id] = first.int64Field(t, 1)
	}
	job.kill9(ctx)
	for s := range parallelism {
		if id := flinkID(prefix, s, 1); !slices.ContainsFunc(job.all("commit"), func(e flinkEvent) bool { return e.ID == id }) {
			t.Fatalf("%s was not committed before the kill", id)
		}
	}
	if len(job.all("begin")) != 2*parallelism {
		t.Fatalf("the job began %d transactions, want checkpoints 1 and 2 of each subtask only", len(job.all("begin")))
	}

	tr := newTracker(prefix)
	ratios := map[string][]float64{}
	pinnedSeen := map[string]bool{}
	unpinnedPolls := 0
	jsonChecked := false
	sc.until(ctx, "the killed job's transactions to end", func(s *model.Snapshot) bool {
		tr.add(s)
		ongoing := 0
		for id, tp := range open {
			tx := txnOf(t, s, id)
			if tx.State != model.Ongoing {
				continue
			}
			ongoing++
			if r, ok := tx.Ratio(s.TakenAt); ok {
				ratios[id] = append(ratios[id], r)
			}
			if tx.TimeoutMs != int32(timeout.Milliseconds()) || !slices.Equal(tx.Partitions, []model.TopicPartition{tp}) {
				t.Errorf("%s: timeout %d ms, partitions %v; want %s and [%v]", id, tx.TimeoutMs, tx.Partitions, timeout, tp)
			}
			part := partOf(t, s, tp)
			if part.LastStableOffset >= part.HighWatermark {
				// The high watermark and the LSO come from two ListOffsets requests; once in a
				// while (seen under the full suite's load) the broker answered an LSO past the
				// high watermark read just before, and kafkaadmin shows that as not pinned.
				// What matters is that the pin shows, and that it is never shown wrongly.
				unpinnedPolls++
				continue
			}
			pinnedSeen[id] = true
			pin, ok := part.Pinner()
			if part.LastStableOffset != startAt[id] || part.HighWatermark <= startAt[id] || !ok ||
				pin.ProducerID != tx.ProducerID || pin.CurrentTxnStartOffset != startAt[id] {
				t.Errorf("%s open: partition %+v pinner %+v (%v); want the LSO pinned at its first offset %d by producer %d",
					id, part, pin, ok, startAt[id], tx.ProducerID)
			}
		}
		if ongoing == len(open) && !jsonChecked {
			jsonChecked = true
			checkPinnedJSON(ctx, t, bin, bootstrap, open, startAt, timeout)
		}
		return ongoing == 0
	})
	sc.until(ctx, "the timeout aborts to complete and the LSO to catch up", func(s *model.Snapshot) bool {
		tr.add(s)
		for id, tp := range open {
			if txnOf(t, s, id).State != model.CompleteAbort {
				return false
			}
			if p, ok := s.Partition(tp); ok && p.LastStableOffset != p.HighWatermark {
				return false
			}
		}
		return true
	})
	t.Logf("states txnscope saw:\n%s", tr)
	for id := range open {
		if !pinnedSeen[id] {
			t.Errorf("%s: no poll showed its partition pinned at offset %d", id, startAt[id])
		}
	}
	if unpinnedPolls > 0 {
		t.Logf("%d poll(s) read an LSO at or past the high watermark while the transactions were open", unpinnedPolls)
	}
	if !jsonChecked {
		t.Error("txnscope snapshot -o json never ran while both transactions were open")
	}

	for id, tp := range open {
		rs := ratios[id]
		if len(rs) < 2 || !slices.IsSorted(rs) || slices.Max(rs) <= 0.5 {
			t.Errorf("%s: age/timeout ratios %v, want them climbing past 0.5", id, rs)
		}
		got := slices.DeleteFunc(sc.kinds(id), func(k model.EventKind) bool { return k == model.Began })
		if !slices.Equal(got, []model.EventKind{model.TimedOut}) {
			t.Errorf("%s: events %v, want [%s]", id, got, model.TimedOut)
		}
		if st := sc.hist.Stats(id); st.Aborts != 1 || st.Commits != 0 || st.Last != model.TimedOut {
			t.Errorf("%s: history %+v, want one abort at timeout", id, st)
		}
		for _, e := range sc.events {
			if e.ID == id && e.Kind == model.TimedOut && !strings.Contains(e.Detail, "timeout 7s") {
				t.Errorf("%s: event detail %q does not state the timeout", id, e.Detail)
			}
		}
		hwm, lso := offsetsOf(ctx, t, adm, tp)
		if lso != hwm || hwm <= startAt[id] {
			t.Errorf("%s: broker after the abort: HWM %d LSO %d, want equal, past %d", id, hwm, lso, startAt[id])
		}
	}
	for s := range parallelism {
		id := flinkID(prefix, s, 1)
		if st := sc.hist.Stats(id); st.Commits != 1 || st.Aborts != 0 {
			t.Errorf("%s (committed before the kill): history %+v, want one commit", id, st)
		}
	}
}

// checkPinnedJSON runs `txnscope snapshot -o json` while the killed job's transactions are open
// and checks what it says about them and the partitions they pin.
func checkPinnedJSON(ctx context.Context, t *testing.T, bin, bootstrap string, open map[string]model.TopicPartition,
	startAt map[string]int64, timeout time.Duration) {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, "snapshot", "-o", "json", "-b", bootstrap, "--timeout", "10s")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("txnscope snapshot -o json: %v\nstderr: %s", err, stderr.String())
	}
	var snap jsonout.SnapshotJSON
	if err := json.Unmarshal(stdout.Bytes(), &snap); err != nil {
		t.Fatalf("snapshot output does not decode: %v\n%s", err, stdout.String())
	}
	for id, tp := range open {
		i := slices.IndexFunc(snap.Transactions, func(x jsonout.TxnJSON) bool { return x.TransactionalID == id })
		if i < 0 {
			t.Errorf("snapshot json: %s missing", id)
			continue
		}
		tx := snap.Transactions[i]
		switch {
		case tx.State != model.Ongoing:
			t.Errorf("snapshot json: %s is %s, want Ongoing", id, tx.State)
		case tx.TimeoutMs != int32(timeout.Milliseconds()):
			t.Errorf("snapshot json: %s timeout_ms %d, want %d", id, tx.TimeoutMs, timeout.Milliseconds())
		case tx.AgeMs == nil || *tx.AgeMs < 0 || *tx.AgeMs >= timeout.Milliseconds():
			t.Errorf("snapshot json: %s age_ms %v, want below the timeout", id, tx.AgeMs)
		case tx.TimeoutRatio == nil || *tx.TimeoutRatio < 0 || *tx.TimeoutRatio >= 1:
			t.Errorf("snapshot json: %s timeout_ratio %v, want in [0, 1)", id, tx.TimeoutRatio)
		case !slices.Equal(tx.Partitions, []model.TopicPartition{tp}):
			t.Errorf("snapshot json: %s partitions %v, want [%v]", id, tx.Partitions, tp)
		}
		j := slices.IndexFunc(snap.Partitions, func(p jsonout.PartitionJSON) bool {
			return p.Topic == tp.Topic && p.Partition == tp.Partition
		})
		if j < 0 {
			t.Errorf("snapshot json: partition %v missing", tp)
			continue
		}
		part := snap.Partitions[j]
		if part.LastStableOffset != startAt[id] || part.HighWatermark <= part.LastStableOffset {
			t.Errorf("snapshot json: %v HWM %d LSO %d, want the LSO pinned at %d below the HWM",
				tp, part.HighWatermark, part.LastStableOffset, startAt[id])
		}
		if !slices.ContainsFunc(part.Producers, func(p jsonout.ProducerJSON) bool {
			return p.ProducerID == tx.ProducerID && p.CurrentTxnStartOffset != nil && *p.CurrentTxnStartOffset == startAt[id]
		}) {
			t.Errorf("snapshot json: %v producers %+v, want producer %d with current_txn_start_offset %d",
				tp, part.Producers, tx.ProducerID, startAt[id])
		}
	}
}

// TestFlinkRestartFencesZombie (scenario 3): the job restarts from its last checkpoint with the same
// ids while the old instance still runs (a zombie TaskManager): the restart's InitProducerId
// aborts the old transactions, the zombie gets ProducerFencedException and dies, txnscope records
// the fence, and the restarted job commits on the same ids.
func TestFlinkRestartFencesZombie(t *testing.T) {
	t.Parallel()
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	requireFlinkLike(ctx, t)
	adm := newAdmin(t, bootstrap)
	const parallelism = 2
	topic := topicWith(ctx, t, adm, parallelism)
	prefix := name(t, "job")
	sc := newScope(t, bootstrap)
	sc.poll(ctx)

	// The zombie's checkpoint never comes: it just keeps writing into checkpoint 1's transaction.
	zombie := startFlink(t, "zombie", bootstrap, "--topic", topic, "--prefix", prefix,
		"--parallelism", fmt.Sprint(parallelism), "--checkpoint-interval-ms", "60000", "--records", "240",
		"--transaction-timeout-ms", "60000")
	var first, second []string
	for s := range parallelism {
		first = append(first, flinkID(prefix, s, 1))
		second = append(second, flinkID(prefix, s, 2))
		zombie.waitEvent(ctx, "first", first[s])
	}
	tr := newTracker(prefix)
	before := sc.until(ctx, "the zombie's transactions to show Ongoing", func(s *model.Snapshot) bool {
		tr.add(s)
		for _, id := range first {
			if tx, ok := s.Txn(id); !ok || tx.State != model.Ongoing {
				return false
			}
		}
		return true
	})

	// A second observer polls at the UI's default refresh (2 s): it mostly sees the zombie's
	// transaction replaced by the restart's, or already the restart's commit.
	const refresh = 2 * time.Second
	slow, slowTr := newScope(t, bootstrap), newTracker(prefix)
	slowTr.add(slow.poll(ctx))
	lastSlow := time.Now()
	pollSlow := func() {
		if time.Since(lastSlow) >= refresh {
			slowTr.add(slow.poll(ctx))
			lastSlow = time.Now()
		}
	}

	restarted := startFlink(t, "restarted", bootstrap, "--topic", topic, "--prefix", prefix,
		"--parallelism", fmt.Sprint(parallelism), "--checkpoint-interval-ms", "1000", "--records", "5",
		"--transaction-timeout-ms", "60000", "--checkpoints", "2", "--start-checkpoint", "1")
	sc.until(ctx, "the restarted job to commit checkpoints 1 and 2", func(s *model.Snapshot) bool {
		tr.add(s)
		pollSlow()
		if len(restarted.all("done")) == 0 {
			return false
		}
		for _, id := range append(slices.Clone(first), second...) {
			if tx, ok := s.Txn(id); !ok || tx.State != model.CompleteCommit {
				return false
			}
		}
		return true
	})
	slowTr.add(slow.poll(ctx))
	t.Logf("states txnscope saw:\n%s", tr)
	t.Logf("states txnscope saw polling every %s:\n%s", refresh, slowTr)

	fenced := zombie.waitFor(ctx, "fenced", func(e flinkEvent) bool { return e.Kind == "fenced" })
	if !slices.Contains(first, fenced.ID) || len(fenced.Fields) != 1 ||
		fenced.Fields[0] != "org.apache.kafka.common.errors.ProducerFencedException" {
		t.Errorf("zombie printed %q, want one of %v fenced with ProducerFencedException", fenced, first)
	}
	if code := zombie.waitExit(ctx); code != 3 {
		t.Errorf("zombie exit status %d, want 3 (fenced)", code)
	}
	if code := restarted.waitExit(ctx); code != 0 {
		t.Errorf("restarted job exit status %d, want 0", code)
	}
	if n := len(zombie.all("commit")); n != 0 {
		t.Errorf("the zombie committed %d transactions after the restart", n)
	}

	for _, id := range first {
		old := txnOf(t, before, id)
		// What the TUI shows: the id's events as History keeps them. The fence's abort often
		// shows first as a plain abort, relabelled once the restart's InitProducerId is seen.
		for _, o := range []struct {
			name string
			sc   *scope
		}{{"polling every 100 ms", sc}, {"polling every " + refresh.String(), slow}} {
			st := o.sc.hist.Stats(id)
			var got []model.EventKind
			for _, e := range st.Recent {
				if e.Kind != model.Began {
					got = append(got, e.Kind)
				}
			}
			if !slices.Equal(got, []model.EventKind{model.Fenced, model.Committed}) {
				t.Errorf("%s, %s: events %v, want the zombie's transaction fenced, then the restart's committed (zombie epoch %d); raw %v",
					o.name, id, got, old.ProducerEpoch, o.sc.kinds(id))
			}
			if st.Aborts != 1 || st.Commits != 1 || st.Last != model.Committed {
				t.Errorf("%s, %s: history %+v, want one abort (the fence) then one commit", o.name, id, st)
			}
		}
	}
	// The fences are takeovers of the prefix, which the collision rule counts; one restart is
	// not a collision.
	if st := sc.hist.Stats(first[0]); len(st.PrefixTakeovers) != len(first) {
		t.Errorf("takeovers recorded on the prefix: %+v, want one per zombie transaction", st.PrefixTakeovers)
	}
	if n, shared := model.Collision(sc.hist.Stats(first[0]).PrefixTakeovers, time.Now()); shared {
		t.Errorf("one restart flagged as a prefix collision (%d takeovers)", n)
	}
	for _, id := range second {
		if st := sc.hist.Stats(id); st.Commits != 1 || st.Aborts != 0 {
			t.Errorf("%s: history %+v, want one commit", id, st)
		}
	}
}

// topicWith creates a topic with n partitions for the test.
func topicWith(ctx context.Context, t *testing.T, adm *kadm.Client, n int32) string {
	t.Helper()
	topic := name(t, "topic")
	resp, err := adm.CreateTopic(ctx, n, 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("CreateTopic(%s, %d partitions): %v", topic, n, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		_, _ = adm.DeleteTopic(ctx, topic)
	})
	return topic
}

// visibleRecord is a record a read_committed consumer got: when it was produced (its CreateTime,
// the producer's clock) and when the consumer saw it.
type visibleRecord struct {
	value          string
	produced, seen time.Time
}

// readCommitted starts a read_committed consumer of every partition of topic from the start, and
// returns a function that waits until it has read want records (or ctx ends) and returns them.
func readCommitted(ctx context.Context, bootstrap, topic string, want int) func() ([]visibleRecord, error) {
	type result struct {
		recs []visibleRecord
		err  error
	}
	done := make(chan result, 1)
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		done <- result{err: err}
	} else {
		go func() {
			defer cl.Close()
			var recs []visibleRecord
			for len(recs) < want {
				fs := cl.PollFetches(ctx)
				seen := time.Now()
				if ctx.Err() != nil {
					done <- result{recs, fmt.Errorf("read %d of %d records: %w", len(recs), want, ctx.Err())}
					return
				}
				var ferr error
				fs.EachError(func(_ string, _ int32, err error) { ferr = err })
				if ferr != nil {
					done <- result{recs, ferr}
					return
				}
				fs.EachRecord(func(r *kgo.Record) {
					recs = append(recs, visibleRecord{value: string(r.Value), produced: r.Timestamp, seen: seen})
				})
			}
			done <- result{recs: recs}
		}()
	}
	return func() ([]visibleRecord, error) {
		r := <-done
		return r.recs, r.err
	}
}

// tracker remembers the states each id of one job went through, poll after poll.
type tracker struct {
	prefix string
	seen   map[string][]string // "State/epoch", consecutive duplicates dropped
}

func newTracker(prefix string) *tracker { return &tracker{prefix: prefix, seen: map[string][]string{}} }

func (tr *tracker) add(s *model.Snapshot) {
	for _, tx := range s.Txns {
		if !strings.HasPrefix(tx.ID, tr.prefix+"-") {
			continue
		}
		st := fmt.Sprintf("%s/%d", tx.State, tx.ProducerEpoch)
		if l := tr.seen[tx.ID]; len(l) == 0 || l[len(l)-1] != st {
			tr.seen[tx.ID] = append(l, st)
		}
	}
}

func (tr *tracker) saw(id string, state model.State) bool {
	return slices.ContainsFunc(tr.seen[id], func(s string) bool { return strings.HasPrefix(s, state.String()+"/") })
}

func (tr *tracker) String() string {
	ids := make([]string, 0, len(tr.seen))
	for id := range tr.seen {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var b strings.Builder
	for _, id := range ids {
		fmt.Fprintf(&b, "  %s: %s\n", strings.TrimPrefix(id, tr.prefix), strings.Join(tr.seen[id], " → "))
	}
	return b.String()
}
