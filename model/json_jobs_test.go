package model_test

import (
	"encoding/json"
	"testing"
	"time"

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
	doc := model.ExportQuery(s, h, model.Query{CheckpointInterval: 20 * time.Second}, now)
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
