package cli

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/txnscope/txnscope/audit"
	"github.com/txnscope/txnscope/kafkaadmin"
)

// command is what txnscope was asked to do.
type command string

const (
	cmdTUI      command = ""
	cmdDemo     command = "demo"
	cmdSnapshot command = "snapshot"
)

// config is the parsed command line.
type config struct {
	cmd       command
	bootstrap []string
	refresh   time.Duration
	timeout   time.Duration
	readOnly  bool
	auditLog  string
	output    string // snapshot: "table" or "json"
	// checkpointInterval is zero when not given.
	checkpointInterval time.Duration
	headless           bool
	help               bool
	version            bool
	// one holds the one-shot commands' flags (oneshotflags.go).
	one oneShot
	// sec holds the TLS and SASL flags as given, security what they and the
	// --command-config file resolve to (secflags.go).
	sec      secFlags
	security kafkaadmin.Security
	// warnings are printed on stderr before the command runs.
	warnings []string
}

// usageError is bad input on the command line: exit status 2, with the usage.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// usageText is the help; the first %s is the default audit log path, the
// second the one-shot commands' section. Written by hand
// (rather than pflag's FlagUsages) to show value shapes and where flags apply.
const usageText = `txnscope shows every Kafka transaction live and aborts stuck ones safely.

Usage:
  txnscope [flags]              open the terminal UI on a cluster
  txnscope demo [flags]         start an embedded demo cluster and open the UI on it
  txnscope demo --headless      run the demo cluster without the UI; the first line on
                                stdout is "bootstrap: HOST:PORT,..."; stop it with SIGINT/SIGTERM
  txnscope snapshot [flags]     print every transaction once and exit
  txnscope list|describe|describe-producers|find-hanging|abort|force-terminate [flags]
                                kafka-transactions.sh's commands (see below)

Flags:
  -b, --bootstrap-server HOST:PORT[,HOST:PORT...]
                                   brokers to start from (default localhost:9092; not with demo)
      --refresh DURATION           how often the UI polls the cluster (default 2s; 500ms to 1h:
                                   every refresh scans the whole cluster)
      --timeout DURATION           deadline of every request to the cluster (default 10s; at
                                   most 10m); dead bootstrap servers are skipped within it
      --read-only                  no abort keys and no abort dialogs
      --audit-log PATH             every abort request, written before it goes out, and its result
                                   (default %s)
  -o, --output table|json          output of snapshot and the one-shot commands (default table)
      --checkpoint-interval DURATION
                                   the Flink jobs' checkpoint interval (at most 24h): transaction
                                   timeouts shorter than twice it are flagged as problems
      --headless                   demo only: no UI (see above)
      --version                    print the version and exit
  -h, --help                       print this help and exit

Connecting to a secured cluster (not with demo; flags win over --command-config):
      --command-config FILE        a Java client .properties file, as kafka-transactions.sh
                                   takes: bootstrap.servers (unless -b), security.protocol,
                                   sasl.mechanism, sasl.jaas.config, PEM ssl.truststore/keystore
      --tls                        connect with TLS (implied by every --tls-* flag)
      --tls-ca FILE                PEM CA certificate(s) of the brokers (default: system roots)
      --tls-cert FILE, --tls-key FILE
                                   client certificate and unencrypted key for mutual TLS
                                   (may be one file)
      --tls-server-name NAME       name to expect in the brokers' certificates
      --tls-insecure-skip-verify   accept any broker certificate (warned about on every run)
      --sasl-mechanism PLAIN|SCRAM-SHA-256|SCRAM-SHA-512|OAUTHBEARER
      --sasl-username NAME         SASL user (not for OAUTHBEARER)
      --sasl-password-file FILE    file holding the password, or the OAUTHBEARER token (a
                                   trailing newline is dropped); else the environment
                                   variable TXNSCOPE_SASL_PASSWORD. There is no flag for the
                                   password itself: command lines are visible to all users

%s
DURATION is like 500ms, 2s, 1m30s. A flag the command does not take is refused, never
ignored. Files (--command-config, --sasl-password-file, --tls-*, and the files a properties
file names) must be regular files of at most 4 MiB; one holding a secret that other users
can read is warned about. Exit status: 0 success, 1 the cluster could not be read or an
abort was refused or failed, 2 bad usage.
`

// flagSet declares every flag into c. Subcommands share one set: which flags
// apply where is checked after parsing, so mistakes get a precise message.
func flagSet(c *config) *pflag.FlagSet {
	fs := pflag.NewFlagSet("txnscope", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard) // errors are reported once, by the caller
	fs.StringP("bootstrap-server", "b", "localhost:9092", "Kafka brokers to start from, comma-separated (not with demo)")
	fs.DurationVar(&c.refresh, "refresh", 2*time.Second, "how often the UI polls the cluster")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Second, "deadline of every request to the cluster")
	fs.BoolVar(&c.readOnly, "read-only", false, "no abort keys, no abort dialogs")
	fs.StringVar(&c.auditLog, "audit-log", audit.DefaultPath(), "file every abort request is written to before it goes out")
	fs.StringVarP(&c.output, "output", "o", "table", "snapshot output: table or json")
	fs.DurationVar(&c.checkpointInterval, "checkpoint-interval", 0,
		"Flink checkpoint interval; flags transaction timeouts below twice it")
	fs.BoolVar(&c.headless, "headless", false, "demo: run the cluster without the UI until SIGINT/SIGTERM")
	fs.BoolVar(&c.version, "version", false, "print the version and exit")
	fs.BoolVarP(&c.help, "help", "h", false, "print this help and exit")
	secFlagSet(fs, &c.sec)
	oneShotFlags(fs, &c.one)
	return fs
}

// usage is the help text.
func usage() string {
	def := audit.DefaultPath()
	if def == "" {
		def = "none: HOME and XDG_STATE_HOME are unset, pass it"
	}
	return fmt.Sprintf(usageText, def, oneShotUsage)
}

// parse reads the arguments after the program name. On --help or --version it
// returns the config with that set and does not validate the rest.
func parse(args []string) (config, error) {
	var c config
	fs := flagSet(&c)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			c.help = true
			return c, nil
		}
		return c, usageError{oneLine(err.Error())}
	}
	if c.help || c.version {
		return c, nil
	}

	switch rest := fs.Args(); {
	case len(rest) == 0:
		c.cmd = cmdTUI
	case rest[0] == string(cmdDemo) || rest[0] == string(cmdSnapshot) || isOneShot(command(rest[0])) || commandAliases[rest[0]] != "":
		c.cmd = command(rest[0])
		if alias, ok := commandAliases[rest[0]]; ok {
			c.cmd = alias
		}
		if len(rest) > 1 {
			return c, usagef("unexpected argument %q after %s", clip(rest[1]), rest[0])
		}
	default:
		return c, usagef("unknown command %q (want demo, snapshot, %s)", clip(rest[0]), describeOneShot())
	}

	if err := notApplying(fs, c); err != nil {
		return c, err
	}

	raw, _ := fs.GetString("bootstrap-server")
	for _, s := range strings.Split(raw, ",") {
		s = strings.TrimSpace(s)
		switch {
		case s == "":
			continue
		case strings.ContainsAny(s, " \t\r\n"):
			return c, usagef("bad --bootstrap-server %q: a host:port may not contain spaces", clip(s))
		}
		c.bootstrap = append(c.bootstrap, s)
	}
	if len(c.bootstrap) == 0 {
		return c, usagef("--bootstrap-server is empty: give at least one host:port")
	}
	if err := checkDurations(fs, c); err != nil {
		return c, err
	}
	// Without HOME or XDG_STATE_HOME there is no default: the commands that
	// abort say so when they open it (audit.Log.Open); the others need none.
	if fs.Changed("audit-log") && c.auditLog == "" {
		return c, usagef("--audit-log is empty")
	}
	if c.output != "table" && c.output != "json" {
		return c, usagef("bad --output %q: want table or json", clip(c.output))
	}
	if c.cmd != cmdDemo {
		boot, err := resolveSecurity(fs, &c, os.Getenv)
		if err != nil {
			return c, err
		}
		// -b wins over the file's bootstrap.servers, which wins over the default.
		if !fs.Changed("bootstrap-server") && len(boot) > 0 {
			c.bootstrap = boot
		}
	}
	if err := validateOneShot(fs, &c); err != nil {
		return c, err
	}
	return c, nil
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

// clip shortens a value quoted in an error: an argument pasted by mistake
// may be kilobytes long, and the message is one line.
func clip(s string) string {
	const most = 64
	if r := []rune(s); len(r) > most {
		return string(r[:most]) + "…"
	}
	return s
}

// oneLine keeps an error message to one line of stderr.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
