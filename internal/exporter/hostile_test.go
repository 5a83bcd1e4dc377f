package exporter

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	pmodel "github.com/prometheus/common/model"

	"github.com/txnscope/txnscope/internal/escape"
	"github.com/txnscope/txnscope/internal/testutil/uitest"
	"github.com/txnscope/txnscope/model"
)

// hostile are strings whoever runs a producer (or a consumer group) may
// choose: Kafka takes any bytes.
var hostile = []string{
	"bad\xffutf8",
	"raw-c1\x9b31m",
	"nul\x00byte",
	"esc\x1b]0;pwned\x07",
	"crlf\r\nforged 1",
	"nel\u0085c1",
	"csi\u009b2J",
	`quote"d`,
	`back\slash`,
	"a\x1b", // ESC
	`a\x1b`, // a backslash and "x1b": must not print as the one above
	"bidi\u202egnp",
	strings.Repeat("\xff\x1b", 16<<10), // 32 KB
}

// hostileSnapshot has, for each hostile h, an open Flink transaction h-0-1
// (job h) pinning partition 0 of topic t-h, where the read_committed group
// g-h is stuck, and an open transaction named h itself (job other). One id
// is in a state no broker should send.
func hostileSnapshot(at time.Time) *model.Snapshot {
	s := &model.Snapshot{TakenAt: at, Bootstrap: "127.0.0.1:9092", Brokers: 1}
	for i, h := range hostile {
		pid := int64(100 + 2*i)
		tp := model.TopicPartition{Topic: "t-" + h, Partition: 0}
		s.Txns = append(s.Txns,
			model.Txn{ID: h + "-0-1", State: model.Ongoing, ProducerID: pid, TimeoutMs: 60000, Described: true,
				StartUnixMs: at.Add(-30 * time.Second).UnixMilli(), Partitions: []model.TopicPartition{tp}},
			model.Txn{ID: h, State: model.Ongoing, ProducerID: pid + 1, TimeoutMs: 60000, Described: true,
				StartUnixMs: at.Add(-10 * time.Second).UnixMilli()})
		s.Partitions = append(s.Partitions, model.Partition{TopicPartition: tp, HighWatermark: 1000, LastStableOffset: 400,
			Producers: []model.Producer{{ProducerID: pid, CurrentTxnStartOffset: 400, LastWriteMs: model.WriteMs(at)}}})
		s.GroupCommits = append(s.GroupCommits, model.GroupCommit{Group: "g-" + h, State: "Stable", TopicPartition: tp, Offset: 400})
	}
	s.Txns = append(s.Txns, model.Txn{ID: "odd-state", State: hostileState, ProducerID: 99, Described: true})
	model.SortGroupCommits(s.GroupCommits)
	s.Sort()
	return s
}

var hostileState = model.StateOf("Ongo\xffing\r\n")

// scrapeHTTP GETs /metrics from the exporter's handler over real HTTP.
func scrapeHTTP(t *testing.T, e *Exporter, accept string) []byte {
	t.Helper()
	srv := httptest.NewServer(e.Handler())
	defer srv.Close()
	req, err := http.NewRequest("GET", srv.URL+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	if err != nil || r.StatusCode != 200 {
		t.Fatalf("GET /metrics: %d %v\n%s", r.StatusCode, err, b)
	}
	return b
}

// rawBytes reports what a terminal could act on: bytes that are not UTF-8,
// controls other than the newline, DEL and C1 controls.
func rawBytes(t *testing.T, page []byte) {
	t.Helper()
	if !utf8.Valid(page) {
		t.Error("the page is not valid UTF-8")
	}
	for i, r := range string(page) {
		if r < 0x20 && r != '\n' || r == 0x7f || r >= 0x80 && r <= 0x9f {
			t.Errorf("raw %U at byte %d: %q", r, i, page[max(i-40, 0):min(i+40, len(page))])
			return
		}
	}
}

// TestHostileLabels: ids, job prefixes, topics, groups and a state that are
// not UTF-8 or hold controls are served as the TUI shows them (escaped),
// each exactly once, on a page that parses and that promtool accepts, and
// that carries no raw control byte. On d0b993a the first scrape panicked
// in client_golang's collect goroutine and took the process with it.
func TestHostileLabels(t *testing.T) {
	e, a, c := newTest()
	refresh(t, e, a, hostileSnapshot(uitest.T0))
	c.t = uitest.T0.Add(15 * time.Second)
	refresh(t, e, a, hostileSnapshot(c.t))

	page := scrapeHTTP(t, e, "")
	rawBytes(t, page)
	p := expfmt.NewTextParser(pmodel.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(page))
	if err != nil {
		t.Fatalf("the page does not parse: %v", err)
	}
	count := func(fam string, want map[string]string) int {
		n := 0
		for _, m := range fams[fam].GetMetric() {
			if hasLabels(m, want) {
				n++
			}
		}
		return n
	}
	for _, h := range hostile {
		name := escape.Text(h)
		if len(name) > 60 {
			name = name[:60] + "…"
		}
		for _, tc := range []struct {
			fam    string
			labels map[string]string
		}{
			{"txnscope_transaction_open_age_seconds", map[string]string{"transactional_id": escape.Text(h + "-0-1"), "txn_job": escape.Text(h)}},
			{"txnscope_transaction_open_age_seconds", map[string]string{"transactional_id": escape.Text(h), "txn_job": "other"}},
			{"txnscope_transaction_open_timeout_ratio", map[string]string{"transactional_id": escape.Text(h + "-0-1"), "txn_job": escape.Text(h)}},
			{"txnscope_job_open_timeout_ratio_max", map[string]string{"txn_job": escape.Text(h), "family": "flink"}},
			{"txnscope_partition_pinned_seconds", map[string]string{"topic": escape.Text("t-" + h), "partition": "0"}},
			{"txnscope_partition_records_held_back", map[string]string{"topic": escape.Text("t-" + h), "partition": "0"}},
			{"txnscope_group_stuck_seconds", map[string]string{"group": escape.Text("g-" + h)}},
		} {
			if n := count(tc.fam, tc.labels); n != 1 {
				t.Errorf("%s: %d series for %q, want 1", tc.fam, n, name)
			}
		}
	}
	if n := count("txnscope_transactions", map[string]string{"state": escape.Text(hostileState.String())}); n != 1 {
		t.Errorf("txnscope_transactions: %d series for the odd state, want 1", n)
	}
	if n := len(fams["txnscope_transaction_open_age_seconds"].GetMetric()); n != 2*len(hostile) {
		t.Errorf("%d open transactions served, want %d", n, 2*len(hostile))
	}
	promtoolCheckMetrics(t, page)

	om := scrapeHTTP(t, e, "application/openmetrics-text; version=1.0.0")
	rawBytes(t, om)
	if !bytes.HasSuffix(om, []byte("# EOF\n")) {
		t.Error("the OpenMetrics page does not end in # EOF")
	}
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; ok {
			if v != l.GetValue() {
				return false
			}
			n++
		}
	}
	return n == len(want)
}

// promtoolCheckMetrics runs `promtool check metrics` on page. It skips
// without promtool, except under CI=true, as deploy/prometheus's tests do.
func promtoolCheckMetrics(t *testing.T, page []byte) {
	t.Helper()
	if _, err := exec.LookPath("promtool"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool not found (Debian: apt-get install prometheus)")
		}
		t.Log("promtool not found (Debian: apt-get install prometheus): page not checked")
		return
	}
	cmd := exec.Command("promtool", "check", "metrics")
	cmd.Stdin = bytes.NewReader(page)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// scrapeErrors is txnscope_scrape_errors_total on a fresh scrape.
func scrapeErrors(t *testing.T, e *Exporter) (float64, map[string]*dto.MetricFamily) {
	t.Helper()
	p := expfmt.NewTextParser(pmodel.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(scrapeHTTP(t, e, "")))
	if err != nil {
		t.Fatal(err)
	}
	f := fams["txnscope_scrape_errors_total"]
	if f == nil || len(f.GetMetric()) != 1 {
		t.Fatalf("no txnscope_scrape_errors_total: %v", f)
	}
	return f.GetMetric()[0].GetCounter().GetValue(), fams
}

// TestUnbuildableSeriesDropped: a series that cannot be built (an error,
// or a panic, from the series constructor) is left out and counted; every
// other series is served.
func TestUnbuildableSeriesDropped(t *testing.T) {
	e, a, _ := newTest()
	refresh(t, e, a, uitest.Snapshot(uitest.T0))
	build := e.c.newMetric
	e.c.newMetric = func(d *prometheus.Desc, vt prometheus.ValueType, v float64, labels ...string) (prometheus.Metric, error) {
		switch {
		case slices.Contains(labels, "crashed-job-0-7"):
			return nil, errors.New("cannot build it")
		case slices.Contains(labels, "long-runner"):
			panic("label value is not valid UTF-8")
		}
		return build(d, vt, v, labels...)
	}
	// Each id has an age and a ratio series: 4 left out per scrape.
	for _, want := range []float64{4, 8} {
		n, fams := scrapeErrors(t, e)
		if n != want {
			t.Errorf("txnscope_scrape_errors_total %v, want %v", n, want)
		}
		ids := map[string]bool{}
		for _, m := range fams["txnscope_transaction_open_age_seconds"].GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "transactional_id" {
					ids[l.GetValue()] = true
				}
			}
		}
		if ids["crashed-job-0-7"] || ids["long-runner"] || len(ids) != 4 || !ids["orders-enricher-v1-0-41"] {
			t.Errorf("open ids served: %v", ids)
		}
		if up := fams["txnscope_up"].GetMetric()[0].GetGauge().GetValue(); up != 1 {
			t.Errorf("txnscope_up %v", up)
		}
	}
}

// TestDuplicateSeriesDropped: a series the registry refuses (the same
// labels twice) costs that series, not the page, and is counted.
func TestDuplicateSeriesDropped(t *testing.T) {
	e, _, _ := newTest()
	e.c.st = status{up: true, refreshed: true, last: uitest.T0}
	o := OpenTxn{ID: "twice", Job: "other", Age: time.Minute}
	e.c.v = Values{States: map[model.State]int{model.Ongoing: 2}, Urgent: []OpenTxn{o, o}}
	n, fams := scrapeErrors(t, e)
	if got := len(fams["txnscope_transaction_open_age_seconds"].GetMetric()); n != 0 || got != 1 {
		t.Errorf("first scrape: %d age series, %v errors; want 1 and 0 (counted from the next scrape)", got, n)
	}
	if n, _ := scrapeErrors(t, e); n != 1 {
		t.Errorf("second scrape: %v errors, want 1", n)
	}
}

// TestHealthzEscapesError: /healthz quotes the refresh's error, which may
// quote the cluster: escaped, on one line.
func TestHealthzEscapesError(t *testing.T) {
	e, a, _ := newTest()
	a.Fail(errors.New("describe \"evil\xff\x1b]0;pwned\x07\u009b\": UNKNOWN\r\nforged"))
	e.Refresh(context.Background()) //nolint:errcheck
	code, _, body := get(t, e.Handler(), "/healthz", "")
	want := `no refresh has succeeded yet: describe "evil\xff\x1b]0;pwned\x07\u009b": UNKNOWN` + "\n"
	if code != 503 || body != want {
		t.Errorf("/healthz: %d %q, want %q", code, body, want)
	}
	rawBytes(t, []byte(body))
}
