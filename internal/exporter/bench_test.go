package exporter

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/buildinfo"
	"github.com/txnscope/txnscope/internal/testutil/uitest"
	"github.com/txnscope/txnscope/model"
)

// scrapeFixture is n ids in 50 Flink jobs of parallelism 4, every 100th
// open, each open one pinning a partition of its own (1,000 pinned
// partitions at 100,000 ids).
func scrapeFixture(n int, at time.Time) *model.Snapshot {
	s := &model.Snapshot{TakenAt: at, Bootstrap: "127.0.0.1:9092", Brokers: 3, Txns: make([]model.Txn, 0, n)}
	for i := range n {
		id := fmt.Sprintf("job%02d-%d-%d", i%50, i/50%4, i/200)
		t := model.Txn{ID: id, State: model.CompleteCommit, ProducerID: int64(i + 1), TimeoutMs: 900000, Described: true}
		if i%100 == 0 {
			tp := model.TopicPartition{Topic: fmt.Sprintf("topic-%d", i/100%20), Partition: int32(i / 100)}
			t.State, t.Partitions, t.StartUnixMs = model.Ongoing, []model.TopicPartition{tp}, at.Add(-time.Duration(i%600)*time.Second).UnixMilli()
			s.Partitions = append(s.Partitions, model.Partition{TopicPartition: tp, HighWatermark: 1000, LastStableOffset: 400,
				Producers: []model.Producer{{ProducerID: int64(i + 1), CurrentTxnStartOffset: 400, LastWriteMs: model.WriteMs(at)}}})
		}
		s.Txns = append(s.Txns, t)
	}
	s.Sort()
	return s
}

// BenchmarkScrape: what one /metrics costs at 100,000 ids, 50 jobs and
// 1,000 pinned partitions, after a refresh made the values current.
// bytes/scrape is the size of the page.
func BenchmarkScrape(b *testing.B) {
	for _, format := range []string{"text", "openmetrics"} {
		b.Run(format, func(b *testing.B) {
			a, now := &uitest.Admin{}, uitest.T0
			e := New(Options{Admin: a, Refresh: 15 * time.Second, Build: buildinfo.Info{Version: "bench"}, Now: func() time.Time { return now }, MaxIDSeries: DefaultMaxIDSeries})
			s := scrapeFixture(100_000, uitest.T0)
			a.Push(s)
			if err := e.Refresh(context.Background()); err != nil {
				b.Fatal(err)
			}
			now = now.Add(15 * time.Second)
			if err := e.Refresh(context.Background()); err != nil {
				b.Fatal(err)
			}
			if got := pinnedOf(b, e); got != 1000 {
				b.Fatalf("txnscope_partitions_pinned %v, want 1000", got)
			}
			srv := httptest.NewServer(e.Handler())
			defer srv.Close()
			req, _ := http.NewRequest("GET", srv.URL+"/metrics", nil)
			if format == "openmetrics" {
				req.Header.Set("Accept", "application/openmetrics-text; version=1.0.0")
			}
			var size int64
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				size, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			b.ReportMetric(float64(size), "bytes/scrape")
		})
	}
}

// BenchmarkCompute: working out every metric's value from one refresh at
// 100,000 ids (the exporter's share of a refresh, beside the cluster's).
func BenchmarkCompute(b *testing.B) {
	s := scrapeFixture(100_000, uitest.T0)
	h, tr := model.NewHistory(historySize), model.NewPinTracker()
	h.Baseline(s)
	tr.Observe(s)
	b.ReportAllocs()
	for b.Loop() {
		Compute(s, h, tr, uitest.T0.Add(15*time.Second))
	}
}

func pinnedOf(b *testing.B, e *Exporter) float64 {
	mfs, err := e.reg.Gather()
	if err != nil {
		b.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "txnscope_partitions_pinned" {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	return -1
}
