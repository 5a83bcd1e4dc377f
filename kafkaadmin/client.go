// Package kafkaadmin is the only package that talks to Kafka: it turns the cluster
// into model values and carries out the two abort actions.
package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/txnscope/txnscope/model"
)

// DefaultTimeout is used when Config.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// maxTimeout keeps a typo like --timeout 10h from turning every failure into a hang.
const maxTimeout = 10 * time.Minute

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
	Security Security
}

// Client polls one cluster. Refresh and Execute may be called from different
// goroutines, but the ui never runs two Refreshes at once.
type Client struct {
	cfg       Config
	bootstrap string
	kgo       *kgo.Client

	// life is cancelled by Close so that in-flight work stops at once.
	life      context.Context
	stop      context.CancelFunc
	closeOnce sync.Once

	mu       sync.Mutex
	settings brokerSettings
}

// New connects lazily: it fails only on bad configuration, never because the
// cluster is down.
func New(cfg Config) (*Client, error) {
	var seeds []string
	for _, s := range cfg.Bootstrap {
		for _, part := range strings.Split(s, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			if strings.ContainsAny(part, " \t\n") {
				return nil, fmt.Errorf("bad bootstrap server %q", part)
			}
			seeds = append(seeds, part)
		}
	}
	if len(seeds) == 0 {
		return nil, errors.New("no bootstrap server given")
	}
	switch {
	case cfg.Timeout == 0:
		cfg.Timeout = DefaultTimeout
	case cfg.Timeout < 0:
		return nil, fmt.Errorf("timeout must be positive, got %s", cfg.Timeout)
	case cfg.Timeout < time.Millisecond:
		return nil, fmt.Errorf("timeout %s is too short", cfg.Timeout)
	case cfg.Timeout > maxTimeout:
		return nil, fmt.Errorf("timeout %s is longer than %s", cfg.Timeout, maxTimeout)
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
	sec, err := cfg.Security.options(cfg.Timeout)
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
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		stop()
		return nil, err
	}
	return &Client{cfg: cfg, bootstrap: strings.Join(seeds, ","), kgo: cl, life: life, stop: stop}, nil
}

// Close cancels everything in flight.
func (c *Client) Close() {
	c.closeOnce.Do(func() {
		c.stop()
		c.kgo.Close()
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

// deadline gives one request its cfg.Timeout.
func (c *Client) deadline(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.cfg.Timeout)
}

// Interface check: the ui depends on exactly these two methods.
var _ interface {
	Refresh(context.Context, *model.Snapshot) (*model.Snapshot, error)
	Execute(context.Context, model.Action, model.Recorder) model.Result
} = (*Client)(nil)
