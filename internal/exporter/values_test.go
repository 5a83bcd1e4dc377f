package exporter

import (
	"maps"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/testutil/uitest"
	"github.com/txnscope/txnscope/model"
	"github.com/txnscope/txnscope/views"
)

// TestFixtureSeries: the UI's fixture cluster, refreshed twice 30 s apart,
// gives each metric the value the UI's screens show for it.
func TestFixtureSeries(t *testing.T) {
	e, a, c := newTest()
	refresh(t, e, a, uitest.Snapshot(uitest.T0))
	c.t = uitest.T0.Add(30 * time.Second)
	refresh(t, e, a, uitest.Snapshot(c.t))
	got := series(t, e)
	cases := []struct {
		name string
		want map[string]float64
	}{
		{"txnscope_up", map[string]float64{"txnscope_up": 1}},
		{"txnscope_refresh_errors_total", map[string]float64{"txnscope_refresh_errors_total": 0}},
		{"txnscope_last_refresh_timestamp_seconds", map[string]float64{
			"txnscope_last_refresh_timestamp_seconds": float64(c.t.Unix())}},
		{"txnscope_transactions", map[string]float64{
			`txnscope_transactions{state="Ongoing"}`:           6,
			`txnscope_transactions{state="PrepareEpochFence"}`: 1,
			`txnscope_transactions{state="CompleteCommit"}`:    1,
			`txnscope_transactions{state="CompleteAbort"}`:     1,
			`txnscope_transactions{state="Empty"}`:             1,
		}},
		// The undescribed payments-tx-secret has no start: no age series.
		{"txnscope_transaction_open_age_seconds", map[string]float64{
			`txnscope_transaction_open_age_seconds{transactional_id="long-runner",txn_job="other"}`:                          540,
			`txnscope_transaction_open_age_seconds{transactional_id="crashed-job-0-7",txn_job="crashed-job"}`:                70,
			`txnscope_transaction_open_age_seconds{transactional_id="fenced-job-0-3",txn_job="fenced-job"}`:                  20,
			`txnscope_transaction_open_age_seconds{transactional_id="orders-enricher-v1-0-41",txn_job="orders-enricher-v1"}`: 12,
			`txnscope_transaction_open_age_seconds{transactional_id="orders-enricher-v1-1-41",txn_job="orders-enricher-v1"}`: 35,
			`txnscope_transaction_open_age_seconds{transactional_id="orders-enricher-v1-2-41",txn_job="orders-enricher-v1"}`: 57,
		}},
		{"txnscope_job_open_timeout_ratio_max", map[string]float64{
			`txnscope_job_open_timeout_ratio_max{family="flink",txn_job="crashed-job"}`:        70.0 / 60,
			`txnscope_job_open_timeout_ratio_max{family="flink",txn_job="fenced-job"}`:         20.0 / 60,
			`txnscope_job_open_timeout_ratio_max{family="flink",txn_job="orders-enricher-v1"}`: 57.0 / 60,
			`txnscope_job_open_timeout_ratio_max{family="other",txn_job="other"}`:              9.0 / 15,
		}},
		// payments-tx-secret counts as open; its age is not known.
		{"txnscope_job_open_transactions", map[string]float64{
			`txnscope_job_open_transactions{family="flink",txn_job="abort-every-third"}`:  0,
			`txnscope_job_open_transactions{family="flink",txn_job="crashed-job"}`:        1,
			`txnscope_job_open_transactions{family="flink",txn_job="fenced-job"}`:         1,
			`txnscope_job_open_transactions{family="flink",txn_job="orders-enricher-v1"}`: 3,
			`txnscope_job_open_transactions{family="other",txn_job="other"}`:              2,
		}},
		{"txnscope_job_oldest_open_age_seconds", map[string]float64{
			`txnscope_job_oldest_open_age_seconds{family="flink",txn_job="crashed-job"}`:        70,
			`txnscope_job_oldest_open_age_seconds{family="flink",txn_job="fenced-job"}`:         20,
			`txnscope_job_oldest_open_age_seconds{family="flink",txn_job="orders-enricher-v1"}`: 57,
			`txnscope_job_oldest_open_age_seconds{family="other",txn_job="other"}`:              540,
		}},
		{"txnscope_oldest_open_transaction_age_seconds", map[string]float64{"txnscope_oldest_open_transaction_age_seconds": 540}},
		// Pinned since the first refresh, 30 s ago.
		{"txnscope_partition_pinned_seconds", map[string]float64{
			`txnscope_partition_pinned_seconds{partition="0",topic="audit"}`:   30,
			`txnscope_partition_pinned_seconds{partition="0",topic="orders"}`:  30,
			`txnscope_partition_pinned_seconds{partition="2",topic="billing"}`: 30,
			`txnscope_partition_pinned_seconds{partition="2",topic="orders"}`:  30,
			`txnscope_partition_pinned_seconds{partition="3",topic="orders"}`:  30,
			`txnscope_partition_pinned_seconds{partition="4",topic="orders"}`:  30,
			`txnscope_partition_pinned_seconds{partition="5",topic="orders"}`:  30,
			`txnscope_partition_pinned_seconds{partition="6",topic="orders"}`:  30,
			`txnscope_partition_pinned_seconds{partition="7",topic="orders"}`:  30,
		}},
		{"txnscope_partition_records_held_back", map[string]float64{
			`txnscope_partition_records_held_back{partition="0",topic="audit"}`:   1200,
			`txnscope_partition_records_held_back{partition="0",topic="orders"}`:  20,
			`txnscope_partition_records_held_back{partition="2",topic="billing"}`: 19,
			`txnscope_partition_records_held_back{partition="2",topic="orders"}`:  20,
			`txnscope_partition_records_held_back{partition="3",topic="orders"}`:  20,
			`txnscope_partition_records_held_back{partition="4",topic="orders"}`:  77,
			`txnscope_partition_records_held_back{partition="5",topic="orders"}`:  10,
			`txnscope_partition_records_held_back{partition="6",topic="orders"}`:  10,
			`txnscope_partition_records_held_back{partition="7",topic="orders"}`:  300,
		}},
		{"txnscope_partitions_pinned", map[string]float64{"txnscope_partitions_pinned": 9}},
		{"txnscope_partitions_hanging", map[string]float64{"txnscope_partitions_hanging": 2}},
		// dashboard waits below orders-0's LSO by more than StuckSlack: not stuck.
		{"txnscope_group_stuck_seconds", map[string]float64{
			`txnscope_group_stuck_seconds{group="billing-etl",group_type="classic"}`:      30,
			`txnscope_group_stuck_seconds{group="orders-analytics",group_type="classic"}`: 30,
		}},
		{"txnscope_prefix_shared", map[string]float64{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if g := named(got, tc.name); !maps.Equal(g, tc.want) {
				t.Errorf("got %v\nwant %v", g, tc.want)
			}
		})
	}
}

// TestSameNumbersAsTheUI: the counts come from the functions the UI's header
// and screens call, so they agree for the same refresh.
func TestSameNumbersAsTheUI(t *testing.T) {
	s := uitest.Snapshot(uitest.T0)
	tr := model.NewPinTracker()
	tr.Observe(s)
	v := Compute(s, model.NewHistory(10), tr, uitest.T0)
	sum := views.Summarize(s)
	for _, sc := range sum.Counts {
		if v.States[sc.State] != sc.N {
			t.Errorf("%s: exporter %d, header %d", sc.State, v.States[sc.State], sc.N)
		}
	}
	pins := model.Pins(s, tr, uitest.T0)
	if v.Pinned != len(pins) || len(v.Groups) != len(model.BlockedGroups(pins)) {
		t.Errorf("pinned %d groups %d, the partitions screen %d and %d", v.Pinned, len(v.Groups), len(pins), len(model.BlockedGroups(pins)))
	}
	if len(v.Jobs) != len(model.Jobs(s, nil, uitest.T0)) {
		t.Errorf("%d jobs, the jobs screen %d", len(v.Jobs), len(model.Jobs(s, nil, uitest.T0)))
	}
}

// TestQuietCluster: a cluster with nothing open still has its counts, at
// zero, and no id-, partition- or group-level series.
func TestQuietCluster(t *testing.T) {
	e, a, _ := newTest()
	s := &model.Snapshot{TakenAt: uitest.T0, Brokers: 1, Txns: []model.Txn{{ID: "idle-0", State: model.Empty, ProducerID: 1, TimeoutMs: 60000, Described: true}}}
	refresh(t, e, a, s)
	got := series(t, e)
	for k, want := range map[string]float64{
		`txnscope_transactions{state="Ongoing"}`:       0,
		`txnscope_transactions{state="Empty"}`:         1,
		"txnscope_oldest_open_transaction_age_seconds": 0,
		"txnscope_partitions_pinned":                   0,
		"txnscope_partitions_hanging":                  0,
	} {
		if v, ok := got[k]; !ok || v != want {
			t.Errorf("%s = %v (%v), want %v", k, v, ok, want)
		}
	}
	for _, name := range []string{"txnscope_transaction_open_age_seconds", "txnscope_transaction_open_timeout_ratio",
		"txnscope_partition_pinned_seconds", "txnscope_partition_records_held_back", "txnscope_group_stuck_seconds", "txnscope_job_open_timeout_ratio_max"} {
		if g := named(got, name); len(g) != 0 {
			t.Errorf("%s: %v", name, g)
		}
	}
}

// TestUnknownSeries: what a refresh could not know is a series of its own,
// every kind always served, so that a rule sees it come and go.
func TestUnknownSeries(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*model.Snapshot)
		want []string
	}{
		{"everything known", func(s *model.Snapshot) { s.BrokerMaxTimeoutMs, s.Source.Log = 900000, true }, nil},
		{"the demo: no coordinator log", func(s *model.Snapshot) {
			s.BrokerMaxTimeoutMs, s.Source.Why = 900000, "the cluster has no __transaction_state"
		},
			[]string{"coordinator_log"}},
		{"a restricted principal", func(s *model.Snapshot) {
			s.Hidden, s.GroupsErr, s.BrokerMaxTimeoutMs, s.Unread = model.HiddenIDs, "no permission to list groups", 0, 2
			s.Partitions = append(s.Partitions, model.Partition{TopicPartition: model.TopicPartition{Topic: "orders", Partition: 9},
				Err: model.NoPermission + " to read the producers: TOPIC_AUTHORIZATION_FAILED"})
		}, []string{"transactional_ids", "producers", "partition_offsets", "consumer_groups", "max_transaction_timeout", "coordinator_log"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := uitest.Snapshot(uitest.T0)
			c.edit(s)
			v := Compute(s, nil, nil, uitest.T0)
			for _, what := range Unknowable {
				want := false
				for _, w := range c.want {
					want = want || w == what
				}
				if v.Unknown[what] != want {
					t.Errorf("unknown %s = %v, want %v", what, v.Unknown[what], want)
				}
			}
		})
	}
	e, a, _ := newTest()
	refresh(t, e, a, uitest.Snapshot(uitest.T0))
	got := series(t, e)
	for _, what := range Unknowable {
		if _, ok := got[`txnscope_unknown{what="`+what+`"}`]; !ok {
			t.Errorf("no txnscope_unknown series for %s", what)
		}
	}
}
