package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/txnscope/txnscope/internal/audit"
	"github.com/txnscope/txnscope/internal/ckptstore"
	"github.com/txnscope/txnscope/internal/conn"
	"github.com/txnscope/txnscope/internal/ctxfile"
	"github.com/txnscope/txnscope/internal/escape"
	"github.com/txnscope/txnscope/internal/exporter"
	"github.com/txnscope/txnscope/internal/flinkrest"
	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// config is the parsed command line.
type config struct {
	cmd command
	// arg is the argument after the command, for a command that takes one;
	// arg2 the second (config's NAME).
	arg, arg2 string
	// configFile is config's file; added the context config add writes.
	configFile string
	added      []ctxfile.Value
	bootstrap  []string
	refresh    time.Duration
	timeout    time.Duration
	readOnly   bool
	// readOnlyGiven: --read-only on the command line, not from a context.
	readOnlyGiven bool
	auditLog      string
	output        string // snapshot: "table" or "json"
	// checkpointInterval is zero when not given.
	checkpointInterval time.Duration
	// since: snapshot replays the coordinators' log over it (zero: not).
	since time.Duration
	// history: "auto" follows the coordinators' log when it may, "polls" never.
	history string
	// flink is --flink, --flink-prefix and --flink-checkpoints; s3 the
	// --s3-* flags for its s3:// locations.
	flink flinkrest.Sources
	s3    ckptstore.S3Options
	// listen: exporter's HOST:PORT.
	listen string
	// maxIDSeries: exporter's --max-id-series.
	maxIDSeries int
	headless    bool
	help        bool
	version     bool
	// one holds the one-shot commands' flags (oneshotflags.go).
	one oneShot
	// sec holds the TLS and SASL flags as given, security what they and the
	// --command-config file resolve to (secflags.go).
	sec      secFlags
	security conn.Security
	// ctx is the config file's context the command runs in (contexts.go).
	ctx ctxInfo
	// warnings are printed on stderr before the command runs.
	warnings []string
}

// flagSet declares every flag into c. Subcommands share one set: which flags
// apply where is checked after parsing, so mistakes get a precise message.
// The usage strings are the help's (pflag shows the back-quoted word as the
// value's shape): the limits come from the constants that enforce them.
func flagSet(c *config) *pflag.FlagSet {
	fs := pflag.NewFlagSet("txnscope", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard) // errors are reported once, by the caller
	fs.String("context", "", "the `NAME` of a context of the config file (default: "+ctxfile.EnvContext+", else the file's current-context): "+
		"its settings apply where no flag is given; flags win over the context, the context over the defaults")
	fs.String("config", "", "the config file's `PATH` (default: "+ctxfile.EnvConfig+", else $XDG_CONFIG_HOME/txnscope/config.yaml or ~/.config/txnscope/config.yaml)")
	fs.StringP("bootstrap-server", "b", "localhost:9092", "brokers to start from, `HOST:PORT,...`")
	fs.DurationVar(&c.refresh, "refresh", 2*time.Second, fmt.Sprintf("how often the UI polls the cluster (exporter: %s unless given), a `DURATION` of %s to %s: every refresh scans the whole cluster",
		short(defaultExporterRefresh), minRefresh, short(maxRefresh)))
	fs.DurationVar(&c.timeout, "timeout", 10*time.Second, fmt.Sprintf("deadline of every request to the cluster, a `DURATION` of at most %s; dead bootstrap servers are skipped within it",
		short(kafkaadmin.MaxTimeout)))
	fs.BoolVar(&c.readOnly, "read-only", false, "change nothing: the UI has no abort, commit or resolve keys or dialogs, "+
		"and abort, force-terminate, commit and resolve are refused")
	fs.StringVar(&c.auditLog, "audit-log", audit.DefaultPath(), "`PATH` of the file every request that changes the cluster (abort, force-terminate, commit, resolve) "+
		"is written to before it goes out, and its result"+noDefaultAuditLog())
	fs.StringVarP(&c.output, "output", "o", "table", "output of snapshot and the one-shot commands: `table|json`")
	fs.DurationVar(&c.checkpointInterval, "checkpoint-interval", 0, fmt.Sprintf(
		"the Flink jobs' checkpoint interval, a `DURATION` of at most %s: transaction timeouts shorter than twice it are flagged as problems", short(maxCheckpointInterval)))
	fs.DurationVar(&c.since, "since", 0,
		"snapshot: also replay what the coordinators' log (__transaction_state, needs READ) still holds of the last `DURATION` (e.g. 1h, at most a year): every commit and abort, and who ended it")
	fs.StringVar(&c.history, "history", "auto",
		"where the history comes from: `auto|polls`; auto follows the coordinators' log (__transaction_state) when READ on it is allowed "+
			"(snapshot: replays its last hour, as the UI would know it), polls never reads it")
	fs.StringArray("flink", nil, "a Flink JobManager's REST `URL` (http://HOST:PORT), repeatable: its jobs' state and checkpoints beside the jobs they write "+
		"(read only; one that does not answer is said in the header)")
	fs.StringArray("flink-prefix", nil, "`JOB=PREFIX`, repeatable: the Flink job (its name or id) whose KafkaSink uses transactional-id PREFIX, "+
		"where its name does not hold the prefix")
	fs.StringArray("flink-checkpoints", nil, "`PREFIX=LOCATION`, repeatable: where the job whose KafkaSink uses PREFIX keeps its checkpoints (Flink's state.checkpoints.dir: "+
		"a local path, file:// or s3://BUCKET/PATH), Flink's root (LOCATION/<job id>/chk-N) or the job's own (LOCATION/chk-N): "+
		"the committables in the newest chk-N/_metadata say which transactions Flink checkpointed (commit or abort)")
	fs.StringVar(&c.s3.Endpoint, "s3-endpoint", "", "the `URL` of an S3-compatible store for s3:// checkpoints, given with --flink-checkpoints or named by --flink for an ended job "+
		"(default AWS, or AWS_ENDPOINT_URL_S3); credentials and region come from the standard AWS settings (environment, AWS_PROFILE, web identity, instance role)")
	fs.BoolVar(&c.s3.PathStyle, "s3-path-style", false, "address s3:// buckets in the path (BUCKET as the first path element), as most S3-compatible stores need")
	fs.StringVar(&c.s3.Region, "s3-region", "", "the `REGION` of s3:// checkpoints, over AWS_REGION and the profile's")
	fs.StringVar(&c.listen, "listen", fmt.Sprintf("127.0.0.1:%d", exporterPort), "exporter: the `HOST:PORT` to serve /metrics and /healthz on (port 0: any free one)")
	fs.IntVar(&c.maxIDSeries, "max-id-series", exporter.DefaultMaxIDSeries, fmt.Sprintf("exporter: give series of their own (the id as a label) to the `N` open transactions nearest their timeout only, 0 to %d; "+
		"0: none. Per-job series carry the alerts; a series per id would grow Prometheus without end, as Flink's ids change every checkpoint", maxIDSeries))
	fs.BoolVar(&c.headless, "headless", false, "demo: run the cluster without the UI")
	fs.StringVar(&c.ctx.label, "label", "", "config add: the `TEXT` the header shows for the context (default its name)")
	fs.StringVar(&c.ctx.color, "color", "", "config add: the header's `COLOR` for the context: "+strings.Join(ctxfile.Colors, ", ")+" or #RRGGBB")
	fs.BoolVar(&c.ctx.protected, "protected", false, "config add: acting on the context needs its name typed after the command's word, and --yes is refused")
	fs.BoolVar(&c.version, "version", false, "print the version and exit")
	fs.BoolVarP(&c.help, "help", "h", false, "print this help and exit")
	secFlagSet(fs, &c.sec)
	oneShotFlags(fs, &c.one)
	return fs
}

// noDefaultAuditLog says, in --audit-log's usage, that it has no default.
func noDefaultAuditLog() string {
	if audit.DefaultPath() != "" {
		return ""
	}
	return " (no default: HOME and XDG_STATE_HOME are unset, pass it)"
}

// short writes a whole number of hours or minutes without the zero parts
// time.Duration prints (1h, not 1h0m0s).
func short(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// parse reads the arguments after the program name. On --help or --version it
// returns the config with that set and does not validate the rest.
func parse(args []string) (config, error) { return parseIn(args, osContextEnv()) }

// parseIn is parse with the config file read in env.
func parseIn(args []string, env contextEnv) (config, error) {
	var c config
	fs := flagSet(&c)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			c.help = true
			return c, nil
		}
		// Named for the pointer to its help: pflag stops at the first bad
		// flag, before it may have seen the command.
		c.cmd = commandIn(args)
		return c, usageError{oneLine(err.Error())}
	}
	if c.help || c.version {
		if len(fs.Args()) > 0 { // the command whose help to show
			s, _ := lookup(fs.Args()[0])
			c.cmd = s.cmd
		}
		return c, nil
	}
	s, err := commandOf(fs.Args())
	c.cmd = s.cmd // the UI's for an unknown command: its help lists them all
	if err != nil {
		return c, err
	}
	if s.arg != "" && len(fs.Args()) > 1 {
		c.arg = fs.Args()[1]
	}
	if s.args > 1 && len(fs.Args()) > 2 {
		c.arg2 = fs.Args()[2]
	}
	if err := notApplying(fs, c); err != nil {
		return c, err
	}
	c.readOnlyGiven = fs.Changed("read-only") && c.readOnly
	if err := applyContext(fs, &c, s, env); err != nil {
		return c, err
	}
	if err := settle(fs, &c, s, env); err != nil {
		return c, c.placed(err)
	}
	if c.cmd == cmdConfig {
		if c.configFile, _, err = configPath(fs, env); err != nil {
			return c, err
		}
		if c.arg == "add" {
			c.added = addedValues(fs, &c)
		}
	}
	return c, nil
}

// settle checks the flags, the context's among them, and reads the files
// they name.
func settle(fs *pflag.FlagSet, c *config, s spec, env contextEnv) error {
	var err error
	if c.bootstrap, err = bootstrapFlag(fs); err != nil {
		return err
	}
	if err := checkDurations(fs, *c); err != nil {
		return err
	}
	if c.one.states, err = stateFilter(c.one.states); err != nil {
		return err
	}
	if c.cmd == cmdExporter && !fs.Changed("refresh") {
		c.refresh = defaultExporterRefresh
	}
	// Without HOME or XDG_STATE_HOME there is no default: the commands that
	// abort say so when they open it (audit.Log.Open); the others need none.
	if fs.Changed("audit-log") && c.auditLog == "" {
		return usagef("--audit-log is empty")
	}
	if c.history != "auto" && c.history != "polls" {
		return usagef("bad --history %q: want auto or polls", clip(c.history))
	}
	if c.output != "table" && c.output != "json" {
		return usagef("bad --output %q: want table or json", clip(c.output))
	}
	if err := flinkFlags(fs, c); err != nil {
		return err
	}
	if slices.Contains(s.flags, "bootstrap-server") { // it connects to a cluster of the user's
		boot, err := resolveSecurity(fs, c, env.getenv)
		if err != nil {
			return err
		}
		// -b wins over the file's bootstrap.servers, which wins over the default.
		if !fs.Changed("bootstrap-server") && len(boot) > 0 {
			c.bootstrap = boot
		}
	}
	if err := checkCommand(fs, c); err != nil {
		return err
	}
	return nil
}

// commandOf is the row of the command rest names (the arguments left after
// the flags); the UI's when there are none.
func commandOf(rest []string) (spec, error) {
	if len(rest) == 0 {
		return specOf(config{cmd: cmdTUI}), nil
	}
	s, ok := lookup(rest[0])
	switch {
	case !ok:
		return s, usagef("unknown command %q (want %s)", clip(rest[0]), strings.Join(named(), ", "))
	case s.arg == "" && len(rest) > 1:
		return s, usagef("unexpected argument %q after %s", clip(rest[1]), rest[0])
	case s.arg != "" && len(rest) > 1+max(s.args, 1):
		return s, usagef("unexpected argument %q after %s", clip(rest[len(rest)-1]), strings.Join(rest[:len(rest)-1], " "))
	}
	return s, nil
}

// commandIn is the command args name, read without pflag, which stops at
// the first bad flag: the first argument that is neither a flag nor a
// flag's value. The UI's when there is none or it is no command's name.
func commandIn(args []string) command {
	fs := flagSet(&config{})
	// takesValue: the next argument is f's value, not the command.
	takesValue := func(f *pflag.Flag) bool { return f != nil && f.NoOptDefVal == "" }
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			if i+1 < len(args) {
				s, _ := lookup(args[i+1])
				return s.cmd
			}
			return cmdTUI
		case strings.HasPrefix(a, "--"):
			if name, _, inline := strings.Cut(a[2:], "="); !inline && takesValue(fs.Lookup(name)) {
				i++
			}
		case strings.HasPrefix(a, "-") && a != "-":
			// Shorthands run together (-hb HOST, -bHOST): the first that
			// takes a value ends them, with the rest of a or the next argument.
			// Byte by byte: ShorthandLookup panics on a longer name.
			for k := 1; k < len(a); k++ {
				f := fs.ShorthandLookup(a[k : k+1])
				if f == nil {
					break
				}
				if takesValue(f) {
					if k == len(a)-1 {
						i++
					}
					break
				}
			}
		default:
			s, _ := lookup(a)
			return s.cmd
		}
	}
	return cmdTUI
}

// Bounds of the durations given on the command line, besides --timeout's
// (kafkaadmin.MinTimeout, MaxTimeout).
const (
	// minRefresh: every refresh scans the whole cluster (ListTransactions on
	// every broker, DescribeTransactions of every id, the offsets of every
	// partition), and one that falls due while another runs starts the moment
	// it returns, so a shorter interval only means scans back to back with
	// nothing new to see: ages are shown to the second. Two scans a second
	// is the most one UI asks of a cluster.
	minRefresh = 500 * time.Millisecond
	// maxRefresh: a view refreshed less than hourly is not live any more.
	maxRefresh = time.Hour
	// maxCheckpointInterval: no Flink job checkpoints less than daily, and
	// transaction timeouts are compared with twice the interval.
	maxCheckpointInterval = 24 * time.Hour
	// maxSince: the log keeps a transactional id a week by default
	// (transactional.id.expiration.ms); a year covers any setting.
	maxSince = 366 * 24 * time.Hour
)

// checkDurations refuses a duration out of its flag's bounds, and a number
// of minutes or milliseconds that would overflow once turned into time (a
// --max-transaction-timeout of 153722867280913 minutes is 4 s after the
// overflow).
func checkDurations(fs *pflag.FlagSet, c config) error {
	for _, d := range []struct {
		name     string
		v        time.Duration
		min, max time.Duration
		why      string
	}{
		{"refresh", c.refresh, minRefresh, maxRefresh, ": every refresh scans the whole cluster"},
		{"timeout", c.timeout, kafkaadmin.MinTimeout, kafkaadmin.MaxTimeout, ""},
		{"checkpoint-interval", c.checkpointInterval, time.Nanosecond, maxCheckpointInterval, ""},
		{"since", c.since, time.Millisecond, maxSince, ""},
	} {
		switch {
		case !fs.Changed(d.name):
		case d.v <= 0:
			return usagef("--%s must be positive, got %s", d.name, d.v)
		case d.v < d.min:
			return usagef("--%s %s is shorter than the least allowed, %s%s", d.name, d.v, d.min, d.why)
		case d.v > d.max:
			return usagef("--%s %s is longer than the most allowed, %s", d.name, d.v, d.max)
		}
	}
	for _, n := range []struct {
		name string
		v    int64
		unit time.Duration
		what string
	}{
		{"max-transaction-timeout", int64(c.one.maxTxnTimeoutMin), time.Minute, "minutes"},
		{"duration-filter", c.one.durationFilterMs, time.Millisecond, "ms"},
	} {
		if most := int64(math.MaxInt64 / n.unit); fs.Changed(n.name) && n.v > most {
			return usagef("--%s %d is too large: at most %d %s", n.name, n.v, most, n.what)
		}
	}
	if c.one.durationFilterMs < -1 {
		return usagef("--duration-filter must be -1 (all) or at least 0, got %d", c.one.durationFilterMs)
	}
	return nil
}

// listStates are the states Kafka's ListTransactions filters on.
var listStates = []model.State{model.Empty, model.Ongoing, model.PrepareCommit, model.PrepareAbort,
	model.CompleteCommit, model.CompleteAbort, model.PrepareEpochFence, model.Dead}

// stateFilter spells list's --state as the brokers do, each state once;
// "open" is the three open ones.
func stateFilter(given []string) ([]string, error) {
	var out []string
	add := func(s model.State) {
		if !slices.Contains(out, s.String()) {
			out = append(out, s.String())
		}
	}
	for _, g := range given {
		g = strings.TrimSpace(g)
		if strings.EqualFold(g, "open") {
			add(model.Ongoing)
			add(model.PrepareCommit)
			add(model.PrepareAbort)
			continue
		}
		i := slices.IndexFunc(listStates, func(s model.State) bool { return strings.EqualFold(s.String(), g) })
		if i < 0 {
			return nil, usagef("--state %s: not a transaction state (open, %s)", escape.Quote(g), joinStates(listStates))
		}
		add(listStates[i])
	}
	return out, nil
}

func joinStates(ss []model.State) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.String()
	}
	return strings.Join(out, ", ")
}

// flinkFlags reads --flink, --flink-prefix and --flink-checkpoints into c.
func flinkFlags(fs *pflag.FlagSet, c *config) error {
	urls, _ := fs.GetStringArray("flink")
	for _, u := range urls {
		cl, err := flinkrest.New(u)
		if err != nil {
			return usageError{err.Error()}
		}
		c.flink.Clients = append(c.flink.Clients, cl)
	}
	var err error
	if c.flink.Prefixes, err = pairs(fs, "flink-prefix", "JOB=PREFIX (JOB a Flink job's name or id)"); err != nil {
		return err
	}
	if len(c.flink.Prefixes) > 0 && len(c.flink.Clients) == 0 {
		return usagef("--flink-prefix needs --flink: the JobManager to read the jobs from")
	}
	locations, err := pairs(fs, "flink-checkpoints", "PREFIX=LOCATION (a checkpoint number means nothing without its job)")
	if err != nil {
		return err
	}
	if c.s3 != (ckptstore.S3Options{}) && len(c.flink.Clients) == 0 && !slices.ContainsFunc(slices.Collect(maps.Values(locations)), isS3) {
		return usagef("--s3-endpoint, --s3-path-style and --s3-region are for s3:// checkpoints: --flink-checkpoints PREFIX=s3://BUCKET/PATH, or those --flink names")
	}
	c.flink.S3 = c.s3
	for prefix, loc := range locations {
		st, err := ckptstore.Open(context.Background(), loc, c.s3)
		if err != nil {
			return usagef("bad --flink-checkpoints %s=%s: %s", clip(prefix), clip(loc), err)
		}
		if c.flink.Retained == nil {
			c.flink.Retained = map[string]ckptstore.Store{}
		}
		c.flink.Retained[prefix] = st
	}
	return nil
}

func isS3(location string) bool {
	scheme, _, ok := strings.Cut(location, "://")
	return ok && slices.Contains([]string{"s3", "s3a", "s3p"}, strings.ToLower(scheme))
}

// pairs reads the repeatable K=V flag name into a map.
func pairs(fs *pflag.FlagSet, name, want string) (map[string]string, error) {
	vals, _ := fs.GetStringArray(name)
	var out map[string]string
	for _, m := range vals {
		k, v, ok := strings.Cut(m, "=")
		if !ok || k == "" || v == "" {
			return nil, usagef("bad --%s %q: want %s", name, clip(m), want)
		}
		if out == nil {
			out = map[string]string{}
		}
		if old, dup := out[k]; dup && old != v {
			return nil, usagef("--%s maps %q to both %q and %q", name, clip(k), clip(old), clip(v))
		}
		out[k] = v
	}
	return out, nil
}
