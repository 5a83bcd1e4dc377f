package main

import (
	"errors"
	"fmt"
	"io"
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
      --refresh DURATION           how often the UI polls the cluster (default 2s)
      --timeout DURATION           deadline of every request to the cluster (default 10s)
      --read-only                  no abort keys and no abort dialogs
      --audit-log PATH             file every abort attempt is appended to
                                   (default %s)
  -o, --output table|json          output of snapshot and the one-shot commands (default table)
      --checkpoint-interval DURATION
                                   the Flink jobs' checkpoint interval: transaction timeouts
                                   shorter than twice it are flagged as problems
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
DURATION is like 500ms, 2s, 1m30s. Exit status: 0 success, 1 the cluster could not be
read or an abort was refused or failed, 2 bad usage.
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
	fs.StringVar(&c.auditLog, "audit-log", audit.DefaultPath(), "file every abort attempt is appended to")
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
func usage() string { return fmt.Sprintf(usageText, audit.DefaultPath(), oneShotUsage) }

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
			return c, usagef("unexpected argument %q after %s", rest[1], rest[0])
		}
	default:
		return c, usagef("unknown command %q (want demo, snapshot, %s)", rest[0], describeOneShot())
	}

	raw, _ := fs.GetString("bootstrap-server")
	for _, s := range strings.Split(raw, ",") {
		s = strings.TrimSpace(s)
		switch {
		case s == "":
			continue
		case strings.ContainsAny(s, " \t\r\n"):
			return c, usagef("bad --bootstrap-server %q: a host:port may not contain spaces", s)
		}
		c.bootstrap = append(c.bootstrap, s)
	}
	if len(c.bootstrap) == 0 {
		return c, usagef("--bootstrap-server is empty: give at least one host:port")
	}

	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"refresh", c.refresh}, {"timeout", c.timeout}, {"checkpoint-interval", c.checkpointInterval}} {
		if fs.Changed(d.name) && d.v <= 0 {
			return c, usagef("--%s must be positive, got %s", d.name, d.v)
		}
	}
	if c.auditLog == "" {
		return c, usagef("--audit-log is empty")
	}
	if c.output != "table" && c.output != "json" {
		return c, usagef("bad --output %q: want table or json", c.output)
	}

	// Flags that would be silently ignored are refused, so that a typo'd
	// command does not run with a meaning nobody asked for.
	if fs.Changed("output") && c.cmd != cmdSnapshot && !isOneShot(c.cmd) {
		return c, usagef("--output applies to txnscope snapshot and the one-shot commands only")
	}
	if c.headless && c.cmd != cmdDemo {
		return c, usagef("--headless applies to txnscope demo only")
	}
	if fs.Changed("bootstrap-server") && c.cmd == cmdDemo {
		return c, usagef("demo runs its own cluster: --bootstrap-server does not apply")
	}
	if c.cmd == cmdDemo {
		if name, ok := securityGiven(fs); ok {
			return c, usagef("demo runs its own plaintext cluster: --%s does not apply", name)
		}
	} else {
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

// oneLine keeps an error message to one line of stderr.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
