package model

import (
	"errors"
	"strings"
	"testing"
	"time"
)

var ftStart = time.Date(2026, 11, 30, 3, 11, 58, 120e6, time.UTC)

func ftAction() Action {
	return Action{Kind: ForceTerminate, TransactionalID: "orders-enricher-v1-2-17", Coordinator: 3, State: Ongoing,
		ProducerID: 4001, ProducerEpoch: 7, Start: ftStart, TimeoutMs: 60000,
		Partitions: []TopicPartition{{"orders", 0}, {"orders", 3}}}
}

func apAction() Action {
	return Action{Kind: AbortPartition, TopicPartition: TopicPartition{"orders", 5}, Leader: 2, CoordinatorEpoch: 4,
		StartOffset: 1200, ProducerID: 4002, ProducerEpoch: 1, MinIdle: 15 * time.Minute}
}

func TestActionWireAndConsequences(t *testing.T) {
	ft := ftAction()
	if got := ft.Target(); got != "orders-enricher-v1-2-17" {
		t.Errorf("Target = %q", got)
	}
	w := ft.Wire()
	for _, s := range []string{"InitProducerId", `transactional.id "orders-enricher-v1-2-17"`, "coordinator broker 3", "producer id -1, epoch -1"} {
		if !strings.Contains(w, s) {
			t.Errorf("force-terminate wire %q lacks %q", w, s)
		}
	}
	c := strings.Join(ft.Consequences(), "\n")
	for _, s := range []string{"orders-enricher-v1-2-17", "past 7", "fenced", "Flink", "lost"} {
		if !strings.Contains(c, s) {
			t.Errorf("force-terminate consequences lack %q:\n%s", s, c)
		}
	}

	ap := apAction()
	if got := ap.Target(); got != "orders-5" {
		t.Errorf("Target = %q", got)
	}
	w = ap.Wire()
	for _, s := range []string{"WriteTxnMarkers(ABORT", "producer id 4002", "epoch 1", "coordinator epoch 4", "orders-5", "leader broker 2"} {
		if !strings.Contains(w, s) {
			t.Errorf("abort-partition wire %q lacks %q", w, s)
		}
	}
	ap.CoordinatorEpoch = -1
	if w := ap.Wire(); !strings.Contains(w, "coordinator epoch 0") {
		t.Errorf("a negative coordinator epoch must be sent as 0: %q", w)
	}
	c = strings.Join(ap.Consequences(), "\n")
	for _, s := range []string{"producer 4002", "orders-5", "offset 1200", "coordinator is not told", "lost"} {
		if !strings.Contains(c, s) {
			t.Errorf("abort-partition consequences lack %q:\n%s", s, c)
		}
	}
}

func TestSameTransactionForceTerminate(t *testing.T) {
	// A refresh reads both starts from the coordinator's milliseconds, in the
	// local zone, and the refusal prints them as they are.
	a := ftAction()
	a.Start = time.Date(2026, 11, 30, 3, 11, 58, 120e6, time.Local)
	start := a.Start
	fresh := Txn{ID: a.TransactionalID, State: Ongoing, ProducerID: 4001, ProducerEpoch: 7, StartUnixMs: start.UnixMilli(),
		Partitions: []TopicPartition{{"orders", 0}, {"orders", 3}}}
	tests := []struct {
		name   string
		a      Action
		fresh  func(Txn) Txn
		found  bool
		refuse string // "" means allowed
	}{
		{"unchanged", a, func(t Txn) Txn { return t }, true, ""},
		{"coordinator moved", a, func(t Txn) Txn { t.Coordinator = 1; return t }, true, ""},
		{"gone", a, func(t Txn) Txn { return t }, false, "no longer known"},
		{"new producer id", a, func(t Txn) Txn { t.ProducerID = 5000; return t }, true, "producer id changed 4001→5000"},
		{"epoch bumped", a, func(t Txn) Txn { t.ProducerEpoch = 8; return t }, true, "producer epoch changed 7→8"},
		{"committing", a, func(t Txn) Txn { t.State = PrepareCommit; return t }, true, "state changed Ongoing→PrepareCommit since it was shown: it is committing"},
		{"committed, nothing new yet (v1)", a, func(t Txn) Txn { t.State = CompleteCommit; return t }, true, "Ongoing→CompleteCommit since it was shown: it committed"},
		{"fenced meanwhile", a, func(t Txn) Txn { t.State = PrepareEpochFence; return t }, true, "state changed"},
		// Transaction version 1: the producer committed and began the next
		// one; id, producer id, epoch and state are all as they were.
		{"turned over (v1)", a, func(t Txn) Txn { t.SetStart(start.Add(2 * time.Second)); return t }, true,
			"this is a newer transaction of orders-enricher-v1-2-17: it started at 03:12:00.120, the one shown started at 03:11:58.120"},
		// A newer transaction of the same producer, already ending: it is
		// not "it" that changed state (the commit's check said so; the
		// force-terminate's said "state changed" before issue 32 merged them).
		{"turned over, the next committing (v1)", a, func(t Txn) Txn { t.SetStart(start.Add(2 * time.Second)); t.State = PrepareCommit; return t }, true,
			"this is a newer transaction of orders-enricher-v1-2-17"},
		{"turned over within the second", a, func(t Txn) Txn { t.SetStart(start.Add(3 * time.Millisecond)); return t }, true, "newer transaction"},
		{"partition added", a, func(t Txn) Txn {
			t.Partitions = []TopicPartition{{"orders", 0}, {"orders", 3}, {"payments", 1}}
			return t
		}, true, "its partitions changed since they were shown (now also payments-1)"},
		{"partition gone", a, func(t Txn) Txn { t.Partitions = []TopicPartition{{"orders", 3}}; return t }, true, "no longer orders-0"},
		{"nothing open", func() Action { x := a; x.State = CompleteCommit; return x }(),
			func(t Txn) Txn { t.State = CompleteCommit; return t }, true, "is CompleteCommit, nothing to abort"},
		{"PrepareEpochFence is abortable", func() Action { x := a; x.State = PrepareEpochFence; return x }(),
			func(t Txn) Txn { t.State = PrepareEpochFence; return t }, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := SameTransaction(tt.a, tt.fresh(fresh), tt.found)
			checkRefusal(t, err, tt.refuse)
		})
	}
}

func TestAborting(t *testing.T) {
	a := ftAction()
	base := Txn{ID: a.TransactionalID, ProducerID: 4001, ProducerEpoch: 8, StartUnixMs: ftStart.UnixMilli()}
	for _, tc := range []struct {
		name string
		f    func(Txn) Txn
		want bool
	}{
		{"fenced, aborting", func(t Txn) Txn { t.State = PrepareAbort; return t }, true},
		{"fence under way", func(t Txn) Txn { t.State = PrepareEpochFence; return t }, true},
		{"aborted", func(t Txn) Txn { t.State = CompleteAbort; return t }, true},
		{"committed instead", func(t Txn) Txn { t.State = CompleteCommit; return t }, false},
		{"same epoch (v1 abort by the producer itself)", func(t Txn) Txn { t.State = CompleteAbort; t.ProducerEpoch = 7; return t }, false},
		{"another transaction aborting", func(t Txn) Txn { t.State = PrepareAbort; t.SetStart(ftStart.Add(time.Second)); return t }, false},
		{"another producer", func(t Txn) Txn { t.State = PrepareAbort; t.ProducerID = 9; return t }, false},
		{"still open", func(t Txn) Txn { t.State = Ongoing; return t }, false},
	} {
		if got := Aborting(a, tc.f(base)); got != tc.want {
			t.Errorf("%s: Aborting = %v", tc.name, got)
		}
	}
}

func TestPlanForceTerminate(t *testing.T) {
	ok := Txn{ID: "orders-0-1", State: Ongoing, ProducerID: 1, ProducerEpoch: 2, Coordinator: 3, TimeoutMs: 60000, StartUnixMs: ftStart.UnixMilli(),
		Partitions: []TopicPartition{{"orders", 0}}, Described: true}
	a, err := PlanForceTerminate(ok)
	if err != nil {
		t.Fatal(err)
	}
	if a.Kind != ForceTerminate || a.TransactionalID != ok.ID || !a.Start.Equal(ftStart) || a.ProducerEpoch != 2 || a.Coordinator != 3 ||
		a.TimeoutMs != 60000 || len(a.Partitions) != 1 || SameTransaction(a, ok, true) != nil {
		t.Errorf("plan = %+v", a)
	}
	ok.Partitions[0].Partition = 9
	if a.Partitions[0].Partition != 0 {
		t.Error("the plan shares its partitions with the snapshot")
	}
	for _, tc := range []struct {
		name string
		f    func(Txn) Txn
		want string
	}{
		{"not described", func(t Txn) Txn { t.Described = false; return t }, "not been described"},
		{"committed", func(t Txn) Txn { t.State = CompleteCommit; return t }, "is CompleteCommit"},
		{"committing", func(t Txn) Txn { t.State = PrepareCommit; return t }, "only fence its producer"},
		{"no start time", func(t Txn) Txn { t.StartUnixMs = 0; return t }, "could not be told from the next one"},
	} {
		if _, err := PlanForceTerminate(tc.f(ok)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestPlanAbortPartition(t *testing.T) {
	now := ftStart
	p := Partition{TopicPartition: TopicPartition{"orders", 5}, Leader: 2}
	idle := Producer{ProducerID: 4002, ProducerEpoch: 1, CoordinatorEpoch: 4, CurrentTxnStartOffset: 1200, LastWriteMs: WriteMs(now.Add(-20 * time.Minute))}
	a, err := PlanAbortPartition(p, idle, 15*time.Minute, now)
	if err != nil || a.IdleWaived || a.MinIdle != 15*time.Minute || a.StartOffset != 1200 || a.CoordinatorEpoch != 4 || a.ConfirmWord() != "abort" {
		t.Fatalf("idle producer: %+v, %v", a, err)
	}
	recent := idle
	recent.LastWriteMs = WriteMs(now.Add(-12 * time.Second))
	a, err = PlanAbortPartition(p, recent, 15*time.Minute, now)
	if !errors.Is(err, ErrNotIdle) || !strings.Contains(err.Error(), "producer 4002 last wrote to orders-5 12s ago, not over 15m00s") {
		t.Fatalf("recent producer: %v", err)
	}
	if a.Kind != AbortPartition || a.IdleWaived {
		t.Fatalf("the plan returned with ErrNotIdle must still hold the rule: %+v", a)
	}
	a, err = PlanAbortPartition(p, recent, 0, now)
	if err != nil || !a.IdleWaived || a.ConfirmWord() != "abort anyway" {
		t.Fatalf("rule set aside: %+v, %v", a, err)
	}
	if _, err := PlanAbortPartition(p, Producer{ProducerID: 1, CurrentTxnStartOffset: -1}, 0, now); err == nil {
		t.Error("a producer with nothing open was planned")
	}
	noLeader := p
	noLeader.Leader = -1
	if _, err := PlanAbortPartition(noLeader, idle, 0, now); err == nil || !strings.Contains(err.Error(), "no known leader") {
		t.Errorf("no leader: %v", err)
	}
}

func TestAbortTarget(t *testing.T) {
	o := []Producer{{ProducerID: 1}, {ProducerID: 2}, {ProducerID: 3}}
	pin := Producer{ProducerID: 3}
	for _, tc := range []struct {
		pid    int64
		pinner *Producer
		want   int64
	}{{2, &pin, 2}, {9, &pin, 3}, {9, nil, 1}} {
		if got, ok := AbortTarget(o, tc.pid, tc.pinner); !ok || got.ProducerID != tc.want {
			t.Errorf("AbortTarget(pid %d) = %d, want %d", tc.pid, got.ProducerID, tc.want)
		}
	}
	if _, ok := AbortTarget(nil, 1, nil); ok {
		t.Error("a target among no orphans")
	}
}

func TestFacts(t *testing.T) {
	now := ftStart.Add(4*time.Minute + 12*time.Second)
	got := strings.Join(ftAction().Facts(now, time.UTC), "\n")
	for _, want := range []string{"Ongoing since 03:11:58.120 UTC (4m12s ago), timeout 1m00s",
		"id 4001, epoch 7, coordinator broker 3", "partitions   orders-0, orders-3"} {
		if !strings.Contains(got, want) {
			t.Errorf("force-terminate facts lack %q:\n%s", want, got)
		}
	}
	ap := apAction()
	ap.LastWrite = ftStart
	got = strings.Join(ap.Facts(now, time.UTC), "\n")
	for _, want := range []string{"orders-5, leader broker 2", "coordinator epoch 4", "open from offset 1200; last write 03:11:58.120 UTC (4m12s ago)",
		"must stay idle over 15m00s"} {
		if !strings.Contains(got, want) {
			t.Errorf("abort facts lack %q:\n%s", want, got)
		}
	}
	// Not today: the date too.
	if got := strings.Join(ap.Facts(now.Add(24*time.Hour), time.UTC), "\n"); !strings.Contains(got, "last write 2026-11-30 03:11:58.120 UTC (24h04m ago)") {
		t.Errorf("a write of yesterday without its date: %s", got)
	}
	ap.IdleWaived = true
	if got := strings.Join(ap.Facts(now, time.UTC), "\n"); !strings.Contains(got, "set aside") {
		t.Errorf("a waived rule is not shown: %s", got)
	}
}

func checkRefusal(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Errorf("refused: %v", err)
	case want != "" && err == nil:
		t.Errorf("allowed, want refusal %q", want)
	case want != "" && (!strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "refused: ")):
		t.Errorf("refusal %q, want it to say %q", err, want)
	}
}

func TestCheckAbortPartition(t *testing.T) {
	a := apAction()
	part := func(prs ...Producer) Partition {
		return Partition{TopicPartition: a.TopicPartition, Leader: 2, HighWatermark: 2000, LastStableOffset: 1200, Producers: prs}
	}
	now := ftStart
	long := now.Add(-time.Hour)
	same := Producer{ProducerID: 4002, ProducerEpoch: 1, CoordinatorEpoch: 4, CurrentTxnStartOffset: 1200, LastWriteMs: WriteMs(long)}
	other := Producer{ProducerID: 9, ProducerEpoch: 0, CurrentTxnStartOffset: 1300}
	with := func(f func(*Producer)) Producer { p := same; f(&p); return p }
	tests := []struct {
		name   string
		p      Partition
		found  bool
		owner  *Txn
		refuse string
	}{
		{"unchanged, coordinator knows nothing", part(other, same), true, nil, ""},
		{"unchanged, owner idle", part(same), true, &Txn{ID: "x", State: CompleteCommit, ProducerEpoch: 1, Partitions: []TopicPartition{a.TopicPartition}}, ""},
		{"owner open on other partitions", part(same), true, &Txn{ID: "x", State: Ongoing, ProducerEpoch: 1, Partitions: []TopicPartition{{"orders", 6}}}, ""},
		{"owner open with another epoch", part(same), true, &Txn{ID: "x", State: Ongoing, ProducerEpoch: 2, Partitions: []TopicPartition{a.TopicPartition}},
			"lists this partition in x (Ongoing, epoch 2)"},
		// Transaction version 2: the commit is prepared one epoch up while the
		// partition still shows the transaction at its own.
		{"owner committing one epoch up (v2)", part(same), true, &Txn{ID: "x", State: PrepareCommit, ProducerEpoch: 2, Partitions: []TopicPartition{a.TopicPartition}},
			"lists this partition in x (PrepareCommit, epoch 2)"},
		{"partition not re-read", Partition{}, false, nil, "orders-5 could not be re-read"},
		{"producer gone", part(other), true, nil, "producer 4002 no longer has an open transaction on orders-5"},
		{"producer finished", part(with(func(p *Producer) { p.CurrentTxnStartOffset = -1 })), true, nil, "no longer has an open transaction"},
		{"epoch changed", part(with(func(p *Producer) { p.ProducerEpoch = 2 })), true, nil, "producer epoch changed 1→2"},
		{"new transaction", part(with(func(p *Producer) { p.CurrentTxnStartOffset = 1500 })), true, nil, "this is a newer transaction: it starts at offset 1500, the one shown at 1200"},
		{"coordinator epoch changed", part(with(func(p *Producer) { p.CoordinatorEpoch = 5 })), true, nil, "coordinator epoch changed 4→5"},
		{"wrote since (idle rule)", part(with(func(p *Producer) { p.LastWriteMs = WriteMs(now.Add(-3 * time.Second)) })), true, nil,
			"producer 4002 last wrote to orders-5 3s ago, not over 15m00s"},
		{"no last write known (idle rule)", part(with(func(p *Producer) { p.LastWriteMs = 0 })), true, nil, "an unknown time ago"},
		{"coordinator lists it", part(same), true, &Txn{ID: "orders-enricher-v1-0-3", State: Ongoing, ProducerEpoch: 1, Partitions: []TopicPartition{a.TopicPartition}},
			"lists this partition in orders-enricher-v1-0-3 (Ongoing, epoch 1); use force-terminate"},
		// ACLs hide some ids: no visible owner is no proof.
		{"ids hidden, no visible owner", hidden(part(other, same)), true, nil,
			"refused: some transactional ids are hidden by ACLs, so producer 4002's transaction may belong to one you cannot see"},
		{"ids hidden, visible idle owner", hidden(part(same)), true, &Txn{ID: "x", State: CompleteCommit, ProducerEpoch: 1}, ""},
		{"ids hidden, visible owner open elsewhere", hidden(part(same)), true, &Txn{ID: "x", State: Ongoing, ProducerEpoch: 1, Partitions: []TopicPartition{{"orders", 6}}}, ""},
		{"ids hidden, producer gone anyway", hidden(part(other)), true, nil, "no longer has an open transaction"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkRefusal(t, CheckAbortPartition(a, tt.p, tt.found, tt.owner, now), tt.refuse)
		})
	}
	recent := part(with(func(p *Producer) { p.LastWriteMs = WriteMs(now.Add(-3 * time.Second)) }))
	waived := a
	waived.IdleWaived = true
	checkRefusal(t, CheckAbortPartition(waived, recent, true, nil, now), "")
	unset := a
	unset.MinIdle = 0
	checkRefusal(t, CheckAbortPartition(unset, part(same), true, nil, now), "no idle threshold")
}

func hidden(p Partition) Partition {
	p.OwnersHidden = true
	return p
}

func TestOrphans(t *testing.T) {
	tp := TopicPartition{"orders", 0}
	p := Partition{TopicPartition: tp, HighWatermark: 100, LastStableOffset: 10, Producers: []Producer{
		{ProducerID: 1, CurrentTxnStartOffset: 10}, // owned by an open txn listing tp
		{ProducerID: 2, CurrentTxnStartOffset: 20}, // owner open but tp not listed
		{ProducerID: 3, CurrentTxnStartOffset: 30}, // owner idle
		{ProducerID: 4, CurrentTxnStartOffset: 40}, // unknown to the coordinator
		{ProducerID: 5, CurrentTxnStartOffset: -1}, // idempotent, nothing open
	}}
	s := snap(t0,
		Txn{ID: "a", State: Ongoing, ProducerID: 1, Partitions: []TopicPartition{tp}},
		Txn{ID: "b", State: Ongoing, ProducerID: 2, Partitions: []TopicPartition{{"orders", 1}}},
		Txn{ID: "c", State: CompleteAbort, ProducerID: 3, Partitions: []TopicPartition{tp}},
	)
	byPID := ByProducerID(s)
	if len(byPID) != 3 || byPID[2].ID != "b" {
		t.Errorf("ByProducerID = %v", byPID)
	}
	var got []int64
	for _, pr := range Orphans(p, byPID) {
		got = append(got, pr.ProducerID)
	}
	if len(got) != 3 || got[0] != 2 || got[1] != 3 || got[2] != 4 {
		t.Errorf("Orphans = %v want [2 3 4]", got)
	}
}

func TestResultSummary(t *testing.T) {
	tests := []struct {
		r    Result
		ok   bool
		want string
	}{
		{Result{Sent: true}, true, "sent; the broker accepted it"},
		{Result{Refused: true, Err: "refused: epoch changed"}, false, "refused: epoch changed"},
		{Result{Sent: true, Unknown: true, Err: "i/o timeout"}, false, "unknown outcome, re-check: i/o timeout"},
		{Result{Action: Action{Kind: AbortPartition}, Sent: true, ErrorCode: "CLUSTER_AUTHORIZATION_FAILED", Err: "Cluster authorization failed."}, false,
			"refused by the broker: CLUSTER_AUTHORIZATION_FAILED: Cluster authorization failed. (WriteTxnMarkers needs CLUSTER_ACTION or ALTER on the cluster)"},
		{Result{Action: Action{Kind: ForceTerminate}, Sent: true, ErrorCode: "TRANSACTIONAL_ID_AUTHORIZATION_FAILED", Err: "Transactional Id authorization failed."}, false,
			"refused by the broker: TRANSACTIONAL_ID_AUTHORIZATION_FAILED: Transactional Id authorization failed. (InitProducerId needs WRITE on the transactional id)"},
		{Result{Sent: true, ErrorCode: "CONCURRENT_TRANSACTIONS", Err: "busy"}, false, "broker answered CONCURRENT_TRANSACTIONS: busy"},
		{Result{Err: "dial tcp: refused"}, false, "failed: dial tcp: refused"},
		{Result{Sent: true, After: "now CompleteAbort at epoch 8"}, true, "sent; the broker accepted it; now CompleteAbort at epoch 8"},
		{Result{Sent: true, AuditErr: "audit log: no space left on device"}, false,
			"sent; the broker accepted it; the audit log was NOT written: audit log: no space left on device"},
		{Result{Sent: true, ErrorCode: "CONCURRENT_TRANSACTIONS"}, false, "broker answered CONCURRENT_TRANSACTIONS"},
	}
	for _, tt := range tests {
		if got := tt.r.Summary(); got != tt.want {
			t.Errorf("Summary = %q want %q", got, tt.want)
		}
		if got := tt.r.OK(); got != tt.ok {
			t.Errorf("%q OK = %v", tt.want, got)
		}
	}
}
