package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/jsonout"
	"github.com/txnscope/txnscope/internal/testutil"
	"github.com/txnscope/txnscope/model"
)

// TestRealKafkaEpochRotation drives one POOLING-named id of a Flink-like job
// past the end of its producer epochs on Kafka 4.4 (transaction version 2:
// every end bumps the epoch): 32,700 empty aborts, then real transactions
// with records across the rotation, as a POOLING slot gets there after days
// of checkpoints. Before it, the job has the epoch_exhaustion problem in
// snapshot -o json; at it, the coordinator gives the id a new producer id,
// which the polls and the coordinators' log both tell as a commit and a
// rotation, never a fence or another producer; after it, a commit of the
// checkpoint's committable of the old producer id is refused, saying why.
//
// Not parallel: 32,700 requests as fast as the broker takes them would slow
// the timing of the tests beside it.
func TestRealKafkaEpochRotation(t *testing.T) {
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin := buildTxnscope(ctx, t)
	adm := newAdmin(t, bootstrap)
	tp := topicOn(ctx, t, adm)
	prefix := name(t, "pool")
	id := prefix + "-0-0" // slot 0: POOLING naming

	start := time.Now()
	pid, epoch := exhaustEpochs(ctx, t, bootstrap, id, 32700)
	t.Logf("32,700 empty aborts on %s in %s (pid %d, epoch %d)", id, time.Since(start).Round(time.Millisecond), pid, epoch)

	cl := producer(t, bootstrap, id, time.Minute)
	commits, spent := 0, time.Duration(0)
	commit := func() {
		began := time.Now()
		openTxn(ctx, t, cl, tp, 1, "v")
		endTxn(ctx, t, cl, true)
		commits++
		spent += time.Since(began)
	}
	// The producer's InitProducerId takes an epoch right after the last
	// abort: a fence as the log and the polls tell it. What is watched
	// begins after it; the epoch then climbs one a commit.
	commit()
	watched := time.Now()
	sc := newScope(t, bootstrap)
	sc.poll(ctx)
	for range 20 {
		commit()
		sc.poll(ctx)
	}
	job, _ := epochJob(ctx, t, bin, bootstrap, prefix)
	if job.Epoch == nil || !job.Epoch.Warning || job.Epoch.Left > 60 || job.Epoch.ProducerID != pid {
		t.Fatalf("near the end of the epochs: epoch outlook %+v", job.Epoch)
	}
	if !hasProblem(job, model.ProblemEpochRotation) {
		t.Fatalf("no epoch_exhaustion problem: %+v", job.Problems)
	}

	// Up to the last transaction of this producer id, then a checkpoint of it.
	for {
		d, err := adm.DescribeTransactions(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if d[id].ProducerEpoch >= model.EpochRotatesAt {
			break
		}
		commit()
		sc.poll(ctx)
	}
	openTxn(ctx, t, cl, tp, 1, "last")
	dir := t.TempDir()
	writeCheckpoint(ctx, t, adm, dir, 7, id)
	sc.poll(ctx)
	endTxn(ctx, t, cl, true)
	commits++
	sc.poll(ctx)
	d, err := adm.DescribeTransactions(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if d[id].ProducerID == pid {
		t.Fatalf("the end at epoch %d did not rotate the producer id: %+v", model.EpochRotatesAt, d[id])
	}
	newPID := d[id].ProducerID
	t.Logf("%d commits of one record each up to the rotation, %s a commit: producer id %d → %d", commits, (spent / time.Duration(commits-1)).Round(time.Microsecond), pid, newPID)
	commit()
	sc.poll(ctx)
	openTxn(ctx, t, cl, tp, 1, "open")
	sc.poll(ctx)

	// The polls saw commits and one rotation, nothing taken over.
	var rotations int
	for _, e := range sc.events {
		if e.ID != id {
			continue
		}
		if model.IsTakeover(e) || e.Kind == model.Fenced || e.Kind.IsAbort() {
			t.Errorf("polls: %s %q (%s) across the rotation", e.Kind, e.Detail, e.At.Format(time.TimeOnly))
		}
		if e.Kind == model.Rotated {
			rotations++
		}
	}
	if rotations != 1 {
		t.Errorf("polls: %d rotations, want 1: %v", rotations, sc.events)
	}

	// The coordinators' log tells it the same way, and the job is healthy again.
	job, snap := epochJob(ctx, t, bin, bootstrap, prefix, "--since", "5m")
	if job.Epoch == nil || job.Epoch.Warning || job.Epoch.ProducerID != newPID || hasProblem(job, model.ProblemEpochRotation) || hasProblem(job, model.ProblemPrefixShared) {
		t.Errorf("after the rotation: epoch %+v, problems %+v", job.Epoch, job.Problems)
	}
	var rotated []string
	if snap.Replay == nil {
		t.Fatalf("snapshot --since 5m has no replay")
	}
	for _, e := range snap.Replay.Events {
		if e.TransactionalID != id || e.At.Before(watched) {
			continue
		}
		switch e.Kind {
		case model.Rotated:
			rotated = append(rotated, e.Detail)
		case model.Fenced, model.ForceTerminated, model.Initialized:
			t.Errorf("log: %s %q", e.Kind, e.Detail)
		}
	}
	if len(rotated) != 1 || !strings.Contains(rotated[0], "→") {
		t.Errorf("log: rotations %q, want one", rotated)
	}

	// The checkpoint's committable names the old producer id: refused.
	cmd := exec.CommandContext(ctx, bin, "commit", "--transactional-id", id, "-b", bootstrap, "--flink-checkpoints", prefix+"="+dir,
		"--yes", "-o", "json", "--audit-log", filepath.Join(t.TempDir(), "audit.log"))
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err == nil || !strings.Contains(stderr.String(), "rotated "+id+" to producer id") {
		t.Fatalf("commit of a committable of the rotated producer id: err %v\nstdout %s\nstderr %s", err, stdout.String(), stderr.String())
	}
	if vals := consume(ctx, t, bootstrap, tp, true, "v-0"); len(vals) == 0 {
		t.Errorf("read_committed sees nothing")
	}
	endTxn(ctx, t, cl, false)
}

// exhaustEpochs brings id's producer epoch to upTo with empty aborts (under
// transaction version 2 an EndTxn with no partitions still bumps it: about a
// millisecond each here, where a commit with records takes a few).
func exhaustEpochs(ctx context.Context, t *testing.T, bootstrap, id string, upTo int16) (int64, int16) {
	t.Helper()
	requireLoopback(t, bootstrap)
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	init := kmsg.NewPtrInitProducerIDRequest()
	init.TransactionalID, init.TransactionTimeoutMillis = &id, 60000
	ir, err := init.RequestWith(ctx, cl)
	if err == nil {
		err = kerr.ErrorForCode(ir.ErrorCode)
	}
	if err != nil {
		t.Fatalf("InitProducerId(%s): %v", id, err)
	}
	pid, epoch := ir.ProducerID, ir.ProducerEpoch
	for epoch < upTo {
		end := kmsg.NewPtrEndTxnRequest()
		end.Version = 5 // transaction version 2
		end.TransactionalID, end.ProducerID, end.ProducerEpoch = id, pid, epoch
		r, err := end.RequestWith(ctx, cl)
		if err == nil {
			err = kerr.ErrorForCode(r.ErrorCode)
		}
		switch {
		case err == kerr.ConcurrentTransactions: // the last abort is still being completed
			time.Sleep(time.Millisecond)
			continue
		case err != nil:
			t.Fatalf("EndTxn(%s, pid %d epoch %d): %v", id, pid, epoch, err)
		case r.ProducerID != pid:
			t.Fatalf("the producer id rotated at epoch %d, before %d", epoch, upTo)
		}
		epoch = r.ProducerEpoch
	}
	return pid, epoch
}

// epochJob is the job named name in a snapshot, its schema checked.
func epochJob(ctx context.Context, t *testing.T, bin, bootstrap, name string, args ...string) (*jsonout.JobJSON, jsonout.SnapshotJSON) {
	t.Helper()
	out := runSnapshot(ctx, t, bin, bootstrap, append([]string{"-o", "json"}, args...)...)
	testutil.CheckSnapshotJSON(t, []byte(out))
	var snap jsonout.SnapshotJSON
	if err := json.Unmarshal([]byte(out), &snap); err != nil {
		t.Fatal(err)
	}
	for i := range snap.Jobs {
		if snap.Jobs[i].Name == name {
			return &snap.Jobs[i], snap
		}
	}
	t.Fatalf("no job %s in the snapshot", name)
	return nil, snap
}
