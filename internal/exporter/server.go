package exporter

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"

	"github.com/txnscope/txnscope/internal/buildinfo"
	"github.com/txnscope/txnscope/internal/escape"
	"github.com/txnscope/txnscope/model"
)

// Admin is the part of kafkaadmin.Client the exporter uses: reading only.
// Nothing that aborts is reachable through it (arch_test.go checks the
// package does not call kafkaadmin's Execute either).
type Admin interface {
	Poll(ctx context.Context, prev *model.Snapshot) (*model.Snapshot, error)
}

// historySize is the UI's: the history of ids each keeps the same.
const historySize = 2000

// Options configure an Exporter.
type Options struct {
	Admin   Admin
	Refresh time.Duration
	// Build names the running binary in txnscope_build_info.
	Build buildinfo.Info
	Now   func() time.Time // nil: time.Now
	// MaxIDSeries is how many open transactions, the nearest their
	// timeout, get series of their own (0: none). The per-job series
	// carry the alerting; these name the id an alert is about.
	MaxIDSeries int
	// LetGo, when set, is told when the exporter has let go of a listing's
	// rows while the log is first read (memlimit.Settle).
	LetGo func()
}

// DefaultMaxIDSeries is --max-id-series' default: the dashboard's top 10,
// and, per job, its most urgent transaction most of the time.
const DefaultMaxIDSeries = 10

// Exporter refreshes as the UI does and serves the result.
type Exporter struct {
	o     Options
	c     *collector
	reg   *prometheus.Registry
	prev  *model.Snapshot
	hist  *model.History
	track *model.PinTracker
	// soon: the first poll only lists (kafkaadmin.Client.Poll), and the
	// next one describes every open id: it runs at once, not an interval
	// later, so that the ages are there by the first scrapes.
	soon bool
	// waitLog: the coordinators' log is being read from its start, and
	// once through hands every row, described. Until then the exporter
	// serves the listing's values and keeps none of its rows (prev is nil),
	// nor a history of them: at 2,000,000 ids the listing's rows held
	// beside the rows the log's reader builds were half the exporter's
	// peak. It refreshes when the log is live, or at most waitLogFor later.
	waitLog bool
	// failures are the failed refreshes in a row, for the backoff.
	failures int
	limits   httpLimits
}

// New makes an exporter with its own registry: the process's default one
// would add Go runtime series nobody asked this tool for.
func New(o Options) *Exporter {
	if o.Now == nil {
		o.Now = time.Now
	}
	e := &Exporter{o: o, c: newCollector(o.Build, o.Now, valuesGrace(o.Refresh)), reg: prometheus.NewRegistry(),
		hist: model.NewHistory(historySize), track: model.NewPinTracker(), limits: defaultHTTPLimits}
	e.reg.MustRegister(e.c)
	return e
}

// Refresh reads the cluster once and makes the result current. A failure
// sets up to 0 and counts an error; the values of the last good refresh
// stay for valuesGrace, with their timestamp telling how old they are.
func (e *Exporter) Refresh(ctx context.Context) error {
	start := e.o.Now()
	next, err := e.o.Admin.Poll(ctx, e.prev)
	if err == nil && next == nil {
		err = errors.New("the cluster returned no snapshot")
	}
	if err != nil {
		e.failures++
		e.c.mu.Lock()
		e.c.st.up, e.c.st.lastErr = false, err.Error()
		e.c.st.errors++
		e.c.mu.Unlock()
		return err
	}
	prev := e.prev
	if prev != nil && next != prev && !next.Source.Log {
		model.ShareStrings(prev, next)
	}
	evs := model.EventsBetween(prev, next)
	if prev == nil {
		e.hist.Baseline(next) // nothing was seen before the first snapshot
	} else {
		e.hist.Add(evs)
		e.hist.Forget(next)
	}
	e.track.Observe(next)
	now := e.o.Now()
	v := Compute(next, e.hist, e.track, now)
	v.Urgent = Urgent(v.Open, e.o.MaxIDSeries)
	e.prev = next
	e.failures = 0
	e.soon = prev == nil && openPending(next)
	e.waitLog = next.Source.Reading && !e.soon
	if e.waitLog {
		e.prev, e.hist = nil, model.NewHistory(historySize)
		if e.o.LetGo != nil {
			e.o.LetGo()
		}
	}
	e.c.mu.Lock()
	e.c.v = v
	e.c.counters.Add(evs)
	e.c.st = status{up: true, took: now.Sub(start), errors: e.c.st.errors, last: now, refreshed: true}
	e.c.mu.Unlock()
	return nil
}

func openPending(s *model.Snapshot) bool {
	for i := range s.Txns {
		if s.Txns[i].Pending && s.Txns[i].State.Open() {
			return true
		}
	}
	return false
}

// valuesGrace is how long the values of the last good refresh are served
// while refreshes fail, after which only up, the error and fence counters,
// build_info and the last refresh's time and duration are. Long enough
// that failed refreshes (retried at most 30 s apart, see backoff) do not
// make the alerts flap, and that TxnscopeDown (up == 0 for 2 minutes, plus
// up to a default 1-minute rule evaluation) pages that the alerts are
// blind before they resolve for want of values: 5 minutes, Prometheus'
// own lookback for a series with no new sample. At least 3
// intervals, so that one failed refresh never drops them either. Not
// longer: frozen ages and ratios would keep an alert firing, or keep one
// from firing, on what the cluster looked like hours ago.
func valuesGrace(refresh time.Duration) time.Duration {
	return max(3*refresh, 5*time.Minute)
}

// waitLogFor bounds the wait for the log's first read: the values stay
// those of the listing, and /healthz calls them stale after 3 intervals.
func waitLogFor(refresh time.Duration) time.Duration { return 2 * refresh }

// logFollower is an Admin following the coordinators' log
// (kafkaadmin.Client.LogLive): once read, a refresh makes history exact.
type logFollower interface{ LogLive() <-chan struct{} }

// Run refreshes every interval until ctx ends. A failed refresh is tried
// again at the next interval: a broker gone away is never fatal.
func (e *Exporter) Run(ctx context.Context) {
	var live <-chan struct{}
	if l, ok := e.o.Admin.(logFollower); ok {
		live = l.LogLive()
	}
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-live:
			live = nil
		case <-t.C:
		}
		e.Refresh(ctx) //nolint:errcheck // counted in the metrics, told by /healthz
		switch {
		case e.soon:
			t.Reset(0)
		case e.failures > 0:
			t.Reset(backoff(e.o.Refresh, e.failures))
		case e.waitLog:
			t.Reset(waitLogFor(e.o.Refresh))
		default:
			t.Reset(e.o.Refresh)
		}
	}
}

// maxBackoff caps the wait between refreshes while they fail, as the UI's.
const maxBackoff = 30 * time.Second

// backoff is the wait after n failed refreshes in a row: the interval,
// doubled from the second failure on, up to maxBackoff (or the interval,
// when that is longer). A struggling cluster is not scanned back to back,
// and /healthz, which allows 3 intervals, turns 503 meanwhile.
func backoff(interval time.Duration, n int) time.Duration {
	d := interval
	for i := 1; i < n && d < maxBackoff; i++ {
		d *= 2
	}
	return max(min(d, maxBackoff), interval)
}

// Handler serves /metrics and /healthz.
func (e *Exporter) Handler() http.Handler {
	mux := http.NewServeMux()
	// ContinueOnError: a series the registry refuses (one collected twice)
	// is left out of the page, not the whole page replaced by a 500 that
	// would blind every alert.
	mux.Handle("/metrics", promhttp.HandlerFor(prometheus.GathererFunc(e.gather),
		promhttp.HandlerOpts{EnableOpenMetrics: true, ErrorHandling: promhttp.ContinueOnError}))
	mux.HandleFunc("/healthz", e.healthz)
	return mux
}

// gather is the registry's, counting the series it refused in
// txnscope_scrape_errors_total (served from the next scrape on).
func (e *Exporter) gather() ([]*dto.MetricFamily, error) {
	mfs, err := e.reg.Gather()
	if err != nil {
		n := 1
		var m prometheus.MultiError
		if errors.As(err, &m) {
			n = len(m)
		}
		e.c.mu.Lock()
		e.c.dropped += float64(n)
		e.c.mu.Unlock()
	}
	return mfs, err
}

// healthz is ok while a refresh succeeded within 3 intervals.
func (e *Exporter) healthz(w http.ResponseWriter, _ *http.Request) {
	reason := e.unhealthy()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if reason == "" {
		// A broker that does not answer leaves the rest readable: the
		// exporter is not down, and a probe that restarts it would not help.
		fmt.Fprintln(w, cmp.Or(e.degraded(), "ok"))
		return
	}
	w.WriteHeader(http.StatusServiceUnavailable)
	fmt.Fprintln(w, reason)
}

func (e *Exporter) unhealthy() string {
	e.c.mu.Lock()
	st := e.c.st
	e.c.mu.Unlock()
	why := ""
	if st.lastErr != "" {
		// The error may quote the cluster's strings: escaped, as on /metrics.
		why = ": " + escape.Line(oneLine(st.lastErr))
	}
	if !st.refreshed {
		return "no refresh has succeeded yet" + why
	}
	if ago := e.o.Now().Sub(st.last); ago > 3*e.o.Refresh {
		return fmt.Sprintf("the last successful refresh was %s ago (refresh every %s)%s", ago.Round(time.Second), e.o.Refresh, why)
	}
	return ""
}

// degraded says which brokers the last refresh could not read ("" when it
// read them all, or when its values are not served).
func (e *Exporter) degraded() string {
	e.c.mu.Lock()
	defer e.c.mu.Unlock()
	u := e.c.v.Unanswered
	if len(u) == 0 || !e.c.st.up {
		return ""
	}
	why := make([]string, len(u))
	for i, b := range u {
		why[i] = fmt.Sprintf("broker %d: %s", b.ID, b.Err)
	}
	return "degraded: " + model.UnansweredText(u) + " not answering (" + escape.Line(oneLine(strings.Join(why, "; "))) + ")"
}

func oneLine(s string) string {
	for i, r := range s {
		if r == '\n' || r == '\r' {
			return s[:i]
		}
	}
	return s
}

// Serve refreshes and serves on ln until ctx ends, then lets the scrapes in
// flight finish (5 s at most). Connections are capped and timed out
// (httpLimits).
func (e *Exporter) Serve(ctx context.Context, ln net.Listener) error {
	lim := limitConns(ln, e.limits.conns)
	srv := e.limits.server(e.Handler(), lim)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.Run(ctx)
	}()
	stopped := make(chan error, 1)
	go func() {
		<-ctx.Done()
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		stopped <- srv.Shutdown(sctx)
	}()
	err := srv.Serve(lim)
	cancel()
	<-done
	if errors.Is(err, http.ErrServerClosed) {
		return <-stopped
	}
	return err
}
