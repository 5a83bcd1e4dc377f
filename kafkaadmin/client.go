// Package kafkaadmin is the only package that talks to Kafka: it turns the cluster
// into model values and carries out the two abort actions.
package kafkaadmin

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/txnscope/txnscope/internal/conn"
	"github.com/txnscope/txnscope/model"
)

// DefaultTimeout is used when Config.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// The bounds of Config.Timeout. MaxTimeout keeps a typo like --timeout 10h
// from turning every failure into a hang.
const (
	MinTimeout = time.Millisecond
	MaxTimeout = 10 * time.Minute
)

// Config says where the cluster is and how long to wait for it.
type Config struct {
	Bootstrap []string
	// Timeout bounds every request (zero means DefaultTimeout).
	Timeout time.Duration

	// Log, when set, receives the Kafka client's warnings. Nothing is ever
	// written to stdout: the TUI owns the terminal.
	Log io.Writer
	// MaxVersions caps the protocol versions used (nil: whatever the brokers offer).
	MaxVersions *kversion.Versions
	// ConfigEvery is how often the brokers' transaction.max.timeout.ms is re-read
	// (zero means every five minutes).
	ConfigEvery time.Duration
	// Watch lists partitions to poll on every refresh even when no open
	// transaction lists them: a hanging transaction (KIP-664) pins a partition
	// its coordinator knows nothing about, so only watching it shows the pin
	// and the producer holding it.
	Watch []model.TopicPartition
	// Security is TLS and SASL (zero: PLAINTEXT).
	Security conn.Security
	// FollowLog makes Poll follow the coordinators' log (follow.go) and take
	// the states and the history from it once it can; Refresh never does.
	FollowLog bool
	// FollowOnLetGo makes the log's first read wait until LetGo is called
	// (at most letGoWait): a caller that lets go of the first listing's
	// rows while the log is read (the exporter) then never holds them
	// beside the rows the read builds. At 2,000,000 ids the two were most
	// of the exporter's peak.
	FollowOnLetGo bool
	// Hooks are added to every client it makes: a measuring tool counts the
	// requests txnscope sends with one (scripts/brokercost).
	Hooks []kgo.Hook
}

// Client polls one cluster. Refresh and Execute may be called from different
// goroutines, but the ui never runs two Refreshes at once.
type Client struct {
	cfg       Config
	bootstrap string
	kgo       *kgo.Client
	opts      []kgo.Opt // kgo's, for a client of its own (ReadTxnLog consumes)

	// life is cancelled by Close so that in-flight work stops at once.
	life      context.Context
	stop      context.CancelFunc
	closeOnce sync.Once

	mu       sync.Mutex
	settings brokerSettings
	// seen is when each broker was last in the metadata (brokersGone).
	seen map[int32]time.Time

	// seeds are the bootstrap servers as given. reach is held by the one
	// reachSeeds at work; narrowedAt is when it last left kgo a single seed.
	seeds      []string
	reach      chan struct{}
	narrowedAt time.Time

	budget int // ids one Poll may describe (pollBudget; tests lower it)
	order  listOrder
	prods  producerCache

	followOnce sync.Once
	followed   atomic.Pointer[follower] // nil until Poll starts it (Config.FollowLog)
	// listed is how many ids the last listing found: the follower makes room
	// for that many rows at once (model.TxnLog.Expect).
	listed atomic.Int64
	// live is closed the first time the log becomes the source (LogLive).
	live     chan struct{}
	liveOnce sync.Once
	// letGo is closed by LetGo (Config.FollowOnLetGo).
	letGo     chan struct{}
	letGoOnce sync.Once
}

// New connects lazily: it fails only on bad configuration, never because the
// cluster is down.
func New(cfg Config) (*Client, error) {
	seeds, err := conn.ParseBootstrap(cfg.Bootstrap...)
	if err != nil {
		return nil, err
	}
	switch {
	case cfg.Timeout == 0:
		cfg.Timeout = DefaultTimeout
	case cfg.Timeout < 0:
		return nil, fmt.Errorf("timeout must be positive, got %s", cfg.Timeout)
	case cfg.Timeout < MinTimeout:
		return nil, fmt.Errorf("timeout %s is too short", cfg.Timeout)
	case cfg.Timeout > MaxTimeout:
		return nil, fmt.Errorf("timeout %s is longer than %s", cfg.Timeout, MaxTimeout)
	}
	if cfg.ConfigEvery <= 0 {
		cfg.ConfigEvery = 5 * time.Minute
	}
	cfg.Bootstrap = seeds
	cfg.Watch = slices.Clone(cfg.Watch) // the caller may reuse its slice

	life, stop := context.WithCancel(context.Background())
	opts := []kgo.Opt{
		kgo.SeedBrokers(seeds...),
		kgo.ClientID("txnscope"),
		kgo.WithContext(life),
		kgo.DialTimeout(cfg.Timeout),
		kgo.RequestTimeoutOverhead(cfg.Timeout),
		// Few, quick retries: the ui polls again anyway, and an operator must
		// see an error within the timeout rather than a silent hang.
		kgo.RetryTimeout(cfg.Timeout),
		kgo.RequestRetries(2),
		kgo.RetryBackoffFn(func(tries int) time.Duration {
			return min(25*time.Millisecond*time.Duration(tries), time.Second)
		}),
		kgo.MetadataMinAge(time.Second),
	}
	sec, err := securityOptions(cfg.Security, cfg.Timeout)
	if err != nil {
		stop()
		return nil, err
	}
	opts = append(opts, sec...)
	if cfg.Log != nil {
		opts = append(opts, kgo.WithLogger(kgo.BasicLogger(cfg.Log, kgo.LogLevelWarn, nil)))
	}
	if cfg.MaxVersions != nil {
		opts = append(opts, kgo.MaxVersions(cfg.MaxVersions))
	}
	if len(cfg.Hooks) > 0 {
		opts = append(opts, kgo.WithHooks(cfg.Hooks...))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		stop()
		return nil, err
	}
	return &Client{cfg: cfg, bootstrap: strings.Join(seeds, ","), kgo: cl, opts: opts, life: life, stop: stop, budget: pollBudget,
		seeds: seeds, reach: make(chan struct{}, 1), live: make(chan struct{}), letGo: make(chan struct{})}, nil
}

// Close cancels everything in flight.
func (c *Client) Close() {
	c.closeOnce.Do(func() {
		c.stop()
		c.kgo.Close()
		c.followOnce.Do(func() {}) // never starts after Close
		if f := c.followed.Load(); f != nil {
			<-f.done
		}
	})
}

// scope ties a caller's context to the client's life, so Close interrupts it too.
func (c *Client) scope(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	unhook := context.AfterFunc(c.life, cancel)
	return ctx, func() {
		unhook()
		cancel()
	}
}

// deadline gives one request its cfg.Timeout. Every request starts here, so
// this is also where the client first finds a seed that answers.
func (c *Client) deadline(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	c.reachSeeds(ctx)
	return ctx, cancel
}

// seedStagger is how long a seed is given to answer before the next one is
// asked as well (as RFC 8305 staggers connection attempts).
const seedStagger = 250 * time.Millisecond

// reachSeeds leaves kgo with one seed that answers before its first
// request. On its own, kgo sends the first metadata request to a seed picked
// at random and waits on it for the whole request timeout, retrying twice:
// a seed that accepts connections but never answers (a stopped broker, a
// blackholed address) failed the command whenever it was picked first (4 in
// 10 runs of `list` with it among two seeds), and three seeds that refuse
// connections used up the retries before the good one was tried (7 in 20).
// So all seeds are asked, staggered, within the request's deadline; the
// first to answer becomes kgo's only seed, from which it learns the brokers.
// If none answers, nothing changes and kgo's request reports the failure.
func (c *Client) reachSeeds(ctx context.Context) {
	if len(c.seeds) < 2 || len(c.kgo.DiscoveredBrokers()) > 0 {
		return
	}
	select {
	case c.reach <- struct{}{}:
		defer func() { <-c.reach }()
	case <-ctx.Done():
		return
	}
	// A request started since the last narrowing is still learning the
	// brokers from that seed: give it its timeout before starting over.
	if len(c.kgo.DiscoveredBrokers()) > 0 || time.Since(c.narrowedAt) < c.cfg.Timeout {
		return
	}
	if !c.narrowedAt.IsZero() {
		// The seed that answered last time no longer leads anywhere.
		if err := c.kgo.UpdateSeedBrokers(c.seeds...); err != nil {
			return
		}
	}
	if i := c.firstToAnswer(ctx, c.kgo.SeedBrokers()); i >= 0 {
		if c.kgo.UpdateSeedBrokers(c.seeds[i]) == nil {
			c.narrowedAt = time.Now()
		}
	}
}

// firstToAnswer asks each seed for the cluster's brokers, in the order
// given: the next one as soon as one fails, or after a stagger short enough
// that every seed is asked within half the timeout. It returns the index of
// the first to answer, or -1 when none did before ctx ended.
func (c *Client) firstToAnswer(ctx context.Context, seeds []*kgo.Broker) int {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // the slower attempts end with it
	stagger := min(seedStagger, c.cfg.Timeout/time.Duration(2*len(seeds)))
	type answer struct {
		i   int
		err error
	}
	answers := make(chan answer, len(seeds)) // no sender ever waits
	ask := func(i int) {
		req := kmsg.NewPtrMetadataRequest()
		req.Topics = []kmsg.MetadataRequestTopic{} // brokers only
		_, err := seeds[i].Request(ctx, req)
		answers <- answer{i, err}
	}
	next, waiting := 0, 0
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case a := <-answers:
			waiting--
			if a.err == nil {
				return a.i
			}
			if next == len(seeds) && waiting == 0 {
				return -1
			}
		case <-timer.C:
		case <-ctx.Done():
			return -1
		}
		if next < len(seeds) {
			go ask(next)
			next++
			waiting++
			timer.Reset(stagger)
		}
	}
}

// Interface check: the ui depends on exactly these two methods.
var _ interface {
	Refresh(context.Context, *model.Snapshot) (*model.Snapshot, error)
	Execute(context.Context, model.Action, model.Recorder) model.Result
} = (*Client)(nil)
