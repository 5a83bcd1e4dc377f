package jsonout_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/jsonout"
	"github.com/txnscope/txnscope/internal/testutil"
	"github.com/txnscope/txnscope/model"
)

// A document whose jobs carry every field filled in (a lingering
// transaction pinning a partition with a group stuck, commits seen, a
// cadence, a fence, every kind of problem) is valid against the published
// schema, and its problems are objects with a why and a way out.
func TestExportedJobsMatchTheSchema(t *testing.T) {
	now := time.Date(2026, 3, 14, 3, 0, 0, 0, time.UTC)
	tp := model.TopicPartition{Topic: "orders", Partition: 0}
	open := func(id string, pid int64, tps ...model.TopicPartition) model.Txn {
		tx := model.Txn{ID: id, State: model.Ongoing, ProducerID: pid, ProducerEpoch: 1, TimeoutMs: 3_600_000, Described: true, Partitions: tps}
		tx.SetStart(now.Add(-time.Minute))
		return tx
	}
	done := func(id string) model.Txn {
		return model.Txn{ID: id, State: model.CompleteCommit, TimeoutMs: 3_600_000, Described: true}
	}
	// A crashed run's transaction: older than the job's live ones get, its
	// producer silent since.
	left := open("orders-0-7", 11, tp)
	left.SetStart(now.Add(-10 * time.Minute))
	s := &model.Snapshot{TakenAt: now, BrokerMaxTimeoutMs: 900_000, Txns: []model.Txn{
		left, done("orders-0-8"), done("orders-0-9"), open("orders-0-10", 12),
		done("orders-1-5"), open("orders-1-6", 13), open("app-0_1", 14),
	}, Partitions: []model.Partition{{TopicPartition: tp, Leader: 1, HighWatermark: 120, LastStableOffset: 100,
		Producers: []model.Producer{{ProducerID: 11, ProducerEpoch: 1, CurrentTxnStartOffset: 100, LastWriteMs: model.WriteMs(now.Add(-10 * time.Minute))}}}},
		GroupCommits: []model.GroupCommit{{Group: "billing", State: "Stable", TopicPartition: tp, Offset: 100}}}
	s.Sort()
	h := model.NewHistory(100)
	var evs []model.Event
	for i, at := range []time.Duration{-4 * time.Minute, -3 * time.Minute, -2 * time.Minute} {
		evs = append(evs, model.Event{At: now.Add(at), ID: "orders-0-" + string(rune('6'+i)), Kind: model.Committed})
	}
	evs = append(evs, model.Event{At: now.Add(-time.Minute), ID: "orders-0-5", Kind: model.Fenced})
	h.Add(evs)
	doc := jsonout.ExportQuery(s, h, model.Query{CheckpointInterval: 20 * time.Second}, now)
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	testutil.CheckSnapshotJSON(t, b)
	kinds := map[model.ProblemKind]bool{}
	for _, j := range doc.Jobs {
		for _, p := range j.Problems {
			kinds[p.Kind] = p.What != "" && p.Why != "" && p.WayOut != ""
		}
	}
	for _, k := range []model.ProblemKind{model.ProblemLingering, model.ProblemBehind, model.ProblemNotCommitting, model.ProblemTimeoutLong} {
		if !kinds[k] {
			t.Errorf("no %s problem with its what, why and way out in %s", k, b)
		}
	}
	j := doc.Jobs[0]
	if j.Name != "orders" || len(j.Pinned) != 1 || len(j.StuckGroups) != 1 || j.CommitCadenceMs == nil || j.Fences5m != 1 ||
		j.SlowestSubtask == nil || j.LingeringFirstTimeout == nil {
		t.Errorf("the orders job's fields are not all filled in: %s", b)
	}
}

// With --flink, the matched job's Flink state and checkpoints and each
// JobManager's answer are in the document, valid against the schema; the
// interval Flink reports is the one the timeout rule uses.
func TestExportedFlinkMatchesTheSchema(t *testing.T) {
	now := time.Date(2026, 3, 14, 3, 0, 0, 0, time.UTC)
	s := &model.Snapshot{TakenAt: now, Txns: []model.Txn{
		{ID: "orders-0-7", State: model.CompleteCommit, TimeoutMs: 5000, Described: true},
		{ID: "orders-0-8", State: model.Ongoing, TimeoutMs: 5000, Described: true, StartUnixMs: now.Add(-time.Second).UnixMilli()},
		{ID: "payments-0-3", State: model.CompleteCommit, TimeoutMs: 60000, Described: true},
	}}
	s.Sort()
	ms := now.Add(-time.Minute).UnixMilli()
	flink := &model.FlinkView{At: now, Sources: []string{"http://jm-a:8081", "http://jm-b:8081"}, Errs: []string{"", "http://jm-b:8081: GET /jobs/overview: connection refused"},
		Jobs: []model.FlinkJob{{Source: "http://jm-a:8081", ID: "0123456789abcdef0123456789abcdef", Name: "enrich orders", State: "RUNNING", StartMs: ms,
			Vertices: []model.FlinkVertex{{Name: "Source: x -> sink: Writer", Parallelism: 3}}, IntervalMs: 3000, CheckpointTimeoutMs: 600000, Completed: 7,
			Latest:   &model.FlinkCheckpoint{ID: 7, Status: "COMPLETED", TriggerMs: ms, AckMs: ms + 20, Path: "file:/chk/chk-7"},
			Restored: &model.FlinkCheckpoint{ID: 4, RestoreMs: ms - 1000, Path: "file:/chk/chk-4"}}}}
	doc := jsonout.ExportQuery(s, nil, model.Query{Flink: flink}, now)
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	testutil.CheckSnapshotJSON(t, b)
	if doc.Flink == nil || len(doc.Flink.JobManagers) != 2 || doc.Flink.JobManagers[0].Jobs != 1 || doc.Flink.JobManagers[1].Error == nil {
		t.Errorf("flink: %+v", doc.Flink)
	}
	for _, j := range doc.Jobs {
		switch j.Name {
		case "orders":
			f := j.Flink
			if f == nil || f.State != "RUNNING" || f.MatchedBy != "name" || f.LatestCompleted == nil || f.LatestCompleted.ID != 7 ||
				f.Restored == nil || f.Restored.ID != 4 || *f.SinkParallelism != 3 || *f.CheckpointIntervalMs != 3000 {
				t.Errorf("orders' flink: %+v", f)
			}
			var short string
			for _, p := range j.Problems {
				if p.Kind == model.ProblemTimeoutShort {
					short = p.What
				}
			}
			if short != "timeout 5s below 2× the checkpoint interval 3s (Flink's)" {
				t.Errorf("timeout_below_interval %q, want Flink's interval", short)
			}
			// jm-b did not answer: another job of the prefix may be there.
			if len(j.Verdicts) != 1 || j.Verdicts[0].TransactionalID != "orders-0-8" || j.Verdicts[0].Verdict != model.VerdictUnknown ||
				!strings.Contains(j.Verdicts[0].Evidence, "the JobManager at http://jm-b:8081 did not answer") ||
				j.Verdicts[0].Checkpoint == nil || *j.Verdicts[0].Checkpoint != 8 {
				t.Errorf("orders' verdicts %+v", j.Verdicts)
			}
		case "payments":
			if j.Flink != nil {
				t.Errorf("payments matched %+v", j.Flink)
			}
		}
	}
}
