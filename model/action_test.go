package model

import (
	"strings"
	"testing"
)

func ftAction() Action {
	return Action{Kind: ForceTerminate, TransactionalID: "orders-enricher-v1-2-17", Coordinator: 3, State: Ongoing,
		ProducerID: 4001, ProducerEpoch: 7}
}

func apAction() Action {
	return Action{Kind: AbortPartition, TopicPartition: TopicPartition{"orders", 5}, Leader: 2, CoordinatorEpoch: 4,
		StartOffset: 1200, ProducerID: 4002, ProducerEpoch: 1}
}

func TestActionWireAndConsequences(t *testing.T) {
	ft := ftAction()
	if got := ft.Target(); got != "orders-enricher-v1-2-17" {
		t.Errorf("Target = %q", got)
	}
	w := ft.Wire()
	for _, s := range []string{"InitProducerId", `"orders-enricher-v1-2-17"`, "coordinator broker 3", "producer id -1, epoch -1"} {
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

func TestCheckForceTerminate(t *testing.T) {
	a := ftAction()
	fresh := Txn{ID: a.TransactionalID, State: Ongoing, ProducerID: 4001, ProducerEpoch: 7}
	tests := []struct {
		name   string
		a      Action
		fresh  func(Txn) Txn
		found  bool
		refuse string // "" means allowed
	}{
		{"unchanged", a, func(t Txn) Txn { return t }, true, ""},
		{"gone", a, func(t Txn) Txn { return t }, false, "no longer known"},
		{"new producer id", a, func(t Txn) Txn { t.ProducerID = 5000; return t }, true, "producer id changed 4001→5000"},
		{"epoch bumped", a, func(t Txn) Txn { t.ProducerEpoch = 8; return t }, true, "producer epoch changed 7→8"},
		{"committed meanwhile", a, func(t Txn) Txn { t.State = PrepareCommit; return t }, true, "state changed Ongoing→PrepareCommit"},
		{"fenced meanwhile", a, func(t Txn) Txn { t.State = PrepareEpochFence; return t }, true, "state changed"},
		{"nothing open", func() Action { x := a; x.State = CompleteCommit; return x }(),
			func(t Txn) Txn { t.State = CompleteCommit; return t }, true, "is CompleteCommit, nothing to abort"},
		{"PrepareEpochFence is abortable", func() Action { x := a; x.State = PrepareEpochFence; return x }(),
			func(t Txn) Txn { t.State = PrepareEpochFence; return t }, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckForceTerminate(tt.a, tt.fresh(fresh), tt.found)
			checkRefusal(t, err, tt.refuse)
		})
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
	same := Producer{ProducerID: 4002, ProducerEpoch: 1, CurrentTxnStartOffset: 1200}
	other := Producer{ProducerID: 9, ProducerEpoch: 0, CurrentTxnStartOffset: 1300}
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
		{"owner open with another epoch", part(same), true, &Txn{ID: "x", State: Ongoing, ProducerEpoch: 2, Partitions: []TopicPartition{a.TopicPartition}}, ""},
		{"partition not re-read", Partition{}, false, nil, "orders-5 could not be re-read"},
		{"producer gone", part(other), true, nil, "producer 4002 no longer has an open transaction on orders-5"},
		{"producer finished", part(Producer{ProducerID: 4002, ProducerEpoch: 1, CurrentTxnStartOffset: -1}), true, nil, "no longer has an open transaction"},
		{"epoch changed", part(Producer{ProducerID: 4002, ProducerEpoch: 2, CurrentTxnStartOffset: 1200}), true, nil, "producer epoch changed 1→2"},
		{"new transaction", part(Producer{ProducerID: 4002, ProducerEpoch: 1, CurrentTxnStartOffset: 1500}), true, nil, "now starts at offset 1500, not 1200"},
		{"coordinator lists it", part(same), true, &Txn{ID: "orders-enricher-v1-0-3", State: Ongoing, ProducerEpoch: 1, Partitions: []TopicPartition{a.TopicPartition}},
			"lists this partition in orders-enricher-v1-0-3; use force-terminate"},
		// ACLs hide some ids: no visible owner is no proof.
		{"ids hidden, no visible owner", hidden(part(other, same)), true, nil,
			"refused: some transactional ids are hidden by ACLs, so producer 4002's transaction may belong to one you cannot see"},
		{"ids hidden, visible idle owner", hidden(part(same)), true, &Txn{ID: "x", State: CompleteCommit, ProducerEpoch: 1}, ""},
		{"ids hidden, visible owner open elsewhere", hidden(part(same)), true, &Txn{ID: "x", State: Ongoing, ProducerEpoch: 1, Partitions: []TopicPartition{{"orders", 6}}}, ""},
		{"ids hidden, producer gone anyway", hidden(part(other)), true, nil, "no longer has an open transaction"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkRefusal(t, CheckAbortPartition(a, tt.p, tt.found, tt.owner), tt.refuse)
		})
	}
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
