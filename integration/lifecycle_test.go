package integration

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/txnscope/txnscope/model"
)

// TestScopeOngoingThenCommitted: txnscope shows a real open transaction with its start, timeout,
// partition and the LSO it pins, then sees it commit and counts the commit.
func TestScopeOngoingThenCommitted(t *testing.T) {
	t.Parallel()
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := newAdmin(t, bootstrap)
	tp := topicOn(ctx, t, adm)
	id := name(t, "txn")
	const timeout = 45 * time.Second
	p := producer(t, bootstrap, id, timeout)

	// A committed transaction first, so the open one does not start at offset 0:
	// offsets 0-1 hold its records, 2 its commit marker.
	openTxn(ctx, t, p, tp, 2, "first")
	endTxn(ctx, t, p, true)
	before := time.Now().Add(-time.Second) // the broker stamps whole milliseconds
	openTxn(ctx, t, p, tp, 3, "second")

	sc := newScope(t, bootstrap)
	s1 := sc.poll(ctx)
	// The header: one broker, Kafka's default transaction.max.timeout.ms, and Kafka 4's
	// transaction version 2, which model.Diff needs to know about.
	if s1.Brokers != 1 || s1.BrokerMaxTimeoutMs != 900000 || !s1.EpochBumpsOnEnd || s1.Bootstrap != bootstrap {
		t.Errorf("snapshot header: brokers %d, max timeout %d, epoch bumps on end %v, bootstrap %q",
			s1.Brokers, s1.BrokerMaxTimeoutMs, s1.EpochBumpsOnEnd, s1.Bootstrap)
	}
	tx := txnOf(t, s1, id)
	if tx.State != model.Ongoing || !tx.Described || tx.Err != "" {
		t.Fatalf("open transaction shows as %+v, want a described Ongoing", tx)
	}
	if tx.TimeoutMs != int32(timeout/time.Millisecond) {
		t.Errorf("timeout %d ms, want %d", tx.TimeoutMs, timeout/time.Millisecond)
	}
	if tx.StartTime().Before(before) || tx.StartTime().After(s1.TakenAt) {
		t.Errorf("start %s not between %s and the snapshot %s", tx.StartTime(), before, s1.TakenAt)
	}
	if age, ok := tx.Age(s1.TakenAt); !ok || age > 10*time.Second {
		t.Errorf("age %s (%v), want a few seconds at most", age, ok)
	}
	if r, ok := tx.Ratio(s1.TakenAt); !ok || r < 0 || r > 0.25 {
		t.Errorf("ratio %f (%v), want a small known ratio", r, ok)
	}
	if !slices.Equal(tx.Partitions, []model.TopicPartition{tp}) {
		t.Errorf("partitions %v, want [%v]", tx.Partitions, tp)
	}
	coord := adm.FindTxnCoordinators(ctx, id)[id]
	if coord.Err != nil || tx.Coordinator != coord.NodeID {
		t.Errorf("coordinator %d, FindCoordinator says %d (%v)", tx.Coordinator, coord.NodeID, coord.Err)
	}

	part := partOf(t, s1, tp)
	if part.Err != "" || part.HighWatermark != 6 || part.LastStableOffset != 3 || part.HeldBack() != 3 {
		t.Errorf("partition %+v, want HWM 6, LSO 3 (3 held back)", part)
	}
	hwm, lso := offsetsOf(ctx, t, adm, tp)
	if part.HighWatermark != hwm || part.LastStableOffset != lso {
		t.Errorf("txnscope says HWM %d LSO %d, the broker %d and %d", part.HighWatermark, part.LastStableOffset, hwm, lso)
	}
	meta, err := adm.Metadata(ctx, tp.Topic)
	if err != nil {
		t.Fatalf("Metadata: %v", err)
	}
	if leader := meta.Topics[tp.Topic].Partitions[tp.Partition].Leader; part.Leader != leader {
		t.Errorf("leader %d, metadata says %d", part.Leader, leader)
	}
	pin, ok := part.Pinner()
	if !ok || pin.ProducerID != tx.ProducerID || pin.ProducerEpoch != tx.ProducerEpoch || pin.CurrentTxnStartOffset != 3 {
		t.Errorf("pinner %+v (%v), want producer %d epoch %d from offset 3; producers %+v",
			pin, ok, tx.ProducerID, tx.ProducerEpoch, part.Producers)
	}
	if pin.LastTimestamp().Before(before) || pin.LastSequence < 0 {
		t.Errorf("producer row %+v: want a recent last timestamp and a sequence", pin)
	}

	endTxn(ctx, t, p, true)
	s2, done := sc.untilState(ctx, id, model.CompleteCommit)
	if done.ProducerID != tx.ProducerID || len(done.Partitions) != 0 {
		t.Errorf("after commit %+v: want the same producer id and no partitions", done)
	}
	if _, ok := done.Age(s2.TakenAt); ok {
		t.Errorf("a committed transaction still has an age")
	}
	if got := sc.kinds(id); !slices.Equal(got, []model.EventKind{model.Committed}) {
		t.Errorf("events %v, want [committed]", got)
	}
	if st := sc.hist.Stats(id); st.Commits != 1 || st.Aborts != 0 || st.Last != model.Committed {
		t.Errorf("history %+v, want one commit", st)
	}
	// The partition is read once more after its transaction ended (it was pinned),
	// showing the LSO caught up.
	if p, ok := s2.Partition(tp); ok && p.LastStableOffset != p.HighWatermark {
		t.Errorf("after commit %+v, want LSO == HWM", p)
	}
	if hwm, lso := offsetsOf(ctx, t, adm, tp); hwm != 7 || lso != 7 {
		t.Errorf("broker after commit: HWM %d LSO %d, want 7 and 7", hwm, lso)
	}
}

// TestScopeAborted: an aborted transaction is an abort (not a fence, although transaction version 2
// bumps the epoch); read_committed consumers skip its records, read_uncommitted ones do not.
func TestScopeAborted(t *testing.T) {
	t.Parallel()
	for _, cv := range clientVersions() {
		t.Run(cv.name, func(t *testing.T) {
			t.Parallel()
			testScopeAborted(t, cv.opts)
		})
	}
}

func testScopeAborted(t *testing.T, opts []kgo.Opt) {
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := newAdmin(t, bootstrap)
	tp := topicOn(ctx, t, adm)
	id := name(t, "txn")
	p := producer(t, bootstrap, id, time.Minute, opts...)
	openTxn(ctx, t, p, tp, 3, "aborted")

	sc := newScope(t, bootstrap)
	s1 := sc.poll(ctx)
	tx := txnOf(t, s1, id)
	if tx.State != model.Ongoing {
		t.Fatalf("open transaction shows as %s", tx.State)
	}
	if part := partOf(t, s1, tp); part.LastStableOffset != 0 || part.HighWatermark != 3 {
		t.Errorf("partition %+v, want LSO 0 HWM 3", part)
	}

	endTxn(ctx, t, p, false)
	_, done := sc.untilState(ctx, id, model.CompleteAbort)
	if done.ProducerID != tx.ProducerID {
		t.Errorf("producer id changed on abort: %d -> %d", tx.ProducerID, done.ProducerID)
	}
	if got := sc.kinds(id); !slices.Equal(got, []model.EventKind{model.Aborted}) {
		t.Errorf("events %v, want [aborted] (epoch %d -> %d)", got, tx.ProducerEpoch, done.ProducerEpoch)
	}
	if st := sc.hist.Stats(id); st.Aborts != 1 || st.Commits != 0 || st.Last != model.Aborted {
		t.Errorf("history %+v, want one abort", st)
	}

	// A committed record after the aborted ones tells the consumers where to stop.
	openTxn(ctx, t, p, tp, 1, "committed")
	endTxn(ctx, t, p, true)
	const last = "committed-0"
	uncommitted := consume(ctx, t, bootstrap, tp, false, last)
	if want := []string{"aborted-0", "aborted-1", "aborted-2", last}; !slices.Equal(uncommitted, want) {
		t.Errorf("read_uncommitted read %v, want %v", uncommitted, want)
	}
	committed := consume(ctx, t, bootstrap, tp, true, last)
	if !slices.Equal(committed, []string{last}) {
		t.Errorf("read_committed read %v, want only %q", committed, last)
	}
}

// TestScopeTimedOut: a producer that goes silent shows its transaction ageing towards its timeout,
// then the coordinator aborts it and txnscope calls it aborted at timeout; the LSO moves on.
func TestScopeTimedOut(t *testing.T) {
	t.Parallel()
	for _, cv := range clientVersions() {
		t.Run(cv.name, func(t *testing.T) {
			t.Parallel()
			testScopeTimedOut(t, cv.opts)
		})
	}
}

func testScopeTimedOut(t *testing.T, opts []kgo.Opt) {
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := newAdmin(t, bootstrap)
	tp := topicOn(ctx, t, adm)
	id := name(t, "txn")
	const timeout = 3 * time.Second
	p := producer(t, bootstrap, id, timeout, opts...)
	openTxn(ctx, t, p, tp, 3, "silent")
	// From here on the producer says nothing.

	sc := newScope(t, bootstrap)
	var (
		ratios     []float64
		first      model.Txn
		pinnedSeen bool
	)
	end := sc.until(ctx, id+" to end", func(s *model.Snapshot) bool {
		tx := txnOf(t, s, id)
		if tx.State != model.Ongoing {
			return true
		}
		if first.ID == "" {
			first = tx
		}
		if r, ok := tx.Ratio(s.TakenAt); ok {
			ratios = append(ratios, r)
		}
		part := partOf(t, s, tp)
		if part.LastStableOffset == part.HighWatermark && part.HighWatermark > 3 {
			// The coordinator is read before the partition: the timeout abort's marker
			// can land in between, and the partition then rightly shows it released.
			return false
		}
		if part.LastStableOffset != 0 || part.HighWatermark != 3 {
			t.Errorf("while open: partition %+v, want LSO 0 HWM 3", part)
		} else {
			pinnedSeen = true
		}
		return false
	})
	if !pinnedSeen {
		t.Error("no poll showed the partition pinned at LSO 0 with HWM 3 while the transaction was open")
	}
	if first.ID == "" {
		t.Fatal("never saw the transaction Ongoing")
	}
	if len(ratios) < 2 || !slices.IsSorted(ratios) || slices.Max(ratios) <= 0.5 {
		t.Errorf("age/timeout ratios seen %v: want them climbing past 0.5", ratios)
	}
	tx := txnOf(t, end, id)
	t.Logf("ended as %s, epoch %d -> %d; ratios %v", tx.State, first.ProducerEpoch, tx.ProducerEpoch, ratios)
	if !tx.State.Open() {
		if tx.State != model.CompleteAbort {
			t.Errorf("after the timeout the id is %s, want CompleteAbort", tx.State)
		}
	}
	final := sc.until(ctx, "the abort to complete", func(s *model.Snapshot) bool {
		return txnOf(t, s, id).State == model.CompleteAbort
	})
	if got := sc.kinds(id); !slices.Equal(got, []model.EventKind{model.TimedOut}) {
		t.Errorf("events %v, want [%s]; %s", got, model.TimedOut, sc.describe(final))
	}
	if st := sc.hist.Stats(id); st.Aborts != 1 || st.Last != model.TimedOut {
		t.Errorf("history %+v, want one abort, last aborted at timeout", st)
	}
	for _, e := range sc.events {
		if e.ID == id && e.Kind == model.TimedOut && !strings.Contains(e.Detail, "timeout 3s") {
			t.Errorf("event detail %q does not state the timeout", e.Detail)
		}
	}
	// The partition was pinned in the last poll before the end, so it was read again: caught up.
	sc.until(ctx, "the LSO to reach the high watermark", func(s *model.Snapshot) bool {
		part, ok := s.Partition(tp)
		return !ok || part.LastStableOffset == part.HighWatermark
	})
	if hwm, lso := offsetsOf(ctx, t, adm, tp); lso != hwm || hwm != 4 {
		t.Errorf("broker after the timeout: HWM %d LSO %d, want both 4 (3 records and the marker)", hwm, lso)
	}
}

// TestScopeBusyProducerNotFenced: a producer that commits several transactions between two polls
// (Kafka Streams commits every 100 ms under exactly-once) is not fenced, although under
// transaction version 2 its epoch goes up with every commit.
func TestScopeBusyProducerNotFenced(t *testing.T) {
	t.Parallel()
	for _, cv := range clientVersions() {
		t.Run(cv.name, func(t *testing.T) {
			t.Parallel()
			testScopeBusyProducerNotFenced(t, cv.opts)
		})
	}
}

func testScopeBusyProducerNotFenced(t *testing.T, opts []kgo.Opt) {
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := newAdmin(t, bootstrap)
	tp := topicOn(ctx, t, adm)
	id := name(t, "txn")
	p := producer(t, bootstrap, id, time.Minute, opts...)

	sc := newScope(t, bootstrap)
	sc.poll(ctx)
	stop := make(chan struct{})
	done := make(chan error, 1)
	commits := 0
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := p.BeginTransaction(); err != nil {
				done <- err
				return
			}
			if err := p.ProduceSync(ctx, &kgo.Record{Topic: tp.Topic, Partition: tp.Partition, Value: []byte("busy")}).FirstErr(); err != nil {
				done <- err
				return
			}
			time.Sleep(40 * time.Millisecond) // mostly Ongoing, as a streaming job is
			if err := p.EndTransaction(ctx, kgo.TryCommit); err != nil {
				done <- err
				return
			}
			commits++
		}
	}()
	for range 8 {
		time.Sleep(400 * time.Millisecond)
		sc.poll(ctx)
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatalf("busy producer: %v", err)
	}
	s := sc.poll(ctx)
	tx := txnOf(t, s, id)
	t.Logf("%d commits, epoch now %d, events %v", commits, tx.ProducerEpoch, sc.kinds(id))
	for _, e := range sc.events {
		if e.ID == id && e.Kind.IsAbort() {
			t.Errorf("a committing producer got %q (%s)", e.Kind, e.Detail)
		}
	}
	if st := sc.hist.Stats(id); st.Aborts != 0 {
		t.Errorf("history %+v counts aborts of a producer that only commits", st)
	}
}
