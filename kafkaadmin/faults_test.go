package kafkaadmin_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// refreshAPIs are the requests a Refresh sends (kgo adds FindCoordinator and
// Metadata of its own to route the sharded ones, and ApiVersions per
// connection).
var refreshAPIs = []kmsg.Key{
	kmsg.Metadata, kmsg.ApiVersions, kmsg.ListTransactions, kmsg.FindCoordinator, kmsg.DescribeTransactions,
	kmsg.ListOffsets, kmsg.DescribeProducers, kmsg.DescribeConfigs, kmsg.ListGroups, kmsg.DescribeGroups,
	kmsg.OffsetFetch, kmsg.Fetch,
}

// brokerErrors are the errors a coordinator or a leader answers.
var brokerErrors = []*kerr.Error{
	kerr.NotCoordinator, kerr.CoordinatorNotAvailable, kerr.CoordinatorLoadInProgress, kerr.ConcurrentTransactions,
	kerr.NotLeaderForPartition, kerr.RequestTimedOut,
	kerr.TransactionalIDAuthorizationFailed, kerr.TopicAuthorizationFailed, kerr.ClusterAuthorizationFailed,
	kerr.GroupAuthorizationFailed,
}

// faultsOn is every fault for one request kind: each error, a dropped
// connection, an answer that leaves everything out, latency past and below
// the client's timeout, and one broker failing alone.
func faultsOn(key kmsg.Key, timeout time.Duration) []fault {
	keys := []kmsg.Key{key}
	var out []fault
	for _, e := range brokerErrors {
		out = append(out, fault{name: e.Message, keys: keys, code: e})
	}
	out = append(out,
		fault{name: "dropped connection", keys: keys, drop: true},
		fault{name: "slower than the timeout", keys: keys, sleep: timeout + timeout/2},
		fault{name: "slow", keys: keys, sleep: timeout / 4},
	)
	// An answer naming none of the partitions, ids or groups asked about
	// says nothing about them. (For the listings an empty answer is a
	// true one: that broker has none.)
	if key != kmsg.ListTransactions && key != kmsg.ListGroups {
		out = append(out, fault{name: "empty answer", keys: keys, empty: true})
	}
	// One broker failing while the others answer, each broker in its own
	// way (the random run mixes them further). An empty Metadata answer
	// from one broker makes kgo forget the others for a while.
	out = append(out,
		fault{name: "COORDINATOR_NOT_AVAILABLE on broker 0", keys: keys, nodes: []int32{0}, code: kerr.CoordinatorNotAvailable},
		fault{name: "dropped connection to broker 1", keys: keys, nodes: []int32{1}, drop: true})
	if key != kmsg.ListTransactions && key != kmsg.ListGroups {
		out = append(out, fault{name: "empty answer from broker 2", keys: keys, nodes: []int32{2}, empty: true})
	} else {
		out = append(out, fault{name: "REQUEST_TIMED_OUT on broker 2", keys: keys, nodes: []int32{2}, code: kerr.RequestTimedOut})
	}
	return out
}

// TestRefreshUnderEachFault injects every fault into every request a Refresh
// sends, one at a time, on a cluster that holds still, and checks each
// result against what a fault-free refresh reads: Refresh fails, or every
// row it shows is what the cluster reported, or is marked as not known
// (violations). A first refresh and one given a previous snapshot are both
// checked; once the fault is gone the same client reads the truth again.
// Each request kind gets its own cluster so that they run side by side.
func TestRefreshUnderEachFault(t *testing.T) {
	t.Parallel()
	var wg sync.WaitGroup
	for _, key := range refreshAPIs {
		wg.Go(func() {
			t.Run(key.Name(), func(t *testing.T) {
				s := newStatic(t)
				for _, f := range faultsOn(key, faultTimeout) {
					t.Run(f.name, func(t *testing.T) { s.check(t, f) })
				}
			})
		})
	}
	wg.Wait()
}

// check refreshes under f, first cold then given prev, then without f.
func (s *static) check(t *testing.T, fs ...fault) {
	a := faultAdmin(t, s.boot)
	s.inj.set(fs...)
	for _, prev := range []*model.Snapshot{nil, s.prev} {
		ref := s.truth
		if prev != nil {
			ref = s.warm
		}
		got, err := refreshCtx(a, prev)
		if err != nil {
			t.Logf("warm=%v: Refresh failed: %v", prev != nil, err)
			continue
		}
		if bad := violations(got, ref, prev); len(bad) > 0 {
			t.Errorf("warm=%v: the snapshot shows what the cluster did not report:", prev != nil)
			for _, b := range bad {
				t.Errorf("  %s", b)
			}
		}
	}
	s.inj.clear()
	s.recovers(t, a)
}

// recovers: once the faults are gone, the same client reads the truth again
// (a request slept past its timeout may hold its connection a little longer).
func (s *static) recovers(t *testing.T, a *kafkaadmin.Client) {
	t.Helper()
	var last string
	for range 10 {
		got, err := refreshCtx(a, nil)
		// The ACL probes' answers are cached for minutes (brokerSettings),
		// so a refusal injected into them may still be noted in Hidden or
		// GroupsErr; everything else must be back.
		if err == nil && recovered(got, s.truth) {
			return
		}
		last = describeMiss(got, err, s.truth)
		time.Sleep(faultTimeout / 2)
	}
	t.Errorf("the client did not recover once the faults were gone: %s", last)
}

func recovered(got, truth *model.Snapshot) bool {
	if len(violations(got, truth, nil)) > 0 || got.Unread > 0 || len(got.Txns) != len(truth.Txns) ||
		len(got.Partitions) != len(truth.Partitions) || !slices.Equal(got.GroupCommits, truth.GroupCommits) {
		return false
	}
	for _, tx := range got.Txns {
		if tx.Err != "" || !tx.Described {
			return false
		}
	}
	for _, p := range got.Partitions {
		if p.Err != "" {
			return false
		}
	}
	return true
}

// describeMiss says how a refresh differs from the truth.
func describeMiss(got *model.Snapshot, err error, truth *model.Snapshot) string {
	if err != nil {
		return err.Error()
	}
	bad := violations(got, truth, nil)
	for _, tx := range got.Txns {
		if tx.Err != "" {
			bad = append(bad, tx.ID+": "+tx.Err)
		}
	}
	for _, p := range got.Partitions {
		if p.Err != "" {
			bad = append(bad, fmt.Sprintf("%s-%d: %s", p.Topic, p.Partition, p.Err))
		}
	}
	return fmt.Sprintf("%v (groups %q, unread %d, %d ids, %d partitions)", bad, got.GroupsErr, got.Unread, len(got.Txns), len(got.Partitions))
}

// faultSeed is the mixed run's seed: TXNSCOPE_FAULT_SEED replays one.
func faultSeed(t *testing.T) uint64 {
	if v := os.Getenv("TXNSCOPE_FAULT_SEED"); v != "" {
		seed, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("TXNSCOPE_FAULT_SEED: %v", err)
		}
		return seed
	}
	return uint64(time.Now().UnixNano())
}

// TestRefreshUnderRandomFaults: random faults on random brokers across all
// request kinds at once, for a bounded run; same invariants on every
// refresh, and the client recovers at the end.
func TestRefreshUnderRandomFaults(t *testing.T) {
	t.Parallel()
	s := newStatic(t)
	// A shorter timeout than the one-at-a-time cases, so that the run
	// fits more refreshes in its time.
	const timeout = 250 * time.Millisecond
	seed := faultSeed(t)
	t.Logf("seed %d (TXNSCOPE_FAULT_SEED=%d replays it)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	a := faultAdminWith(t, s.boot, timeout)
	deadline := time.Now().Add(6 * time.Second)
	refreshes, failed := 0, 0
	for refreshes < 300 && time.Now().Before(deadline) {
		fs := randomFaults(rng, timeout)
		s.inj.set(fs...)
		prev := s.prev
		ref := s.warm
		if rng.IntN(2) == 0 {
			prev, ref = nil, s.truth
		}
		got, err := refreshCtx(a, prev)
		refreshes++
		if err != nil {
			failed++
			continue
		}
		if bad := violations(got, ref, prev); len(bad) > 0 {
			t.Errorf("refresh %d (warm=%v) under %v:", refreshes, prev != nil, names(fs))
			for _, b := range bad {
				t.Errorf("  %s", b)
			}
		}
	}
	s.inj.clear()
	t.Logf("%d refreshes, %d failed as a whole", refreshes, failed)
	s.recovers(t, a)
}

// randomFaults picks up to three faults, each on one request kind and on
// one broker or all of them.
func randomFaults(rng *rand.Rand, timeout time.Duration) []fault {
	var out []fault
	for range rng.IntN(4) {
		all := faultsOn(refreshAPIs[rng.IntN(len(refreshAPIs))], timeout)
		f := all[rng.IntN(len(all))]
		if rng.IntN(2) == 0 {
			f.nodes = []int32{int32(rng.IntN(3))}
		}
		out = append(out, f)
	}
	return out
}

func names(fs []fault) []string {
	var out []string
	for _, f := range fs {
		n := f.keys[0].Name() + " " + f.name
		if f.nodes != nil && !strings.Contains(f.name, "broker") {
			n += " on broker " + strconv.Itoa(int(f.nodes[0]))
		}
		out = append(out, n)
	}
	return out
}
