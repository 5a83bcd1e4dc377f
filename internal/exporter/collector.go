package exporter

import (
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/txnscope/txnscope/internal/buildinfo"
	"github.com/txnscope/txnscope/internal/escape"
)

const ns = "txnscope_"

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(ns+name, help, labels, nil)
}

var (
	upDesc          = desc("up", "1 when the last refresh of the cluster succeeded, else 0.")
	durationDesc    = desc("refresh_duration_seconds", "How long the last successful refresh took.")
	errorsDesc      = desc("refresh_errors_total", "Refreshes that failed since the exporter started.")
	lastDesc        = desc("last_refresh_timestamp_seconds", "When the last successful refresh ended, in Unix seconds.")
	buildDesc       = desc("build_info", "Always 1; the labels name the build: its module version, VCS revision and time, whether the checkout was dirty, and Go's version.", "version", "revision", "vcs_time", "dirty", "goversion")
	statesDesc      = desc("transactions", "Transactions the coordinators list, by state.", "state")
	ageDesc         = desc("transaction_open_age_seconds", "Age of an open transaction (the --max-id-series nearest their timeout only).", "transactional_id", "txn_job")
	ratioDesc       = desc("transaction_open_timeout_ratio", "Age of an open transaction divided by its timeout (the --max-id-series nearest their timeout only).", "transactional_id", "txn_job")
	jobOpenDesc     = desc("job_open_transactions", "A job's open transactions.", "txn_job", "family")
	jobOldestDesc   = desc("job_oldest_open_age_seconds", "Age of a job's oldest open transaction (jobs with one open only).", "txn_job", "family")
	oldestDesc      = desc("oldest_open_transaction_age_seconds", "Age of the oldest open transaction, 0 when none is open.")
	lingerDesc      = desc("job_lingering_transactions", "Open transactions a job's crashed attempts left behind.", "txn_job", "family")
	jobRatioDesc    = desc("job_open_timeout_ratio_max", "The largest age ÷ timeout of a job's open transactions.", "txn_job", "family")
	sinceCommitDesc = desc("job_seconds_since_last_commit", "Seconds since one of the job's ids was last seen to commit.", "txn_job", "family")
	fencesDesc      = desc("job_fences_total", "A job's transactions another producer ended (fenced, force-terminated) seen since the exporter started.", "txn_job", "family")
	timeoutsDesc    = desc("job_timeouts_total", "A job's transactions the coordinator aborted at transaction.timeout.ms seen since the exporter started.", "txn_job", "family")
	abortsDesc      = desc("job_aborts_total", "Aborts of a job's transactions seen since the exporter started.", "txn_job", "family")
	pinnedForDesc   = desc("partition_pinned_seconds", "How long a partition's LSO has been pinned (pinned partitions only).", "topic", "partition")
	heldDesc        = desc("partition_records_held_back", "Records between a pinned partition's LSO and its high watermark.", "topic", "partition")
	pinnedDesc      = desc("partitions_pinned", "Partitions whose LSO an open transaction holds below the high watermark.")
	hangingDesc     = desc("partitions_hanging", "Pinned partitions no coordinator will ever release.")
	stuckDesc       = desc("group_stuck_seconds", "How long a read_committed consumer group has waited at a pinned LSO (stuck groups only); group_type classic, consumer, share or streams.", "group", "group_type")
	epochDesc       = desc("job_producer_epoch_max", "The highest producer epoch of a job's ids: under transaction version 2 every end bumps it, and the end at 32766 rotates the producer id.", "txn_job", "family")
	rotationDesc    = desc("job_epoch_rotation_seconds", "Seconds until the first of a job's ids runs out of epochs and its producer id rotates, at the epoch's recent rate (jobs whose epoch rises only).", "txn_job", "family")
	sharedDesc      = desc("prefix_shared", "1 while two jobs take over one transactional id prefix.", "txn_job")
	problemDesc     = desc("job_problem", "1 while the jobs view shows this problem for the job (its kind as in snapshot -o json).", "txn_job", "family", "kind")
	unknownDesc     = desc("unknown", "1 while txnscope cannot know this of the cluster (ACLs, or an API the brokers lack), else 0: the other series say nothing of it.", "what")
	silentDesc      = desc("brokers_unanswered", "Brokers that did not answer the last refresh: what they hold is missing or last known (/healthz says degraded).")
	droppedDesc     = desc("scrape_errors_total", "Series left out of a scrape because they could not be built: a bug, please report it.")
)

// status is how the refreshes go, besides their values.
type status struct {
	up        bool
	took      time.Duration
	errors    float64
	last      time.Time // the last successful refresh
	lastErr   string
	refreshed bool // a refresh succeeded once: the values are real
}

// collector serves the latest refresh's values. The refresh loop swaps them
// in under mu; a scrape reads them under it and never waits on the cluster.
type collector struct {
	mu       sync.Mutex
	v        Values
	counters *Counters
	st       status
	build    buildinfo.Info
	now      func() time.Time
	// grace is how long the values of the last good refresh are served
	// while refreshes fail (valuesGrace).
	grace time.Duration
	// dropped counts the series that could not be built, since the start.
	dropped float64
	// newMetric makes one series: prometheus.NewConstMetric, but for tests.
	newMetric func(*prometheus.Desc, prometheus.ValueType, float64, ...string) (prometheus.Metric, error)
}

func newCollector(build buildinfo.Info, now func() time.Time, grace time.Duration) *collector {
	return &collector{counters: NewCounters(), build: build, now: now, grace: grace, newMetric: prometheus.NewConstMetric}
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{upDesc, durationDesc, errorsDesc, lastDesc, buildDesc, statesDesc,
		ageDesc, ratioDesc, jobOpenDesc, jobOldestDesc, oldestDesc, lingerDesc, jobRatioDesc, sinceCommitDesc, fencesDesc, timeoutsDesc, abortsDesc,
		pinnedForDesc, heldDesc, pinnedDesc, hangingDesc, stuckDesc, epochDesc, rotationDesc, sharedDesc, problemDesc, unknownDesc, silentDesc, droppedDesc} {
		ch <- d
	}
}

// Collect runs in client_golang's own goroutine, where a panic would end
// the process: a series that cannot be built is left out and counted, and
// one bad value costs that series, never the exporter.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.collect(ch)
	c.send(ch, droppedDesc, prometheus.CounterValue, c.dropped)
}

func (c *collector) collect(ch chan<- prometheus.Metric) {
	defer func() {
		if r := recover(); r != nil {
			c.dropped++ // the rest of this scrape is lost, not the process
		}
	}()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		c.send(ch, d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		c.send(ch, d, prometheus.CounterValue, v, labels...)
	}
	fresh := c.st.refreshed && c.now().Sub(c.st.last) <= c.grace
	gauge(upDesc, b2f(c.st.up && fresh))
	counter(errorsDesc, c.st.errors)
	gauge(buildDesc, 1, c.build.Version, c.build.Revision, c.build.Time, strconv.FormatBool(c.build.Dirty), runtime.Version())
	for k, n := range c.counters.Fences {
		counter(fencesDesc, n, k.Job, k.Family)
	}
	for k, n := range c.counters.Timeouts {
		counter(timeoutsDesc, n, k.Job, k.Family)
	}
	for k, n := range c.counters.Aborts {
		counter(abortsDesc, n, k.Job, k.Family)
	}
	if !c.st.refreshed {
		return // no values yet: no zeros that would read as "all is well"
	}
	gauge(durationDesc, c.st.took.Seconds())
	gauge(lastDesc, float64(c.st.last.UnixMilli())/1000)
	if !fresh {
		return // too old to alert on: see valuesGrace
	}
	c.collectValues(gauge)
}

// send builds one series and sends it, or counts it dropped. Label values
// come from the cluster (ids, jobs, topics, groups, states): they are
// escaped as the TUI shows them, so that the page is valid UTF-8 without a
// raw control byte for `curl | grep` to pass on to a terminal, and two ids
// never share a series (the escape writes a backslash as \\).
func (c *collector) send(ch chan<- prometheus.Metric, d *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) {
	for i, l := range labels {
		labels[i] = escape.Text(l)
	}
	m, err := c.safeBuild(d, t, v, labels)
	if err != nil {
		c.dropped++
		return
	}
	ch <- m
}

func (c *collector) safeBuild(d *prometheus.Desc, t prometheus.ValueType, v float64, labels []string) (m prometheus.Metric, err error) {
	defer func() {
		if r := recover(); r != nil {
			m, err = nil, fmt.Errorf("building a series panicked: %v", r)
		}
	}()
	return c.newMetric(d, t, v, labels...)
}

func (c *collector) collectValues(gauge func(*prometheus.Desc, float64, ...string)) {
	v := &c.v
	for st, n := range v.States {
		gauge(statesDesc, float64(n), st.String())
	}
	for _, o := range v.Urgent {
		gauge(ageDesc, o.Age.Seconds(), o.ID, o.Job)
		if o.HasRatio {
			gauge(ratioDesc, o.Ratio, o.ID, o.Job)
		}
	}
	gauge(oldestDesc, v.OldestOpen.Seconds())
	shared := map[string]bool{}
	for _, j := range v.Jobs {
		gauge(jobOpenDesc, float64(j.Open), j.Job, j.Family)
		if j.HasOldest {
			gauge(jobOldestDesc, j.OldestOpen.Seconds(), j.Job, j.Family)
		}
		gauge(lingerDesc, float64(j.Lingering), j.Job, j.Family)
		if j.HasRatio {
			gauge(jobRatioDesc, j.MaxRatio, j.Job, j.Family)
		}
		if j.HasCommit {
			gauge(sinceCommitDesc, j.SinceCommit.Seconds(), j.Job, j.Family)
		}
		if j.HasEpoch {
			gauge(epochDesc, float64(j.Epoch), j.Job, j.Family)
		}
		if j.HasRotation {
			gauge(rotationDesc, j.ToRotation.Seconds(), j.Job, j.Family)
		}
		for _, k := range j.Problems {
			gauge(problemDesc, 1, j.Job, j.Family, string(k))
		}
		if j.Shared && !shared[j.Job] {
			shared[j.Job] = true
			gauge(sharedDesc, 1, j.Job)
		}
	}
	for _, p := range v.Pins {
		part := strconv.Itoa(int(p.Partition))
		gauge(pinnedForDesc, p.PinnedFor.Seconds(), p.Topic, part)
		gauge(heldDesc, float64(p.HeldBack), p.Topic, part)
	}
	gauge(pinnedDesc, float64(v.Pinned))
	gauge(hangingDesc, float64(v.Hanging))
	for _, g := range v.Groups {
		gauge(stuckDesc, g.StuckFor.Seconds(), g.Group, g.Type)
	}
	for _, what := range Unknowable {
		gauge(unknownDesc, b2f(v.Unknown[what]), what)
	}
	gauge(silentDesc, float64(len(v.Unanswered)))
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
