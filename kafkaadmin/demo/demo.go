// Package demo runs an embedded kfake cluster with transactional workloads that
// look like Flink KafkaSink jobs, healthy and in trouble, so txnscope has
// something to show without a real cluster.
//
// The cluster has three brokers on free 127.0.0.1 ports and speaks Kafka 3.9
// (one producer epoch per session, so an epoch bump means fencing or a
// timeout). Topics: orders (the enricher's input, left empty) and
// orders-enriched with 6 partitions; sessions with 4; payments, inventory and
// reports with 3. Checkpoint numbers come from the wall clock, checkpoint 1
// completing at Start. With the defaults, the jobs view shows one job of each
// kind:
//
//   - clicks-sessionizer-v2, parallelism 4, ids
//     clicks-sessionizer-v2-<subtask>-<N>, writes sessions and commits every
//     checkpoint, every 2 s (timeout 60 s): healthy.
//   - orders-enricher-v1, parallelism 4, writes orders-enriched and commits
//     every checkpoint; a second job started with the same prefix,
//     parallelism 1, takes the same ids as its subtask 0, and whichever opens
//     an id last fences the other; the fenced side restores at the next
//     checkpoint: a prefix shared by two jobs.
//   - payments-dedup-v3, parallelism 3, writes payments; its subtask 2
//     commits each checkpoint 3 checkpoints late and aborts every checkpoint
//     divisible by 3: one subtask behind.
//   - inventory-sync-v7, parallelism 2, writes inventory with a 3 min timeout
//     (CrashTimeout); it crashes with its transactions open on checkpoint 3
//     and every 4 min after, and restarts 3 checkpoints later: the crash's
//     transactions linger, pinning their partitions, until the coordinator
//     aborts them at their timeout.
//   - reports-backfill-0-1 keeps one transaction open on one partition of
//     reports for 15 min (LongTimeout), pinning its LSO, adding a record every
//     10 s; once aborted (timeout or force-terminate) it opens a new one 30 s
//     later. A reporting service publishes committed records to reports,
//     that partition included, every two checkpoint intervals, without a
//     transaction.
//
// Three consumer groups read with isolation.level=read_committed and commit
// what they read: reports-loader (reports) waits at the backfill's pinned LSO
// and moves on when it is aborted; orders-indexer (orders-enriched) keeps up;
// inventory-projector (inventory) waits behind inventory-sync-v7's lingering
// transactions until the coordinator aborts them.
//
// Ids expire 60 checkpoint intervals after their last use (2 min by
// default): about 13 new ids a checkpoint, so the cluster holds about 800.
// Each topic keeps its records for twice the timeout of the transactions
// that write it (2 min for the busy ones, 30 min for reports).
package demo

import (
	"context"
	"fmt"
	"io"
	"log"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kversion"
)

// Options tunes the demo. The zero value gives the defaults a person watching
// the TUI wants; tests shrink the durations.
type Options struct {
	// Log receives workload errors and notes (never stdout; main passes a file or io.Discard).
	Log io.Writer
	// Speed-ups for tests, zero = defaults.
	CheckpointInterval time.Duration // default 2s
	CrashTimeout       time.Duration // default 3m (the crashing job's transaction.timeout.ms); at least 10 checkpoint intervals
	LongTimeout        time.Duration // default 15m (the long open transaction)

	// idExpiration overrides transactional.id.expiration.ms (zero: 60
	// checkpoint intervals), for tests that watch ids expire.
	idExpiration time.Duration
}

// Stats counts what the workloads went through since Start.
type Stats struct {
	Commits int64 // transactions committed
	Aborts  int64 // transactions aborted on purpose (payments-dedup-v3's subtask 2's failed checkpoints)
	// Fenced counts fenced errors seen by the first orders-enricher-v1 job,
	// FencedDuplicate those seen by the second job started with the same prefix.
	Fenced          int64
	FencedDuplicate int64
	Crashed         int64 // transactions inventory-sync-v7 left open when it crashed (they linger)
	Reopened        int64 // times reports-backfill-0-1 found its transaction aborted and opened a new one
	Consumed        int64 // records the consumer groups read
	Errors          int64 // any other workload error (all logged)
}

type counters struct {
	commits, aborts, fenced, fencedDup, crashed, reopened, consumed, errors atomic.Int64
}

// Demo is a running cluster plus its workloads.
type Demo struct {
	opts      Options
	log       *log.Logger
	cluster   *kfake.Cluster
	bootstrap []string
	clock     clock
	limits    limits
	stats     counters

	cancel    context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
}

const (
	defaultCheckpoint = 2 * time.Second
	defaultCrash      = 3 * time.Minute
	defaultLong       = 15 * time.Minute

	minCrashIntervals = 10

	// maxTxnTimeout is Kafka's default transaction.max.timeout.ms.
	maxTxnTimeout = 15 * time.Minute
)

// limits keep a demo that runs for days bounded. They scale with the options,
// so a sped-up demo reaches its steady state just as much sooner.
type limits struct {
	// idExpiration keeps the INCREMENTING ids from piling up (every kfake
	// request walks all ids): 2 min, about 800 ids, at the default pace.
	// It was 10 min (about 3,900 ids): at about 2 KB of heap an id, in the
	// cluster and the UI, the demo's memory rose for its first 10 minutes.
	idExpiration time.Duration
	// retention is each topic's: twice the longest transaction that writes
	// there, so that no open transaction loses its first records to it,
	// and no longer, because kfake holds every record in memory. With one
	// retention for all, the backfill's 30 min, the demo grew by about
	// 2 MB a minute for its first half hour.
	retention      map[string]time.Duration
	retentionCheck time.Duration
	// segmentBytes is small because kfake frees a log only a whole segment
	// at a time: a busy partition fills 16 KiB in under a minute, a quiet
	// one would take days to fill the default 100 MiB.
	segmentBytes int64
}

// retentionMargin is added to every topic's retention: kfake trims by the
// records' own timestamps (CreateTime), and on a loaded machine a record may
// wait in its producer for seconds, or an abort at timeout come late, so
// that twice the transaction's timeout alone once dropped the first records
// of a transaction still open (TestDemoRetention, 2 runs in 8 under CI).
const retentionMargin = 10 * time.Second

func limitsFor(o Options) limits {
	expiration := o.idExpiration
	if expiration <= 0 {
		expiration = 60 * o.CheckpointInterval
	}
	lim := limits{
		idExpiration:   expiration,
		retention:      map[string]time.Duration{},
		retentionCheck: time.Minute,
		segmentBytes:   16 << 10,
	}
	for _, t := range topics(o) {
		r := 2*t.longestTxn + retentionMargin
		lim.retention[t.name] = r
		lim.retentionCheck = min(lim.retentionCheck, r/10)
	}
	return lim
}

// topic is one topic the demo creates.
type topic struct {
	name       string
	partitions int32
	// longestTxn is the timeout of the transactions that write there.
	longestTxn time.Duration
}

func topics(o Options) []topic {
	healthy := healthyTimeout(o)
	return []topic{
		{"orders", 6, healthy}, // the enricher's input, left empty
		{"orders-enriched", 6, healthy},
		{"sessions", 4, healthy},
		{"payments", 3, healthy},
		{"inventory", 3, o.CrashTimeout},
		{"reports", 3, o.LongTimeout},
		{streamsTopic, 4, healthy}, // kept as long as the busy topics: longer than the Streams app's 10 s needs
	}
}

// withDefaults fills in what o leaves zero.
func (o Options) withDefaults() Options {
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.CheckpointInterval <= 0 {
		o.CheckpointInterval = defaultCheckpoint
	}
	if o.CrashTimeout <= 0 {
		o.CrashTimeout = defaultCrash
	}
	if o.LongTimeout <= 0 {
		o.LongTimeout = defaultLong
	}
	return o
}

// Start brings up a three-broker cluster on free 127.0.0.1 ports and starts the
// workloads. They stop when ctx is cancelled or Close is called; Close must be
// called either way to stop the cluster.
func Start(ctx context.Context, o Options) (*Demo, error) {
	o = o.withDefaults()
	if o.LongTimeout > maxTxnTimeout || o.CrashTimeout > maxTxnTimeout {
		return nil, fmt.Errorf("demo: transaction timeouts must not exceed %s", maxTxnTimeout)
	}
	// The crashed job restarts 3 checkpoints after a crash and commits one
	// more later: its leftovers must still be open then to linger.
	if o.CrashTimeout < minCrashIntervals*o.CheckpointInterval {
		return nil, fmt.Errorf("demo: the crash timeout must be at least %d checkpoint intervals", minCrashIntervals)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	lim := limitsFor(o)
	longest := slices.Max(slices.Collect(maps.Values(lim.retention)))
	logger := log.New(o.Log, "demo: ", log.LstdFlags|log.Lmicroseconds)
	opts := []kfake.Opt{
		kfake.NumBrokers(3),
		// Kafka 3.9 keeps one epoch per producer session (no KIP-890 bump on
		// every commit) and rejects a fenced producer's produce cleanly.
		kfake.MaxVersions(kversion.V3_9_0()),
		kfake.BrokerConfigs(map[string]string{
			"transaction.max.timeout.ms":     strconv.FormatInt(maxTxnTimeout.Milliseconds(), 10),
			"transactional.id.expiration.ms": strconv.FormatInt(lim.idExpiration.Milliseconds(), 10),
			// A topic someone adds to the demo keeps as much as the longest.
			"log.retention.ms":  strconv.FormatInt(longest.Milliseconds(), 10),
			"log.segment.bytes": strconv.FormatInt(lim.segmentBytes, 10),
		}),
		kfake.WithLogger(kfakeLogger{logger}),
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("demo: starting cluster: %w", err)
	}
	for _, t := range topics(o) {
		cfg := map[string]string{"retention.ms": strconv.FormatInt(lim.retention[t.name].Milliseconds(), 10)}
		if err := c.CreateTopic(t.name, t.partitions, cfg); err != nil {
			c.Close()
			return nil, fmt.Errorf("demo: creating topic %s: %w", t.name, err)
		}
	}

	wctx, cancel := context.WithCancel(ctx)
	d := &Demo{
		opts:      o,
		log:       logger,
		cluster:   c,
		bootstrap: c.ListenAddrs(),
		clock:     newClock(time.Now(), o.CheckpointInterval),
		limits:    lim,
		cancel:    cancel,
	}
	d.startWorkloads(wctx)
	return d, nil
}

// CheckpointInterval is how often the demo's jobs checkpoint.
func (d *Demo) CheckpointInterval() time.Duration { return d.clock.interval }

// Bootstrap is the address of every broker, "127.0.0.1:PORT".
func (d *Demo) Bootstrap() []string {
	return append([]string(nil), d.bootstrap...)
}

// Stats is a snapshot of the workload counters.
func (d *Demo) Stats() Stats {
	return Stats{
		Commits:         d.stats.commits.Load(),
		Aborts:          d.stats.aborts.Load(),
		Fenced:          d.stats.fenced.Load(),
		FencedDuplicate: d.stats.fencedDup.Load(),
		Crashed:         d.stats.crashed.Load(),
		Reopened:        d.stats.reopened.Load(),
		Consumed:        d.stats.consumed.Load(),
		Errors:          d.stats.errors.Load(),
	}
}

// Close stops the workloads, waits for them, then stops the cluster. It is
// safe to call more than once.
func (d *Demo) Close() {
	d.closeOnce.Do(func() {
		d.cancel()
		d.wg.Wait()
		d.cluster.Close()
	})
}

// trimLogs applies retention now and then: kfake does so by itself only every
// log.cleaner.backoff.ms (an hour), and the busy topics keep two minutes.
func (d *Demo) trimLogs(ctx context.Context) {
	for sleep(ctx, d.limits.retentionCheck) {
		d.cluster.ApplyRetention()
	}
}

func (d *Demo) goRun(ctx context.Context, fn func(context.Context)) {
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		fn(ctx)
	}()
}

// kfakeLogger keeps kfake's warnings (timeout aborts, rejected requests) in
// the demo log, where they explain what the workloads saw.
type kfakeLogger struct{ l *log.Logger }

func (k kfakeLogger) Logf(level kfake.LogLevel, format string, args ...any) {
	if level > kfake.LogLevelWarn {
		return
	}
	k.l.Printf("kfake %s: "+format, append([]any{level}, args...)...)
}
