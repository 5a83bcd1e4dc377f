package jsonout

import (
	"github.com/txnscope/txnscope/model"

	"encoding/json"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

func keys(m map[string]any) string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func TestExportJSONSchema(t *testing.T) {
	now := t0
	tp := model.TopicPartition{Topic: "orders", Partition: 3}
	s := snap(now.Add(-time.Second),
		model.Txn{ID: "open", State: model.Ongoing, ProducerID: 11, ProducerEpoch: 2, Coordinator: 1, TimeoutMs: 60000,
			StartUnixMs: now.Add(-15 * time.Second).UnixMilli(), Partitions: []model.TopicPartition{tp}},
		model.Txn{ID: "idle", State: model.CompleteCommit, ProducerID: 12, Coordinator: 2, TimeoutMs: 60000},
		model.Txn{ID: "undescribed", State: model.Ongoing, ProducerID: 13},
	)
	s.Bootstrap = "127.0.0.1:9092,127.0.0.1:9093"
	s.BrokerMaxTimeoutMs = 900000
	s.Partitions = []model.Partition{{TopicPartition: tp, Leader: 2, HighWatermark: 50, LastStableOffset: 40, Producers: []model.Producer{
		{ProducerID: 11, ProducerEpoch: 2, LastSequence: 9, LastWriteMs: model.WriteMs(time.UnixMilli(1700000000123)), CoordinatorEpoch: 0, CurrentTxnStartOffset: 40},
		{ProducerID: 99, ProducerEpoch: 0, LastSequence: -1, CurrentTxnStartOffset: -1},
	}}}
	h := model.NewHistory(10)
	h.Add([]model.Event{{ID: "idle", Kind: model.Committed}, {ID: "idle", Kind: model.Committed}, {ID: "idle", Kind: model.Fenced}})

	b, err := json.Marshal(Export(s, h, now))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if got := keys(doc); got != "bootstrap,broker_max_timeout_ms,hanging,history,jobs,partitions,pinned_partitions,schema,stuck_groups,taken_at,transactions" {
		t.Errorf("top-level keys = %s", got)
	}
	if doc["taken_at"] != "2026-03-01T11:59:59Z" || doc["bootstrap"] != s.Bootstrap || doc["broker_max_timeout_ms"] != 900000.0 {
		t.Errorf("top level = %v %v %v", doc["taken_at"], doc["bootstrap"], doc["broker_max_timeout_ms"])
	}
	txns := doc["transactions"].([]any)
	if len(txns) != 3 {
		t.Fatalf("transactions = %d", len(txns))
	}
	const txnKeys = "aborts_5m,aborts_60m,aborts_seen,age_ms,commits_5m,commits_60m,commits_seen,coordinator,partitions,problems," +
		"producer_epoch,producer_id,recent_transactions,start_time,state,timeout_ms,timeout_ratio,transactional_id"
	byID := map[string]map[string]any{}
	for _, x := range txns {
		m := x.(map[string]any)
		if got := keys(m); got != txnKeys {
			t.Errorf("transaction keys = %s", got)
		}
		byID[m["transactional_id"].(string)] = m
	}
	open := byID["open"]
	if open["state"] != "Ongoing" || open["producer_id"] != 11.0 || open["producer_epoch"] != 2.0 || open["coordinator"] != 1.0 ||
		open["timeout_ms"] != 60000.0 || open["start_time"] != "2026-03-01T11:59:45Z" || open["age_ms"] != 15000.0 || open["timeout_ratio"] != 0.25 {
		t.Errorf("open = %v", open)
	}
	if ps := open["partitions"].([]any); len(ps) != 1 || keys(ps[0].(map[string]any)) != "partition,topic" ||
		ps[0].(map[string]any)["topic"] != "orders" || ps[0].(map[string]any)["partition"] != 3.0 {
		t.Errorf("open partitions = %v", open["partitions"])
	}
	idle := byID["idle"]
	if idle["start_time"] != nil || idle["age_ms"] != nil || idle["timeout_ratio"] != nil {
		t.Errorf("idle must have null start/age/ratio: %v", idle)
	}
	if idle["commits_seen"] != 2.0 || idle["aborts_seen"] != 1.0 {
		t.Errorf("idle seen = %v/%v", idle["commits_seen"], idle["aborts_seen"])
	}
	if ps, ok := idle["partitions"].([]any); !ok || len(ps) != 0 {
		t.Errorf("idle partitions must be [], got %v", idle["partitions"])
	}
	if u := byID["undescribed"]; u["timeout_ratio"] != nil || u["start_time"] != nil {
		t.Errorf("undescribed = %v", u)
	}
	// problems: always an array; the idle id's last outcome was a fence.
	if ps, ok := open["problems"].([]any); !ok || len(ps) != 0 {
		t.Errorf("open problems must be [], got %v", open["problems"])
	}
	if ps, ok := idle["problems"].([]any); !ok || len(ps) != 1 || ps[0] != "last transaction fenced" {
		t.Errorf("idle problems = %v", idle["problems"])
	}

	parts := doc["partitions"].([]any)
	if len(parts) != 1 {
		t.Fatalf("partitions = %v", parts)
	}
	p := parts[0].(map[string]any)
	if got := keys(p); got != "high_watermark,last_stable_offset,leader,partition,producers,topic" {
		t.Errorf("partition keys = %s", got)
	}
	if p["topic"] != "orders" || p["partition"] != 3.0 || p["leader"] != 2.0 || p["high_watermark"] != 50.0 || p["last_stable_offset"] != 40.0 {
		t.Errorf("partition = %v", p)
	}
	prs := p["producers"].([]any)
	const prKeys = "coordinator_epoch,current_txn_start_offset,last_sequence,last_timestamp,producer_epoch,producer_id"
	for _, x := range prs {
		if got := keys(x.(map[string]any)); got != prKeys {
			t.Errorf("producer keys = %s", got)
		}
	}
	p0, p1 := prs[0].(map[string]any), prs[1].(map[string]any)
	if p0["producer_id"] != 11.0 || p0["last_sequence"] != 9.0 || p0["last_timestamp"] != 1700000000123.0 || p0["current_txn_start_offset"] != 40.0 {
		t.Errorf("producer 11 = %v", p0)
	}
	if p1["current_txn_start_offset"] != nil || p1["last_timestamp"] != -1.0 {
		t.Errorf("idempotent producer = %v", p1)
	}
}

// TestExportQueryProblems: the checkpoint interval given to the snapshot judges timeouts; without
// it the same transaction has no problem.
func TestExportQueryProblems(t *testing.T) {
	s := snap(t0, model.Txn{ID: "orders-enricher-v1-0-3", State: model.Ongoing, TimeoutMs: 15000, StartUnixMs: t0.Add(-time.Second).UnixMilli()})
	tests := []struct {
		name string
		q    model.Query
		want []string
	}{
		{"no interval", model.Query{}, []string{}},
		{"10 s interval: 15 s is below 20 s", model.Query{CheckpointInterval: 10 * time.Second}, []string{"timeout below 2× the checkpoint interval"}},
		{"5 s interval: 15 s is enough", model.Query{CheckpointInterval: 5 * time.Second}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ExportQuery(s, nil, tt.q, t0).Transactions[0].Problems
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || got == nil {
				t.Errorf("problems %q, want %q", got, tt.want)
			}
		})
	}
	if got := Export(s, nil, t0).Transactions[0].Problems; got == nil || len(got) != 0 {
		t.Errorf("Export problems %q, want []", got)
	}
}

func TestExportEmpty(t *testing.T) {
	b, err := json.Marshal(Export(&model.Snapshot{TakenAt: t0, Bootstrap: "x:1"}, nil, t0))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"schema":2,"taken_at":"2026-03-01T12:00:00Z","bootstrap":"x:1","broker_max_timeout_ms":null,` +
		`"history":{"source":"polls","why":"","log_since":null,"window_since":null},"jobs":[],"pinned_partitions":[],"stuck_groups":[],"hanging":[],` +
		`"transactions":[],"partitions":[]}`
	if string(b) != want {
		t.Errorf("empty export =\n%s\nwant\n%s", b, want)
	}
}

// TestExportLogHistory: with the log as the source, the document says so and
// each id carries its finished transactions as the log told them, and its
// recent counts.
func TestExportLogHistory(t *testing.T) {
	now := t0
	s := snap(now, model.Txn{ID: "busy", State: model.CompleteCommit, ProducerID: 7, ProducerEpoch: 3},
		model.Txn{ID: "polled", State: model.CompleteAbort, ProducerID: 8})
	s.Source = model.Source{Log: true, Since: now.Add(-2 * time.Hour)}
	h := model.NewHistory(64)
	h.Add([]model.Event{
		logged(now.Add(-10*time.Minute), "busy", model.TimedOut, now.Add(-11*time.Minute), 2),
		logged(now.Add(-time.Second), "busy", model.Committed, now.Add(-1250*time.Millisecond), 3),
		{At: now.Add(-time.Minute), ID: "polled", Kind: model.Aborted, ProducerID: 8},
	})
	b, err := json.Marshal(Export(s, h, now))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		History      map[string]any   `json:"history"`
		Transactions []map[string]any `json:"transactions"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.History["source"] != "coordinator log" || doc.History["why"] != "" || doc.History["log_since"] != "2026-03-01T10:00:00Z" {
		t.Errorf("history = %v", doc.History)
	}
	busy, polled := doc.Transactions[0], doc.Transactions[1]
	if busy["commits_5m"] != 1.0 || busy["aborts_5m"] != 0.0 || busy["commits_60m"] != 1.0 || busy["aborts_60m"] != 1.0 ||
		busy["commits_seen"] != 1.0 || busy["aborts_seen"] != 1.0 {
		t.Errorf("busy counts = %v", busy)
	}
	rs := busy["recent_transactions"].([]any)
	if len(rs) != 2 {
		t.Fatalf("busy recent = %v", rs)
	}
	last := rs[1].(map[string]any)
	if keys(last) != "begin,duration_ms,end,outcome,partitions,producer_epoch,producer_id" ||
		last["begin"] != "2026-03-01T11:59:58.75Z" || last["end"] != "2026-03-01T11:59:59Z" || last["duration_ms"] != 250.0 ||
		last["outcome"] != "committed" || last["partitions"] != 3.0 || last["producer_id"] != 7.0 || last["producer_epoch"] != 3.0 {
		t.Errorf("busy's last transaction = %v", last)
	}
	if first := rs[0].(map[string]any); first["outcome"] != "aborted at timeout" || first["duration_ms"] != 60000.0 {
		t.Errorf("busy's first transaction = %v", first)
	}
	// From polls: the begin and the partitions were never told.
	p := polled["recent_transactions"].([]any)[0].(map[string]any)
	if p["begin"] != nil || p["duration_ms"] != nil || p["partitions"] != nil || p["outcome"] != "aborted" {
		t.Errorf("polled transaction = %v", p)
	}

	s.Source = model.Source{Why: "no READ on __transaction_state"}
	if got := Export(s, h, now).History; got.Source != "polls" || got.Why != "no READ on __transaction_state" || got.LogSince != nil {
		t.Errorf("polls history = %+v", got)
	}
}

// The jobs in the JSON: the Flink job with its subtasks, lingering id and
// problem; nulls where nothing is known; the most urgent first.
func TestExportJobs(t *testing.T) {
	now := time.Unix(10000, 0)
	open := model.Txn{ID: "orders-0-11", State: model.Ongoing, TimeoutMs: 60000, Described: true}
	open.SetStart(now.Add(-30 * time.Second))
	s := &model.Snapshot{TakenAt: now, Txns: []model.Txn{
		open, {ID: "orders-0-12", State: model.CompleteCommit, Described: true, TimeoutMs: 60000},
		{ID: "solo", State: model.Empty},
	}}
	s.Sort()
	b, err := json.Marshal(ExportJobs(s, nil, model.Query{}, now))
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"family":"flink","name":"orders","ids":2,"tasks":1,"naming":"incrementing","newest_checkpoint":12,"newest_committed":12,` +
		`"open":["orders-0-11"],"lingering":["orders-0-11"],"orphaned":[],"lingering_first_timeout":"1970-01-01T02:47:10Z","lingering_last_timeout":"1970-01-01T02:47:10Z",` +
		`"oldest_open":"orders-0-11","oldest_age_ms":30000,"oldest_timeout_ratio":0.5,` +
		`"last_commit":null,"slowest_subtask":null,"slowest_last_commit":null,"commit_cadence_ms":null,"commits_5m":0,"aborts_5m":0,"fences_5m":0,"timeouts_5m":0,` +
		`"prefix_shared":false,"pinned":[],"stuck_groups":[],` +
		`"subtasks":[{"name":"0","subtask":0,"ids":2,"newest_checkpoint":12,"newest_committed":12,"last_commit":null,"behind":false,"probe":false,"retired":false,` +
		`"open":["orders-0-11"],"lingering":["orders-0-11"]}],` +
		`"problems":[{"kind":"lingering","what":"1 lingering after a restart","why":"open for over 30s, longer than the job's live transactions last, and begun before one of their subtask that ` +
		`committed since: no run drives them (a restored Flink job ends its predecessor's within a second)",` +
		`"way_out":"wait until 02:47:10 UTC (in 30s), when transaction.timeout.ms aborts them, or force-terminate them all (a on the job)"}],` +
		`"epoch":{"transactional_id":"orders-0-11","producer_id":0,"producer_epoch":0,"transactions_left":32767,"epochs_per_hour":null,"rotates_at":null,"warning":false},"flink":null},` +
		`{"family":"other","name":"","ids":1,"tasks":0,"naming":null,"newest_checkpoint":null,"newest_committed":null,"open":[],"lingering":[],"orphaned":[],` +
		`"lingering_first_timeout":null,"lingering_last_timeout":null,` +
		`"oldest_open":null,"oldest_age_ms":null,"oldest_timeout_ratio":null,"last_commit":null,"slowest_subtask":null,"slowest_last_commit":null,` +
		`"commit_cadence_ms":null,"commits_5m":0,"aborts_5m":0,"fences_5m":0,"timeouts_5m":0,` +
		`"prefix_shared":false,"pinned":[],"stuck_groups":[],"subtasks":[],"problems":[],"epoch":null,"flink":null}]`
	if string(b) != want {
		t.Errorf("jobs =\n%s\nwant\n%s", b, want)
	}
}

// The partitions and groups views in the JSON: a partition pinned by an
// open transaction with a group stuck behind it, and a hanging one held by
// a producer no transactional id owns, idle past the brokers' maximum.
func TestExportPins(t *testing.T) {
	now := time.Unix(100000, 0)
	open := model.Txn{ID: "orders-0-7", State: model.Ongoing, ProducerID: 11, ProducerEpoch: 2, TimeoutMs: 60000, Described: true,
		Partitions: []model.TopicPartition{{Topic: "orders", Partition: 0}}}
	open.SetStart(now.Add(-10 * time.Second))
	s := &model.Snapshot{TakenAt: now, BrokerMaxTimeoutMs: 900000, Txns: []model.Txn{open},
		Partitions: []model.Partition{
			{TopicPartition: model.TopicPartition{Topic: "orders", Partition: 0}, Leader: 1, HighWatermark: 40, LastStableOffset: 30,
				Producers: []model.Producer{{ProducerID: 11, ProducerEpoch: 2, CurrentTxnStartOffset: 30, LastWriteMs: model.WriteMs(now.Add(-time.Second))}}},
			{TopicPartition: model.TopicPartition{Topic: "orders", Partition: 1}, Leader: 2, HighWatermark: 9, LastStableOffset: 3,
				Producers: []model.Producer{{ProducerID: 99, ProducerEpoch: 0, CurrentTxnStartOffset: 3, LastWriteMs: model.WriteMs(now.Add(-time.Hour))}}},
		},
		GroupCommits: []model.GroupCommit{{Group: "billing", State: "Stable", TopicPartition: model.TopicPartition{Topic: "orders", Partition: 0}, Offset: 30}},
	}
	s.Sort()
	pinned, stuck, hanging := ExportPins(s, now)
	if len(pinned) != 2 || len(stuck) != 1 || len(hanging) != 1 {
		t.Fatalf("%d pinned, %d stuck, %d hanging: %+v %+v %+v", len(pinned), len(stuck), len(hanging), pinned, stuck, hanging)
	}
	var p0 PinnedPartitionJSON
	for _, p := range pinned {
		if p.Partition == 0 {
			p0 = p
		}
	}
	if p0.HeldBack != 10 || p0.TransactionalID == nil || *p0.TransactionalID != "orders-0-7" || !p0.Blocking || p0.Hanging ||
		*p0.ProducerID != 11 || !slices.Equal(p0.StuckGroups, []string{"billing"}) || p0.PinnedSince == nil || !p0.PinnedSinceAtLeast {
		t.Errorf("the pinned partition: %+v", p0)
	}
	if g := stuck[0]; g.Group != "billing" || g.LagHWM != 10 || !slices.Equal(g.Blockers, []string{"orders-0-7"}) {
		t.Errorf("the stuck group: %+v", g)
	}
	if h := hanging[0]; h.Partition != 1 || !slices.Equal(h.ProducerIDs, []int64{99}) || len(h.Why) == 0 {
		t.Errorf("the hanging partition: %+v", h)
	}
}

// A partition whose producers we may not read exports them as null
// (unknown), never as [] (none), with the reason.
func TestExportDenied(t *testing.T) {
	s := &model.Snapshot{TakenAt: time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC), Hidden: model.HiddenIDs + ": you may DESCRIBE only some", Partitions: []model.Partition{
		{TopicPartition: model.TopicPartition{Topic: "orders", Partition: 0}, Leader: 1, HighWatermark: 10, LastStableOffset: 10, Producers: []model.Producer{}},
		{TopicPartition: model.TopicPartition{Topic: "secret", Partition: 0}, Leader: 1, HighWatermark: 10, LastStableOffset: 5, ProducersDenied: true,
			Err: "no permission to read the producer state: TOPIC_AUTHORIZATION_FAILED: x"},
	}}
	b, err := json.Marshal(Export(s, nil, time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)))
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for _, want := range []string{
		`"hidden":"some transactional ids are hidden by ACLs: you may DESCRIBE only some"`,
		`"topic":"orders","partition":0,"leader":1,"high_watermark":10,"last_stable_offset":10,"producers":[]}`,
		`"producers":null,"error":"no permission to read the producer state: TOPIC_AUTHORIZATION_FAILED: x"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("JSON lacks %s:\n%s", want, got)
		}
	}
}

// The model's test helpers, for the export tests that moved here with the
// schema.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// snap builds a sorted snapshot taken at at.
func snap(at time.Time, txns ...model.Txn) *model.Snapshot {
	s := &model.Snapshot{TakenAt: at, Txns: txns}
	s.Sort()
	return s
}

// logged is an event read from the coordinator's log.
func logged(at time.Time, id string, k model.EventKind, begun time.Time, parts int32) model.Event {
	return model.Event{At: at, ID: id, Kind: k, ProducerID: 7, ProducerEpoch: 3, Logged: true, Begun: begun, Parts: parts}
}
