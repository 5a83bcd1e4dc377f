package cli

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/txnscope/txnscope/internal/audit"
	"github.com/txnscope/txnscope/internal/testutil"
)

func defaults(cmd command) config {
	return config{
		cmd:         cmd,
		bootstrap:   []string{"localhost:9092"},
		refresh:     2 * time.Second,
		timeout:     10 * time.Second,
		auditLog:    audit.DefaultPath(),
		output:      "table",
		history:     "auto",
		listen:      "127.0.0.1:10309",
		maxIDSeries: 10,
		one:         defaultOneShot(),
	}
}

func TestParse(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/state")
	with := func(c config, f func(*config)) config { f(&c); return c }
	tests := []struct {
		args []string
		want config
	}{
		{nil, defaults(cmdTUI)},
		{[]string{"demo"}, defaults(cmdDemo)},
		{[]string{"snapshot"}, defaults(cmdSnapshot)},
		{[]string{"-b", "k1:9092,k2:9092"}, with(defaults(cmdTUI), func(c *config) { c.bootstrap = []string{"k1:9092", "k2:9092"} })},
		{[]string{"--bootstrap-server=k1:9092, k2:9092 ,"}, with(defaults(cmdTUI), func(c *config) { c.bootstrap = []string{"k1:9092", "k2:9092"} })},
		{[]string{"-b", "a:1", "-b", "b:2"}, with(defaults(cmdTUI), func(c *config) { c.bootstrap = []string{"b:2"} })},
		{[]string{"--refresh", "500ms"}, with(defaults(cmdTUI), func(c *config) { c.refresh = 500 * time.Millisecond })},
		{[]string{"--timeout=3s"}, with(defaults(cmdTUI), func(c *config) { c.timeout = 3 * time.Second })},
		{[]string{"--read-only"}, with(defaults(cmdTUI), func(c *config) { c.readOnly, c.readOnlyGiven = true, true })},
		{[]string{"--audit-log", "/tmp/a.log"}, with(defaults(cmdTUI), func(c *config) { c.auditLog = "/tmp/a.log" })},
		{[]string{"--checkpoint-interval", "1m"}, with(defaults(cmdTUI), func(c *config) { c.checkpointInterval = time.Minute })},
		{[]string{"snapshot", "-o", "json"}, with(defaults(cmdSnapshot), func(c *config) { c.output = "json" })},
		{[]string{"snapshot", "--output=table"}, defaults(cmdSnapshot)},
		{[]string{"-o", "json", "snapshot"}, with(defaults(cmdSnapshot), func(c *config) { c.output = "json" })}, // flags before the command
		{[]string{"demo", "--headless"}, with(defaults(cmdDemo), func(c *config) { c.headless = true })},
		{[]string{"demo", "--read-only", "--refresh", "1s"}, with(defaults(cmdDemo), func(c *config) { c.readOnly, c.readOnlyGiven = true, true; c.refresh = time.Second })},
		{[]string{"--", "snapshot"}, defaults(cmdSnapshot)},
		// The exporter refreshes every 15 s unless told: a scrape interval.
		{[]string{"exporter"}, with(defaults(cmdExporter), func(c *config) { c.refresh = 15 * time.Second })},
		{[]string{"exporter", "--listen", ":0", "--refresh", "2s", "--history", "polls"}, with(defaults(cmdExporter), func(c *config) {
			c.listen, c.refresh, c.history = ":0", 2*time.Second, "polls"
		})},
		{[]string{"exporter", "--listen", "[::1]:10309"}, with(defaults(cmdExporter), func(c *config) { c.listen, c.refresh = "[::1]:10309", 15*time.Second })},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			got, err := parse(tt.args)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parse =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestParseHelpAndVersion(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"snapshot", "--help"}, {"-o", "xml", "-h"}} {
		c, err := parse(args)
		if err != nil || !c.help {
			t.Errorf("parse(%q) = help %v, %v", args, c.help, err)
		}
	}
	for _, args := range [][]string{{"--version"}, {"demo", "--version"}} {
		c, err := parse(args)
		if err != nil || !c.version {
			t.Errorf("parse(%q) = version %v, %v", args, c.version, err)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		args []string
		msg  string
	}{
		{[]string{"--bogus"}, "unknown flag: --bogus"},
		{[]string{"-x"}, "unknown shorthand flag: 'x' in -x"},
		{[]string{"--refresh", "soon"}, `invalid argument "soon" for "--refresh" flag`},
		{[]string{"--timeout", "10"}, `invalid argument "10" for "--timeout" flag`},
		{[]string{"--refresh", "0s"}, "--refresh must be positive, got 0s"},
		{[]string{"--timeout", "-1s"}, "--timeout must be positive, got -1s"},
		{[]string{"--checkpoint-interval", "0"}, "--checkpoint-interval must be positive"},
		{[]string{"--refresh"}, "flag needs an argument: --refresh"},
		{[]string{"-b", ""}, "--bootstrap-server is empty"},
		{[]string{"-b", " , "}, "--bootstrap-server is empty"},
		{[]string{"-b", "kafka 1:9092"}, `bad --bootstrap-server "kafka 1:9092"`},
		{[]string{"--audit-log", ""}, "--audit-log is empty"},
		{[]string{"snapshot", "-o", "yaml"}, `bad --output "yaml": want table or json`},
		{[]string{"snapshot", "-o", ""}, `bad --output ""`},
		{[]string{"-o", "json"}, "--output does not apply to the UI (it goes with snapshot, list, describe, describe-producers, find-hanging, abort, force-terminate, commit, resolve)"},
		{[]string{"demo", "-o", "table"}, "--output does not apply to demo (it goes with snapshot,"},
		{[]string{"--headless"}, "--headless does not apply to the UI (it goes with demo, demo --headless)"},
		{[]string{"snapshot", "--headless"}, "--headless does not apply to snapshot"},
		{[]string{"demo", "-b", "k:9092"}, "--bootstrap-server does not apply to demo: it runs its own plaintext cluster (it goes with every other command)"},
		{[]string{"status"}, `unknown command "status" (want demo, snapshot, exporter, list, describe, describe-producers, find-hanging, abort, force-terminate, commit, resolve, config)`},
		{[]string{"exporter", "--listen", "10309"}, `bad --listen "10309": want HOST:PORT (e.g. 127.0.0.1:10309)`},
		{[]string{"exporter", "--listen", "localhost:http"}, `bad --listen "localhost:http": the port must be a number from 0 to 65535`},
		{[]string{"exporter", "--max-id-series", "-1"}, `bad --max-id-series -1: want 0 to 1000`},
		{[]string{"exporter", "--max-id-series", "20000"}, `bad --max-id-series 20000: want 0 to 1000`},
		{[]string{"snapshot", "--max-id-series", "5"}, "--max-id-series does not apply to snapshot (it goes with exporter)"},
		{[]string{"exporter", "--listen", "localhost:70000"}, `the port must be a number from 0 to 65535`},
		{[]string{"exporter", "--refresh", "1ms"}, "--refresh 1ms is shorter than the least allowed, 500ms"},
		{[]string{"exporter", "--read-only"}, "--read-only does not apply to exporter"},
		{[]string{"exporter", "--audit-log", "/tmp/a"}, "--audit-log does not apply to exporter"},
		{[]string{"exporter", "-o", "json"}, "--output does not apply to exporter"},
		{[]string{"--listen", "127.0.0.1:1"}, "--listen does not apply to the UI (it goes with exporter)"},
		{[]string{"snapshot", "json"}, `unexpected argument "json" after snapshot`},
		{[]string{"demo", "snapshot"}, `unexpected argument "snapshot" after demo`},
		{[]string{"--read-only=maybe"}, `invalid argument "maybe" for "--read-only" flag`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, err := parse(tt.args)
			if err == nil {
				t.Fatalf("parse accepted %q", tt.args)
			}
			if _, ok := err.(usageError); !ok {
				t.Errorf("error %T is not a usage error", err)
			}
			if !strings.Contains(err.Error(), tt.msg) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q, want one line containing %q", err, tt.msg)
			}
		})
	}
}

func runArgs(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	code = Run(ctx, args, Stdio{In: strings.NewReader(""), Out: &out, Err: &errb})
	return code, out.String(), errb.String()
}

func TestRunUsage(t *testing.T) {
	code, out, errs := runArgs(t, "--help")
	if code != 0 || errs != "" || !strings.HasPrefix(out, "txnscope shows") {
		t.Errorf("--help: exit %d, stderr %q, stdout %.40q", code, errs, out)
	}
	// Every flag is documented in the help.
	var c config
	flagSet(&c).VisitAll(func(f *pflag.Flag) {
		if !strings.Contains(out, "--"+f.Name) {
			t.Errorf("help does not mention --%s", f.Name)
		}
		if f.Shorthand != "" && !strings.Contains(out, "-"+f.Shorthand+", --"+f.Name) {
			t.Errorf("help does not mention -%s", f.Shorthand)
		}
	})

	code, out, errs = runArgs(t, "--version")
	if code != 0 || errs != "" || !strings.HasPrefix(out, "txnscope ") || strings.Count(out, "\n") != 1 {
		t.Errorf("--version: exit %d, stderr %q, stdout %q", code, errs, out)
	}

	// A usage error is two lines, whatever the command; TestRunUsageErrors
	// says which.
	for _, args := range [][]string{{"--bogus"}, {"--refresh", "x"}, {"-b", ""}, {"nope"}, {"snapshot", "-o", "csv"}} {
		code, out, errs = runArgs(t, args...)
		if _, _, ok := usageStderr(errs); code != 2 || out != "" || !ok {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2, nothing, an error line then where the help is", args, code, out, errs)
		}
	}
}

func TestRunNeedsATerminal(t *testing.T) {
	// A bytes.Buffer is not a terminal, as a pipe or a file is not.
	for _, args := range [][]string{nil, {"demo"}, {"--read-only", "-b", "127.0.0.1:1"}} {
		code, out, errs := runArgs(t, args...)
		msg, _, ok := usageStderr(errs)
		if code != 2 || out != "" || !ok ||
			!strings.Contains(msg, "not a terminal") || !strings.Contains(msg, "txnscope snapshot") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
}

func TestRunSnapshotUnreachable(t *testing.T) {
	start := time.Now()
	code, out, errs := runArgs(t, "snapshot", "-b", "127.0.0.1:1", "--timeout", "2s")
	if code != 1 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "127.0.0.1:1") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 1 and one line naming the cluster", code, out, errs)
	}
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("took %s with --timeout 2s", d)
	}
}

func TestRunBadTimeoutForClient(t *testing.T) {
	// Absurd timeouts are bad usage, not a cluster failure, and the message
	// names the flag.
	code, _, errs := runArgs(t, "snapshot", "--timeout", "3h")
	first, _, _ := strings.Cut(errs, "\n")
	if code != 2 || first != "txnscope: --timeout 3h0m0s is longer than the most allowed, 10m0s" {
		t.Errorf("exit %d, first line %q", code, first)
	}
}

// A bad argument pasted from a listing of hostile ids is written out in the
// usage error, once, whether the message Go-quotes it or not.
func TestRunUsageEscapesArguments(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--\x1b[2J\x9b"}, `unknown flag: --\x1b[2J\x9b`},
		{[]string{"snapshot", "-o", "\x1b]0;t\x07"}, `bad --output "\x1b]0;t\x07"`},
		{[]string{"list", "extra\r\nline"}, `unexpected argument "extra\r\nline"`},
		{[]string{"\x1b[2J", "--bogus"}, `unknown flag: --bogus`}, // no command: the pointer is the global help's
	} {
		code, _, errs := runArgs(t, tc.args...)
		first, _, ok := usageStderr(errs)
		if code != 2 || !ok || !strings.Contains(first, tc.want) || testutil.RawControl(errs, false) != "" {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %s then where the help is, nothing raw", tc.args, code, errs, tc.want)
		}
	}
}
