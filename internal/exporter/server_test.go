package exporter

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/buildinfo"
	"github.com/txnscope/txnscope/internal/testutil/uitest"
	"github.com/txnscope/txnscope/model"
)

func get(t *testing.T, h http.Handler, path, accept string) (int, string, string) {
	t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	b, _ := io.ReadAll(rec.Body)
	return rec.Code, rec.Header().Get("Content-Type"), string(b)
}

// TestMetricsFormats: /metrics answers Prometheus text by default and
// OpenMetrics when asked, with the same series.
func TestMetricsFormats(t *testing.T) {
	e, a, _ := newTest()
	refresh(t, e, a, uitest.Snapshot(uitest.T0))
	line := `txnscope_transaction_open_age_seconds{transactional_id="crashed-job-0-7",txn_job="crashed-job"} 70`
	cases := []struct {
		name, accept, ctype string
		has                 []string
	}{
		{"text", "", "text/plain; version=0.0.4", []string{line, "# TYPE txnscope_refresh_errors_total counter", "txnscope_up 1"}},
		{"openmetrics", "application/openmetrics-text; version=1.0.0", "application/openmetrics-text",
			[]string{line, "# TYPE txnscope_refresh_errors counter", "txnscope_refresh_errors_total 0", "txnscope_up 1", "# EOF"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, ctype, body := get(t, e.Handler(), "/metrics", tc.accept)
			if code != 200 || !strings.HasPrefix(ctype, tc.ctype) {
				t.Fatalf("%d %q", code, ctype)
			}
			for _, s := range tc.has {
				if !strings.Contains(body, s) {
					t.Errorf("no %q in\n%s", s, body)
				}
			}
		})
	}
}

// TestHealthAndFailures: /healthz is ok while a refresh succeeded within 3
// intervals; a failing cluster sets up to 0, counts errors, keeps the last
// values, and is tried again.
func TestHealthAndFailures(t *testing.T) {
	e, a, c := newTest()
	a.Fail(errors.New("dial tcp 127.0.0.1:9092: connection refused"))
	if e.Refresh(context.Background()) == nil {
		t.Fatal("no error")
	}
	code, _, body := get(t, e.Handler(), "/healthz", "")
	if code != 503 || body != "no refresh has succeeded yet: dial tcp 127.0.0.1:9092: connection refused\n" {
		t.Errorf("before any success: %d %q", code, body)
	}
	s := series(t, e)
	if s["txnscope_up"] != 0 || s["txnscope_refresh_errors_total"] != 1 || len(named(s, "txnscope_transactions")) != 0 {
		t.Errorf("before any success: %v", s)
	}

	refresh(t, e, a, uitest.Snapshot(uitest.T0))
	if code, _, body := get(t, e.Handler(), "/healthz", ""); code != 200 || body != "ok\n" {
		t.Errorf("after a success: %d %q", code, body)
	}

	a.Fail(errors.New("broker went away"))
	for range 3 {
		c.t = c.t.Add(15 * time.Second)
		e.Refresh(context.Background()) //nolint:errcheck
	}
	if code, _, _ := get(t, e.Handler(), "/healthz", ""); code != 200 {
		t.Errorf("3 intervals after the last success: %d, want 200", code)
	}
	c.t = c.t.Add(time.Second)
	code, _, body = get(t, e.Handler(), "/healthz", "")
	if code != 503 || body != "the last successful refresh was 46s ago (refresh every 15s): broker went away\n" {
		t.Errorf("past 3 intervals: %d %q", code, body)
	}
	s = series(t, e)
	if s["txnscope_up"] != 0 || s["txnscope_refresh_errors_total"] != 4 || s[`txnscope_transactions{state="Ongoing"}`] != 6 {
		t.Errorf("failing: up %v errors %v ongoing %v", s["txnscope_up"], s["txnscope_refresh_errors_total"], s[`txnscope_transactions{state="Ongoing"}`])
	}
}

// TestServeShutsDown: Serve refreshes at once, serves, and returns when
// its context ends.
func TestServeShutsDown(t *testing.T) {
	a := &uitest.Admin{}
	a.Push(uitest.Snapshot(uitest.T0))
	e := New(Options{Admin: a, Refresh: time.Hour, Build: buildinfo.Info{Version: "v"}, MaxIDSeries: 100})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Serve(ctx, ln) }()
	url := "http://" + ln.Addr().String() + "/healthz"
	deadline := time.Now().Add(5 * time.Second)
	for {
		r, err := http.Get(url)
		if err == nil {
			r.Body.Close()
			if r.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("not healthy: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
}

// TestFirstPollDescribedAtOnce: the first poll lists an open id without
// describing it; the exporter polls again at once, not an interval (an hour
// here) later, so its age is served.
func TestFirstPollDescribedAtOnce(t *testing.T) {
	a := &uitest.Admin{}
	listed := uitest.Snapshot(uitest.T0)
	for i := range listed.Txns {
		listed.Txns[i].Pending, listed.Txns[i].StartUnixMs = true, 0
	}
	a.Push(listed)
	a.Push(uitest.Snapshot(uitest.T0))
	e := New(Options{Admin: a, Refresh: time.Hour, Build: buildinfo.Info{Version: "v"}, Now: func() time.Time { return uitest.T0 }, MaxIDSeries: 100})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.Run(ctx) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(5 * time.Second)
	for len(named(series(t, e), "txnscope_transaction_open_age_seconds")) != 6 {
		if time.Now().After(deadline) {
			t.Fatalf("no ages after the first poll: %v", named(series(t, e), "txnscope_transaction_open_age_seconds"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestBackoff(t *testing.T) {
	for _, tc := range []struct {
		interval time.Duration
		n        int
		want     time.Duration
	}{
		{15 * time.Second, 1, 15 * time.Second},
		{15 * time.Second, 2, 30 * time.Second},
		{15 * time.Second, 9, 30 * time.Second},
		{2 * time.Second, 3, 8 * time.Second},
		{2 * time.Second, 40, 30 * time.Second},
		{time.Minute, 5, time.Minute}, // never shorter than the interval
	} {
		if got := backoff(tc.interval, tc.n); got != tc.want {
			t.Errorf("backoff(%s, %d) = %s, want %s", tc.interval, tc.n, got, tc.want)
		}
	}
}

// TestValuesWithdrawnAfterGrace: while refreshes fail, the last good
// values are served for 5 minutes (alerts do not flap on a failed refresh,
// and TxnscopeDown pages first), then only the exporter's own series are:
// no alert fires, or stays firing, on what the cluster looked like long
// ago. The next good refresh brings them back. A refresh that never ends
// withdraws them too, with up 0.
func TestValuesWithdrawnAfterGrace(t *testing.T) {
	e, a, c := newTest()
	refresh(t, e, a, uitest.Snapshot(uitest.T0))
	last := c.t
	for i := range 12 { // a failure every 30 s, as the backoff tries
		c.t = c.t.Add(30 * time.Second)
		a.Fail(errors.New("broker went away"))
		if e.Refresh(context.Background()) == nil {
			t.Fatalf("refresh %d: no error", i)
		}
		c.t = c.t.Add(-5 * time.Second) // a scrape in between
		s := series(t, e)
		if c.t.Sub(last) <= 5*time.Minute {
			if s["txnscope_up"] != 0 || s[`txnscope_transactions{state="Ongoing"}`] != 6 || len(named(s, "txnscope_transaction_open_age_seconds")) != 6 {
				t.Errorf("%s after the last good refresh: the last values should still be served: %v", c.t.Sub(last), s)
			}
		}
		c.t = c.t.Add(5 * time.Second)
	}
	c.t = last.Add(5*time.Minute + time.Second)
	s := series(t, e)
	kept := []string{"txnscope_up", "txnscope_refresh_errors_total", "txnscope_build_info", "txnscope_last_refresh_timestamp_seconds",
		"txnscope_refresh_duration_seconds", "txnscope_scrape_errors_total"}
	var stale []string
	for k := range s {
		if !slices.ContainsFunc(kept, func(n string) bool { return k == n || strings.HasPrefix(k, n+"{") }) {
			stale = append(stale, k)
		}
	}
	if len(stale) > 0 {
		slices.Sort(stale)
		t.Errorf("5m1s after the last good refresh, %d series of the cluster are still served, e.g. %s", len(stale), stale[0])
	}
	if s["txnscope_up"] != 0 || s["txnscope_refresh_errors_total"] != 12 || s["txnscope_last_refresh_timestamp_seconds"] != float64(last.Unix()) {
		t.Errorf("5m1s after the last good refresh: %v", s)
	}

	refresh(t, e, a, uitest.Snapshot(c.t))
	if s := series(t, e); s["txnscope_up"] != 1 || s[`txnscope_transactions{state="Ongoing"}`] != 6 {
		t.Errorf("after a good refresh: %v", s)
	}

	// No refresh at all (one hangs): the values go, and up says so.
	c.t = c.t.Add(5*time.Minute + time.Second)
	if s := series(t, e); s["txnscope_up"] != 0 || len(named(s, "txnscope_transactions")) != 0 {
		t.Errorf("5m1s without a refresh: up %v, %d state series", s["txnscope_up"], len(named(s, "txnscope_transactions")))
	}
}

// TestHealthDegraded: a refresh that one broker of three did not answer is
// served as it is: /healthz stays 200 and names the broker, and
// txnscope_brokers_unanswered counts it, until a refresh reads them all.
func TestHealthDegraded(t *testing.T) {
	e, a, _ := newTest()
	s := uitest.Snapshot(uitest.T0)
	s.Unanswered = []model.BrokerError{{ID: 2, Err: "no answer within the timeout"}}
	refresh(t, e, a, s)
	code, _, body := get(t, e.Handler(), "/healthz", "")
	if want := "degraded: broker 2 not answering (broker 2: no answer within the timeout)\n"; code != 200 || body != want {
		t.Errorf("one broker silent: %d %q, want 200 %q", code, body, want)
	}
	if v := series(t, e)["txnscope_brokers_unanswered"]; v != 1 {
		t.Errorf("txnscope_brokers_unanswered %v, want 1", v)
	}
	refresh(t, e, a, uitest.Snapshot(uitest.T0.Add(time.Second)))
	if code, _, body := get(t, e.Handler(), "/healthz", ""); code != 200 || body != "ok\n" {
		t.Errorf("all answering again: %d %q", code, body)
	}
	if v := series(t, e)["txnscope_brokers_unanswered"]; v != 0 {
		t.Errorf("txnscope_brokers_unanswered %v, want 0", v)
	}
}

// TestBuildInfo: txnscope_build_info names the build as --version does.
func TestBuildInfo(t *testing.T) {
	b := buildinfo.Info{Version: "v0.0.0-20261202093000-8bc499a1c2d3", Revision: "8bc499a1c2d3e4f5", Time: "2026-12-02T09:30:00Z", Dirty: true}
	e := New(Options{Admin: &uitest.Admin{}, Refresh: time.Minute, Build: b})
	got := named(series(t, e), "txnscope_build_info")
	want := `txnscope_build_info{dirty="true",goversion="` + runtime.Version() + `",revision="8bc499a1c2d3e4f5",vcs_time="2026-12-02T09:30:00Z",version="v0.0.0-20261202093000-8bc499a1c2d3"}`
	if len(got) != 1 || got[want] != 1 {
		t.Errorf("build info %v, want %s", got, want)
	}
}
