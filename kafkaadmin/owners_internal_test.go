package kafkaadmin

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/txnscope/txnscope/model"
)

// The partition of an id must be Kafka's (TransactionStateManager.partitionFor:
// Utils.abs(transactionalId.hashCode) % partitions), or a probe would stand
// for the wrong partition.
func TestTxnPartition(t *testing.T) {
	for _, tc := range []struct {
		id   string
		hash int32
		p50  int
	}{
		{"", 0, 0},
		{"a", 97, 47},
		{"hello", 99162322, 22},
		{"polygenelubricants", math.MinInt32, 0}, // Utils.abs(MIN_VALUE) is 0, not MIN_VALUE
		{"\U0001F600", 1772899, 49},              // a surrogate pair: two UTF-16 units
		{"job-0-4", -1439128633, 33},
		{"orders-enricher-v1-0-41", 1328725209, 9},
	} {
		if h := javaHash(tc.id); h != tc.hash {
			t.Errorf("javaHash(%q) = %d, want %d", tc.id, h, tc.hash)
		}
		if p := txnPartition(tc.id, 50); p != tc.p50 {
			t.Errorf("txnPartition(%q, 50) = %d, want %d", tc.id, p, tc.p50)
		}
	}
}

func TestLoadProbes(t *testing.T) {
	for _, n := range []int{1, 3, 50, 1000} {
		probes, err := loadProbes(n)
		if err != nil || len(probes) != n {
			t.Fatalf("loadProbes(%d): %d probes, %v", n, len(probes), err)
		}
		for p, id := range probes {
			if !strings.HasPrefix(id, loadProbePrefix) || txnPartition(id, n) != p {
				t.Fatalf("probe %q stands for partition %d of %d, lives in %d", id, p, n, txnPartition(id, n))
			}
		}
	}
	for _, n := range []int{0, -1, maxTxnStatePartitions + 1} {
		if _, err := loadProbes(n); err == nil {
			t.Errorf("loadProbes(%d) did not refuse", n)
		}
	}
}

// TestJudgeProbes: a partition is loaded when some broker answers its probe
// cleanly (and, when the topic's metadata is readable, names itself its
// leader); one loading it, or none holding it, is a gap named in the error.
func TestJudgeProbes(t *testing.T) {
	probes, _ := loadProbes(2)
	brokers := []int32{1, 2}
	const ok = 0 // the probe exists: described, loaded all the same
	nf := kerr.TransactionalIDNotFound.Code
	nc := kerr.NotCoordinator.Code
	load := kerr.CoordinatorLoadInProgress.Code
	denied := kerr.TransactionalIDAuthorizationFailed.Code
	answer := func(p0, p1 int16) probeAnswers {
		return probeAnswers{codes: map[string]int16{probes[0]: p0, probes[1]: p1}}
	}
	led := func(leaders, epochs []int32) txnStateView {
		return txnStateView{exists: true, leader: leaders, epoch: epochs}
	}
	for _, tc := range []struct {
		name    string
		meta    map[int32]txnStateView
		answers map[int32]probeAnswers
		want    string // "" for no error
		hidden  bool
		held    [][]holder
	}{
		{name: "each partition held once, no topic (kfake)",
			answers: map[int32]probeAnswers{1: answer(nf, nc), 2: answer(nc, ok)},
			held:    [][]holder{{{1, -1}}, {{2, -1}}}},
		{name: "held twice while it moves",
			answers: map[int32]probeAnswers{1: answer(nf, nf), 2: answer(nf, nc)},
			held:    [][]holder{{{1, -1}, {2, -1}}, {{1, -1}}}},
		{name: "epochs from the holder's own metadata",
			meta:    map[int32]txnStateView{1: led([]int32{1, 2}, []int32{7, 8}), 2: led([]int32{1, 2}, []int32{6, 9})},
			answers: map[int32]probeAnswers{1: answer(nf, nc), 2: answer(nc, nf)},
			held:    [][]holder{{{1, 7}}, {{2, 9}}}},
		{name: "a holder whose metadata names another leader is letting it go",
			meta:    map[int32]txnStateView{1: led([]int32{2, 2}, []int32{7, 8}), 2: led([]int32{2, 2}, []int32{7, 8})},
			answers: map[int32]probeAnswers{1: answer(nf, nc), 2: answer(nc, nf)},
			want:    "partition 0: no broker holds it (broker 1 answers for it, its metadata names leader 2; broker 2: NOT_COORDINATOR)"},
		{name: "loading",
			answers: map[int32]probeAnswers{1: answer(nf, load), 2: answer(nc, nc)},
			want:    "partition 1: broker 1 is loading it (COORDINATOR_LOAD_IN_PROGRESS)"},
		{name: "loading beside a holder",
			answers: map[int32]probeAnswers{1: answer(nf, nf), 2: answer(load, nc)},
			want:    "partition 0: broker 2 is loading it"},
		{name: "held by nobody",
			answers: map[int32]probeAnswers{1: answer(nc, nc), 2: answer(nc, nc)},
			want:    "partition 0: no broker holds it (broker 1: NOT_COORDINATOR; broker 2: NOT_COORDINATOR) (and 1 more of its 2 partitions)"},
		{name: "a probe left out of the answer",
			answers: map[int32]probeAnswers{1: {codes: map[string]int16{probes[0]: nf}}, 2: answer(nc, nc)},
			want:    "partition 1: no broker holds it (broker 1: no answer; broker 2: NOT_COORDINATOR)"},
		{name: "a broker that does not answer",
			answers: map[int32]probeAnswers{1: answer(nf, nf), 2: {err: errors.New("dial tcp: connection refused")}},
			want:    "broker 2 did not answer: dial tcp: connection refused"},
		{name: "ACLs refuse the probes: hidden, nothing judged",
			answers: map[int32]probeAnswers{1: answer(denied, denied), 2: answer(denied, denied)},
			hidden:  true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := judgeProbes(brokers, probes, tc.meta, tc.answers)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("err %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), notLoaded)):
				t.Fatalf("err %v, want %q in it", err, tc.want)
			case v.hidden != tc.hidden:
				t.Fatalf("hidden %v", v.hidden)
			}
			if tc.held != nil && !sameHeld(v.held, tc.held) {
				t.Fatalf("held %v, want %v", v.held, tc.held)
			}
		})
	}
}

func sameHeld(a, b [][]holder) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			if a[i][j] != b[i][j] {
				return false
			}
		}
	}
	return true
}

// TestSameCoords: loaded throughout means one broker held the partition
// before and after the listing, at the same leader epoch.
func TestSameCoords(t *testing.T) {
	view := func(h ...[]holder) coordView { return coordView{held: h} }
	for _, tc := range []struct {
		name          string
		before, after coordView
		want          string
	}{
		{"unchanged", view([]holder{{1, 4}}), view([]holder{{1, 4}}), ""},
		{"kfake, no epochs", view([]holder{{1, -1}}), view([]holder{{1, -1}}), ""},
		{"one of two holders kept it", view([]holder{{1, 4}, {2, 5}}), view([]holder{{2, 5}}), ""},
		{"moved", view([]holder{{1, 4}}), view([]holder{{2, 5}}), "partition 0: moved from broker 1 to broker 2 during the listing"},
		{"reloaded at a new epoch", view([]holder{{1, 4}}, []holder{{1, 4}}), view([]holder{{1, 4}}, []holder{{1, 6}}),
			"partition 1: leader epoch 4→6 at broker 1 during the listing"},
	} {
		err := sameCoords(tc.before, tc.after)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestOwnerless: the producers with an open transaction on a partition that
// no row names, each once and ascending; idle producers, and producers a
// row names in any state, are not.
func TestOwnerless(t *testing.T) {
	open := func(pid int64) model.Producer { return model.Producer{ProducerID: pid, CurrentTxnStartOffset: 5} }
	idle := model.Producer{ProducerID: 3, CurrentTxnStartOffset: -1}
	snap := &model.Snapshot{
		Txns: []model.Txn{{ID: "a", ProducerID: 10, State: model.Ongoing}, {ID: "b", ProducerID: 11, State: model.Empty}},
		Partitions: []model.Partition{
			{TopicPartition: model.TopicPartition{Topic: "t", Partition: 0}, Producers: []model.Producer{open(10), open(42), idle, open(7)}},
			{TopicPartition: model.TopicPartition{Topic: "t", Partition: 1}, Producers: []model.Producer{open(42), open(11)}},
		},
	}
	if got := ownerless(snap); !slices.Equal(got, []int64{7, 42}) {
		t.Errorf("ownerless: %v, want [7 42]", got)
	}
	snap.Txns = append(snap.Txns, model.Txn{ID: "c", ProducerID: 7}, model.Txn{ID: "d", ProducerID: 42})
	if got := ownerless(snap); len(got) != 0 {
		t.Errorf("every producer named by a row: %v, want none", got)
	}
}
