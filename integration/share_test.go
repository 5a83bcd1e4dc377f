package integration

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/txnscope/txnscope/model"
)

// shareConsumer runs Kafka's own share consumer (kafka-console-share-consumer.sh) in group on
// topic until the test ends; what it prints (the values it was given) is returned as it comes.
func shareConsumer(t *testing.T, bootstrap, group, topic string) *syncBuffer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, kafkaTools(), "org.apache.kafka.tools.consumer.ConsoleShareConsumer",
		"--bootstrap-server", bootstrap, "--topic", topic, "--group", group)
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// The script's JVM is its child: the whole group goes at the end.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatalf("share consumer %s: %v", group, err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("share consumer %s said:\n%s", group, out.String())
		}
	})
	return &out
}

// groupConfig sets a group's configs with kafka-configs.sh (entity type groups).
func groupConfig(ctx context.Context, t *testing.T, bootstrap, group, configs string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, kafkaTools(), "configs", "--bootstrap-server", bootstrap,
		"--alter", "--entity-type", "groups", "--entity-name", group, "--add-config", configs)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kafka-configs --alter groups %s %s: %v\n%s", group, configs, err, out)
	}
}

// TestShareGroupStuckBehindOpenTransaction: two share groups (KIP-932), run by Kafka's own
// share consumer, read a partition where an open transaction follows five committed records.
// The one whose share.isolation.level is read_committed acknowledges the five and waits at its
// start offset, the LSO: it is stuck, with the open transaction as its blocker and its type
// "share". The read_uncommitted one is given every record and is never called stuck. A share
// partition whose start offset was never written (-1: the group has acknowledged nothing
// there yet) holds nothing back that txnscope could show, and is left out.
func TestShareGroupStuckBehindOpenTransaction(t *testing.T) {
	t.Parallel()
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	adm := newAdmin(t, bootstrap)
	tp := topicOn(ctx, t, adm)

	// Five committed records the groups read and acknowledge, then an open transaction, then
	// four committed records behind it: LSO 6, high watermark 14.
	before := producer(t, bootstrap, name(t, "before"), time.Minute)
	openTxn(ctx, t, before, tp, 5, "before")
	endTxn(ctx, t, before, true)
	id := name(t, "open")
	open := producer(t, bootstrap, id, 5*time.Minute)
	openTxn(ctx, t, open, tp, 3, "open")
	after := producer(t, bootstrap, name(t, "after"), time.Minute)
	openTxn(ctx, t, after, tp, 4, "after")
	endTxn(ctx, t, after, true)

	committed, uncommitted := name(t, "share-rc"), name(t, "share-ru")
	groupConfig(ctx, t, bootstrap, committed, "share.isolation.level=read_committed,share.auto.offset.reset=earliest")
	groupConfig(ctx, t, bootstrap, uncommitted, "share.isolation.level=read_uncommitted,share.auto.offset.reset=earliest")
	rc := shareConsumer(t, bootstrap, committed, tp.Topic)
	ru := shareConsumer(t, bootstrap, uncommitted, tp.Topic)
	for !strings.Contains(rc.String(), "before-4") || !strings.Contains(ru.String(), "after-3") {
		if ctx.Err() != nil {
			t.Fatalf("the share consumers were not given the records: read_committed %q, read_uncommitted %q", rc.String(), ru.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if strings.Contains(rc.String(), "open-") {
		t.Fatalf("the read_committed share consumer was given the open transaction's records: %q", rc.String())
	}

	sc := newScope(t, bootstrap)
	track := model.NewPinTracker()
	snap := sc.until(ctx, "the read_committed share group stuck at the LSO", func(s *model.Snapshot) bool {
		track.Observe(s)
		p, ok := pinOn(model.Pins(s, track, s.TakenAt), tp)
		if !ok {
			return false
		}
		_, stuck := stuckGroup(p, committed)
		return stuck
	})
	pin, _ := pinOn(model.Pins(snap, track, snap.TakenAt), tp)
	g, _ := stuckGroup(pin, committed)
	if g.Type != model.GroupShare || g.Committed != 6 || pin.LastStableOffset != 6 || pin.HighWatermark != 14 || g.LagHWM != 8 {
		t.Errorf("stuck %+v on LSO %d HWM %d: want a share group at start offset 6 = the LSO, 8 held back", g, pin.LastStableOffset, pin.HighWatermark)
	}
	if _, stuck := stuckGroup(pin, uncommitted); stuck {
		t.Errorf("the read_uncommitted share group is called stuck: %+v", pin.Stuck)
	}
	blocked := model.BlockedGroups(model.Pins(snap, track, snap.TakenAt))
	i := slices.IndexFunc(blocked, func(b model.BlockedGroup) bool { return b.Group == committed })
	if i < 0 || blocked[i].Type != model.GroupShare || !slices.Equal(blocked[i].Blockers, []string{id}) {
		t.Fatalf("blocked groups %+v: want %s (share) blocked by %s", blocked, committed, id)
	}
	if snap.GroupsErr != "" {
		t.Errorf("groups error %q", snap.GroupsErr)
	}

	// The built binary's snapshot says the same, with the type.
	js := snapshotJSON(ctx, t, buildTxnscope(ctx, t), bootstrap)
	var found bool
	for _, g := range js.StuckGroups {
		switch g.Group {
		case committed:
			found = g.Type == model.GroupShare && slices.Equal(g.Blockers, []string{id})
		case uncommitted:
			t.Errorf("snapshot -o json calls the read_uncommitted share group stuck: %+v", g)
		}
	}
	if !found {
		t.Errorf("snapshot -o json: stuck_groups %+v, want %s as a share group blocked by %s", js.StuckGroups, committed, id)
	}
}
