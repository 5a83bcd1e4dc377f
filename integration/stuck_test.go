package integration

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/txnscope/txnscope/model"
)

// readCommittedGroup runs a franz-go group consumer with read_committed on
// topic until the test ends, committing every 100 ms what it was given.
func readCommittedGroup(t *testing.T, bootstrap, group, topic string) {
	t.Helper()
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(bootstrap),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.AutoCommitInterval(100*time.Millisecond),
		kgo.FetchMaxWait(200*time.Millisecond),
	)
	if err != nil {
		t.Fatalf("consumer %s: %v", group, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		for ctx.Err() == nil {
			cl.PollFetches(ctx)
		}
	})
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		cl.Close() // commits what was polled and leaves the group
	})
}

// committedOf is the group's committed offset on tp (-1 when none).
func committedOf(ctx context.Context, t *testing.T, adm *kadm.Client, group string, tp model.TopicPartition) int64 {
	t.Helper()
	offs, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		if errors.Is(err, kerr.GroupIDNotFound) {
			return -1
		}
		t.Fatalf("FetchOffsets(%s): %v", group, err)
	}
	o, ok := offs.Lookup(tp.Topic, tp.Partition)
	if !ok || o.Err != nil {
		return -1
	}
	return o.At
}

func pinOn(pins []model.Pin, tp model.TopicPartition) (model.Pin, bool) {
	for _, p := range pins {
		if p.TopicPartition == tp {
			return p, true
		}
	}
	return model.Pin{}, false
}

func stuckGroup(p model.Pin, group string) (model.StuckGroup, bool) {
	for _, g := range p.Stuck {
		if g.Group == group {
			return g, true
		}
	}
	return model.StuckGroup{}, false
}

// TestStuckGroupBehindLingeringTransaction: a read_committed consumer group
// reads what was committed and stalls at the LSO of a transaction left open.
// txnscope finds the partition pinned by it, the transaction holding it and
// the group stuck behind it (without being told to watch anything); after a
// force-terminate the LSO advances and the group moves past the old LSO.
func TestStuckGroupBehindLingeringTransaction(t *testing.T) {
	t.Parallel()
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	adm := newAdmin(t, bootstrap)
	tp := topicOn(ctx, t, adm)

	before := producer(t, bootstrap, name(t, "before"), time.Minute)
	openTxn(ctx, t, before, tp, 5, "before")
	endTxn(ctx, t, before, true)

	id := name(t, "lingering")
	lingering := producer(t, bootstrap, id, 5*time.Minute)
	openTxn(ctx, t, lingering, tp, 3, "lingering")

	after := producer(t, bootstrap, name(t, "after"), time.Minute)
	openTxn(ctx, t, after, tp, 4, "after")
	endTxn(ctx, t, after, true)

	group := name(t, "group")
	readCommittedGroup(t, bootstrap, group, tp.Topic)

	sc := newScope(t, bootstrap)
	track := model.NewPinTracker()
	var pin model.Pin
	snap := sc.until(ctx, "the group stuck behind the lingering transaction", func(s *model.Snapshot) bool {
		track.Observe(s)
		p, ok := pinOn(model.Pins(s, track, s.TakenAt), tp)
		if !ok {
			return false
		}
		pin = p
		_, stuck := stuckGroup(p, group)
		return stuck
	})
	tx := txnOf(t, snap, id)
	oldLSO := pin.LastStableOffset
	switch {
	case !pin.HasPinner || pin.Pinner.ProducerID != tx.ProducerID || pin.Pinner.CurrentTxnStartOffset != oldLSO:
		t.Fatalf("pinner %+v, want producer %d of %s from the LSO %d", pin.Pinner, tx.ProducerID, id, oldLSO)
	case !pin.HasOwner || pin.Owner.ID != id || !pin.Blocking || pin.Hanging:
		t.Fatalf("pin %+v: want held by %s, not hanging", pin, id)
	case oldLSO != 6 || pin.HighWatermark != 6+3+4+1:
		// 5 records + marker, then the lingering 3 and the later committed 4 + marker.
		t.Errorf("LSO %d HWM %d, want 6 and 14", oldLSO, pin.HighWatermark)
	}
	g, _ := stuckGroup(pin, group)
	t.Logf("%s stuck at %d (LSO %d, HWM %d) behind %s", group, g.Committed, oldLSO, pin.HighWatermark, id)
	if g.Committed > oldLSO || g.LagLSO > model.StuckSlack || g.LagHWM != pin.HighWatermark-g.Committed || g.LagHWM < 8 {
		t.Errorf("stuck group %+v, want it at (or just below) the LSO %d with the held-back records ahead", g, oldLSO)
	}
	blocked := model.BlockedGroups(model.Pins(snap, track, snap.TakenAt))
	i := slices.IndexFunc(blocked, func(b model.BlockedGroup) bool { return b.Group == group })
	if i < 0 || !slices.Equal(blocked[i].Blockers, []string{id}) || !slices.Contains(blocked[i].Partitions, tp) {
		t.Fatalf("blocked groups %+v, want %s blocked by %s on %v", blocked, group, id, tp)
	}
	if snap.Scanned < 1 || snap.GroupsErr != "" {
		t.Errorf("scanned %d partitions, groups error %q", snap.Scanned, snap.GroupsErr)
	}

	r := sc.execute(ctx, forceTerminate(tx))
	if !r.OK() {
		t.Fatalf("force-terminate %s: %s", id, r.Summary())
	}
	sc.until(ctx, "the LSO to reach the high watermark", func(s *model.Snapshot) bool {
		track.Observe(s)
		_, pinned := pinOn(model.Pins(s, track, s.TakenAt), tp)
		return !pinned
	})
	for {
		if c := committedOf(ctx, t, adm, group, tp); c > oldLSO {
			if hwm, lso := offsetsOf(ctx, t, adm, tp); lso != hwm || lso <= oldLSO {
				t.Errorf("broker: LSO %d HWM %d, want the LSO past %d at the high watermark", lso, hwm, oldLSO)
			}
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the group never moved past the old LSO %d (committed %d)", oldLSO, committedOf(context.Background(), t, adm, group, tp))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// TestHangingPartitionFoundAndAborted: on the broker without partition
// verification, a transactional batch the coordinator never heard of pins
// the LSO. The scan finds it with no watch; the pin has no transaction
// holding it, the group waiting there is stuck behind it, and once pinned
// longer than the max transaction timeout it is hanging by both rules. The
// abort on the partition advances the LSO.
func TestHangingPartitionFoundAndAborted(t *testing.T) {
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
	group := name(t, "group")
	var offs kadm.Offsets
	offs.Add(kadm.Offset{Topic: tp.Topic, Partition: tp.Partition, At: 0, LeaderEpoch: -1})
	if err := adm.CommitAllOffsets(ctx, group, offs); err != nil {
		t.Fatalf("commit %s: %v", group, err)
	}

	sc := newScope(t, bootstrap) // no watch: the scan of every partition must find it
	track := model.NewPinTracker()
	s1 := sc.until(ctx, "the hanging partition with its stuck group", func(s *model.Snapshot) bool {
		track.Observe(s)
		p, ok := pinOn(model.Pins(s, track, s.TakenAt), tp)
		return ok && len(p.Stuck) > 0
	})
	pins := model.Pins(s1, track, s1.TakenAt)
	pin, _ := pinOn(pins, tp)
	switch {
	case !pin.HasPinner || pin.Pinner.ProducerID != pid || pin.Pinner.ProducerEpoch != epoch || pin.Pinner.CurrentTxnStartOffset != 0:
		t.Fatalf("pinner %+v, want producer %d epoch %d from offset 0", pin.Pinner, pid, epoch)
	case pin.Blocking || !pin.HasOwner || pin.Owner.ID != id || pin.Owner.State.Open():
		t.Fatalf("pin %+v: want owned by the idle id %s, held by no transaction", pin, id)
	case pin.Hanging:
		t.Errorf("hanging already (%q): it has not outlived the max transaction timeout yet", pin.Why)
	}
	if g, ok := stuckGroup(pin, group); !ok || g.Committed != 0 || g.LagHWM != 1 {
		t.Errorf("stuck %+v, want %s at offset 0, one record behind", pin.Stuck, group)
	}

	// Judged once the max transaction timeout has passed, it is hanging: the
	// coordinator's transaction for the id does not list the partition, and
	// no ongoing transaction owns the pinning producer.
	later := s1.TakenAt.Add(s1.MaxTimeout() + time.Minute)
	hung, _ := pinOn(model.Pins(s1, track, later), tp)
	why := strings.Join(hung.Why, " | ")
	if !hung.Hanging || !strings.Contains(why, string(model.NotInTxn)) || !strings.Contains(why, "no ongoing transaction owns") {
		t.Fatalf("judged at +%s: hanging %v (%q), want both rules", s1.MaxTimeout()+time.Minute, hung.Hanging, hung.Why)
	}
	if ids := model.HangingIDs(s1, model.Pins(s1, track, later)); !ids[id] {
		t.Errorf("hanging ids %v, want %s marked in the list", ids, id)
	}

	part := partOf(t, s1, tp)
	orphans := model.Orphans(part, model.ByProducerID(s1))
	if len(orphans) != 1 || orphans[0].ProducerID != pid {
		t.Fatalf("orphans %+v, want producer %d (the abort target)", orphans, pid)
	}
	if r := sc.execute(ctx, abortOn(part, orphans[0])); !r.OK() {
		t.Fatalf("abort on %s-%d: %s", tp.Topic, tp.Partition, r.Summary())
	}
	s2 := sc.until(ctx, "the LSO to advance", func(s *model.Snapshot) bool {
		track.Observe(s)
		_, pinned := pinOn(model.Pins(s, track, s.TakenAt), tp)
		return !pinned
	})
	if p, ok := s2.Partition(tp); ok && p.LastStableOffset != p.HighWatermark {
		t.Errorf("after the abort %+v, want LSO == HWM", p)
	}
	if hwm, lso := offsetsOf(ctx, t, adm, tp); hwm != 2 || lso != 2 {
		t.Errorf("broker: HWM %d LSO %d, want 2 and 2 (the record and the marker)", hwm, lso)
	}
}

// TestTmuxHangingPartitionFromThePartitionsView: the real binary on the broker without
// partition verification. The operator opens the partitions view, filters to the topic, sees
// the pinned partition held by no transaction with a consumer group stuck at its LSO, presses
// enter (the owning id's detail, on that partition), x, types abort: the dialog reports the
// broker accepted it, the audit log has one line, the LSO reaches the high watermark and the
// partition leaves the view.
func TestTmuxHangingPartitionFromThePartitionsView(t *testing.T) {
	t.Parallel()
	bootstrap := NoVerifyBootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	adm := newAdmin(t, bootstrap)
	tp := topicOn(ctx, t, adm)
	id := name(t, "txn")
	pid, _, err := produceUnaddedTxnBatch(ctx, t, bootstrap, tp.Topic, id)
	if err != nil {
		t.Fatalf("the no-verify broker refused the hanging batch: %v", err)
	}
	var offs kadm.Offsets
	offs.Add(kadm.Offset{Topic: tp.Topic, Partition: tp.Partition, At: 0, LeaderEpoch: -1})
	if err := adm.CommitAllOffsets(ctx, name(t, "group"), offs); err != nil {
		t.Fatalf("commit: %v", err)
	}
	auditLog := filepath.Join(t.TempDir(), "audit.log")
	term := startTUI(ctx, t, bootstrap, "--audit-log", auditLog)
	term.WaitText([]string{"pinned"})

	term.Keys("p")
	term.WaitText([]string{"sort pinned longest"})
	term.Keys("/")
	term.Text(tp.Topic)
	term.Keys("Enter")
	suffix := tp.Topic[len(tp.Topic)-8:] + "-0"
	scr := term.Wait("the pinned partition with its stuck group", func(scr string) bool {
		for _, l := range strings.Split(scr, "\n") {
			if strings.Contains(l, suffix) && strings.Contains(l, "not holding)") && strings.HasPrefix(strings.TrimLeft(l, "> "), "!!") &&
				strings.HasSuffix(strings.TrimSpace(l), " 1") {
				return true
			}
		}
		return false
	})
	if !strings.Contains(scr, "1 pinned") {
		t.Errorf("the filtered view should count one pinned partition:\n%s", scr)
	}

	term.Keys("Enter")
	term.WaitText([]string{"this pid, HANGING", "x abort producer " + strconv.FormatInt(pid, 10)})
	// The producer wrote moments ago, well within the brokers'
	// transaction.max.timeout.ms: the dialog says so and takes the longer
	// phrase; abort alone does not send it.
	term.Keys("x")
	term.WaitText([]string{"ABORT ON PARTITION", "WriteTxnMarkers", "not over 15m00s", "Type abort anyway and press enter"})
	term.Text("abort")
	term.Keys("Enter")
	term.WaitText([]string{"type abort anyway (exactly)"})
	term.Text(" anyway")
	term.Keys("Enter")
	term.WaitText([]string{"sent; the broker accepted it"})

	b, err := os.ReadFile(auditLog)
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	if lines := strings.Split(strings.TrimSpace(string(b)), "\n"); len(lines) != 2 ||
		!strings.Contains(lines[0], `"phase":"attempt"`) || !strings.Contains(lines[0], `"idle_rule":"waived by the operator"`) ||
		!strings.Contains(lines[1], `"abort-partition"`) || !strings.Contains(lines[1], tp.Topic+"-0") {
		t.Fatalf("audit log, want an attempt and a result for %s-0:\n%s", tp.Topic, b)
	}
	if hwm, lso := offsetsOf(ctx, t, adm, tp); hwm != 2 || lso != 2 {
		t.Errorf("broker: HWM %d LSO %d, want 2 and 2", hwm, lso)
	}
	term.Keys("Escape") // two at once would read as alt+esc
	term.Wait("the dialog closed", func(scr string) bool { return !strings.Contains(scr, "ABORT ON PARTITION") })
	term.Keys("Escape")
	term.WaitText([]string{"no pinned partition matches /" + tp.Topic})
	term.quit()
}
