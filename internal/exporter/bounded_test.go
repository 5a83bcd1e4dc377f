package exporter

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/buildinfo"
	"github.com/txnscope/txnscope/internal/testutil/uitest"
	"github.com/txnscope/txnscope/model"
)

func TestUrgent(t *testing.T) {
	open := []OpenTxn{
		{ID: "a", Age: time.Minute, Ratio: 0.5, HasRatio: true},
		{ID: "b", Age: 10 * time.Minute},
		{ID: "c", Age: 2 * time.Minute, Ratio: 0.95, HasRatio: true},
		{ID: "d", Age: 3 * time.Minute},
		{ID: "e", Age: 30 * time.Second, Ratio: 0.5, HasRatio: true},
	}
	ids := func(o []OpenTxn) []string {
		var out []string
		for _, x := range o {
			out = append(out, x.ID)
		}
		return out
	}
	for _, c := range []struct {
		n    int
		want []string
	}{
		{0, nil},
		{-1, nil},
		{1, []string{"c"}},
		// the same ratio: the older first
		{3, []string{"c", "a", "e"}},
		// an unknown timeout after every known one, the oldest first
		{5, []string{"c", "a", "e", "b", "d"}},
		{50, []string{"c", "a", "e", "b", "d"}},
	} {
		if got := ids(Urgent(open, c.n)); !slices.Equal(got, c.want) {
			t.Errorf("Urgent(%d) = %v, want %v", c.n, got, c.want)
		}
	}
	if open[0].ID != "a" {
		t.Error("Urgent reordered its argument")
	}
}

// openFixture is n open transactions in 50 Flink jobs of parallelism 8,
// on 160 partitions (20 topics of 8), with timeouts from 1 to 15 minutes
// and ages up to 10: what a cluster of stuck or slow jobs looks like.
func openFixture(n int, at time.Time) *model.Snapshot {
	s := &model.Snapshot{TakenAt: at, Bootstrap: "127.0.0.1:9092", Brokers: 3, BrokerMaxTimeoutMs: 900000, Txns: make([]model.Txn, 0, n)}
	pinned := map[model.TopicPartition]bool{}
	for i := range n {
		id := fmt.Sprintf("job%02d-%d-%d", i%50, i/50%8, i/400)
		tp := model.TopicPartition{Topic: fmt.Sprintf("topic-%d", i%20), Partition: int32(i / 20 % 8)}
		s.Txns = append(s.Txns, model.Txn{ID: id, State: model.Ongoing, ProducerID: int64(i + 1), TimeoutMs: int32(60000 * (1 + i%15)),
			Described: true, Partitions: []model.TopicPartition{tp}, StartUnixMs: at.Add(-time.Duration(i%600) * time.Second).UnixMilli()})
		if !pinned[tp] {
			pinned[tp] = true
			s.Partitions = append(s.Partitions, model.Partition{TopicPartition: tp, HighWatermark: 1000, LastStableOffset: 400,
				Producers: []model.Producer{{ProducerID: int64(i + 1), CurrentTxnStartOffset: 400, LastWriteMs: model.WriteMs(at)}}})
		}
	}
	s.Sort()
	return s
}

// pageOf is a scrape's text and its number of series.
func pageOf(t *testing.T, e *Exporter) (string, int) {
	t.Helper()
	_, _, body := get(t, e.Handler(), "/metrics", "")
	n := 0
	for l := range strings.SplitSeq(body, "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			n++
		}
	}
	return body, n
}

// TestSeriesBoundedAt20000OpenIDs: 20,000 open transactions make a page of
// per-job, per-partition and cluster series and the --max-id-series most
// urgent ids, not two series per id; the same ids keep their series from
// one refresh to the next.
func TestSeriesBoundedAt20000OpenIDs(t *testing.T) {
	const n, jobs, partitions = 20_000, 50, 160
	scrape := func(maxIDs int, at ...time.Time) (string, int, *Exporter) {
		c := &clock{uitest.T0}
		a := &uitest.Admin{}
		e := New(Options{Admin: a, Refresh: 15 * time.Second, Build: buildinfo.Info{Version: "v-test"}, Now: c.now, MaxIDSeries: maxIDs})
		var body string
		var count int
		for _, now := range at {
			c.t = now
			refresh(t, e, a, openFixture(n, uitest.T0))
			body, count = pageOf(t, e)
		}
		return body, count, e
	}
	t0, t1 := uitest.T0, uitest.T0.Add(15*time.Second)
	unbounded, unboundedN, _ := scrape(n, t0)
	for _, maxIDs := range []int{0, DefaultMaxIDSeries, 100} {
		t.Run(fmt.Sprint("max-id-series ", maxIDs), func(t *testing.T) {
			body, count, e := scrape(maxIDs, t0)
			// The cluster's series (about 30), 7 per job, 2 per pinned
			// partition, 2 per id served.
			bound := 40 + 7*jobs + 2*partitions + 2*maxIDs
			if count > bound || len(body) > 100_000 {
				t.Errorf("%d series, %d bytes; want at most %d series and 100 KB", count, len(body), bound)
			}
			t.Logf("%d open ids, --max-id-series %d: %d series, %d bytes (every id: %d series, %d bytes)", n, maxIDs, count, len(body), unboundedN, len(unbounded))
			ids := named(series(t, e), "txnscope_transaction_open_timeout_ratio")
			if len(ids) != maxIDs {
				t.Errorf("%d id series, want %d", len(ids), maxIDs)
			}
			// The most urgent are served: no id left out is nearer its timeout.
			all := Urgent(e.c.v.Open, n)
			for k, r := range ids {
				if r < all[maxIDs-1].Ratio {
					t.Errorf("%s = %v, below the %dth most urgent %v", k, r, maxIDs, all[maxIDs-1].Ratio)
				}
			}
			if got := named(series(t, e), "txnscope_job_open_transactions"); len(got) != jobs {
				t.Errorf("%d job_open_transactions series, want %d", len(got), jobs)
			}
		})
	}
	// 15 s later the same transactions are still the most urgent: the
	// same labels, so Prometheus appends to the same series.
	_, _, e := scrape(DefaultMaxIDSeries, t0)
	before := keys(named(series(t, e), "txnscope_transaction_open_age_seconds"))
	_, _, e = scrape(DefaultMaxIDSeries, t0, t1)
	after := keys(named(series(t, e), "txnscope_transaction_open_age_seconds"))
	if !slices.Equal(before, after) {
		t.Errorf("the id series changed between two refreshes of the same transactions:\n%v\n%v", before, after)
	}
}

func keys(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
