package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// usageStderr splits the stderr of a usage error into its message (without
// "txnscope: ") and the line after it; ok is false unless stderr is exactly
// those two lines, the second a pointer to a help.
func usageStderr(errs string) (msg, pointer string, ok bool) {
	lines := strings.Split(errs, "\n")
	if len(lines) != 3 || lines[2] != "" {
		return "", "", false
	}
	msg, isErr := strings.CutPrefix(lines[0], "txnscope: ")
	pointer = lines[1]
	ok = isErr && strings.HasPrefix(pointer, "see txnscope ") && strings.HasSuffix(pointer, " --help")
	return msg, pointer, ok
}

// A usage error leaves its line on screen: that line, then where the help
// of the command that was run is, and nothing on stdout; not the global
// help's hundred lines, which scrolled the error away.
func TestRunUsageErrors(t *testing.T) {
	dir := t.TempDir()
	badProps := filepath.Join(dir, "client.properties")
	if err := os.WriteFile(badProps, []byte("bootstrap.servers=k:9092\nsecurity.protocol=SASL_SSH\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_STATE_HOME", dir)
	for _, tc := range []struct {
		args    []string
		msg     string
		pointer string
	}{
		// Unknown flags, before or after the command.
		{[]string{"list", "--bogus"}, "unknown flag: --bogus", "see txnscope list --help"},
		{[]string{"list", "-o", "json", "--bogus"}, "unknown flag: --bogus", "see txnscope list --help"},
		{[]string{"--bogus", "describe"}, "unknown flag: --bogus", "see txnscope describe --help"},
		{[]string{"-o", "json", "-b", "k:9092", "find-hanging", "--nope"}, "unknown flag: --nope", "see txnscope find-hanging --help"},
		{[]string{"snapshot", "-x"}, "unknown shorthand flag: 'x' in -x", "see txnscope snapshot --help"},
		{[]string{"forceTerminateTransaction", "--bogus"}, "unknown flag: --bogus", "see txnscope force-terminate --help"},
		{[]string{"--bogus"}, "unknown flag: --bogus", "see txnscope --help"},
		// A flag's value is not the command: -b list names a broker.
		{[]string{"-b", "list", "--bogus"}, "unknown flag: --bogus", "see txnscope --help"},
		// Bad values.
		{[]string{"exporter", "--max-id-series", "-1"}, "bad --max-id-series -1: want 0 to 1000", "see txnscope exporter --help"},
		{[]string{"list", "--partition", "x"}, `invalid argument "x" for "--partition" flag`, "see txnscope list --help"},
		{[]string{"snapshot", "-o", "csv"}, `bad --output "csv": want table or json`, "see txnscope snapshot --help"},
		{[]string{"--refresh", "1ms"}, "--refresh 1ms is shorter than the least allowed", "see txnscope --help"},
		{[]string{"demo", "--headless", "--refresh", "1s"}, "--refresh does not apply to demo --headless", "see txnscope demo --headless --help"},
		// Files.
		{[]string{"list", "--command-config", badProps}, "--command-config " + badProps + ": line 2: security.protocol=SASL_SSH is not one of",
			"see txnscope list --help"},
		{[]string{"abort", "--command-config", filepath.Join(dir, "missing.properties")}, "missing.properties: no such file",
			"see txnscope abort --help"},
		// Missing flags and arguments.
		{[]string{"describe"}, "describe needs --transactional-id", "see txnscope describe --help"},
		{[]string{"describe", "-o", "json"}, "describe needs --transactional-id", "see txnscope describe --help"},
		{[]string{"abort", "--topic", "t"}, "abort needs --topic and --partition", "see txnscope abort --help"},
		{[]string{"completion"}, "completion needs the shell", "see txnscope completion --help"},
		// No such command: the global help lists them.
		{[]string{"frobnicate"}, `unknown command "frobnicate"`, "see txnscope --help"},
		{[]string{"list", "extra"}, `unexpected argument "extra" after list`, "see txnscope list --help"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errs := runArgs(t, tc.args...)
			msg, pointer, ok := usageStderr(errs)
			if code != 2 || out != "" || !ok {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 2, nothing, and two lines", code, out, errs)
			}
			if !strings.Contains(msg, tc.msg) || pointer != tc.pointer {
				t.Errorf("stderr %q; want %q then %q", errs, tc.msg, tc.pointer)
			}
			// The pointer is a command that works.
			code, out, errs = runArgs(t, strings.Fields(pointer)[2:]...)
			if code != 0 || errs != "" || !strings.HasPrefix(out, "txnscope ") || !strings.Contains(out, "Usage:") {
				t.Errorf("%s: exit %d, stderr %q, stdout %.40q; want its help", pointer, code, errs, out)
			}
		})
	}

	// Asked for, the help is still whole.
	for _, args := range [][]string{{"-h"}, {"--help"}, {"list", "--help"}, {"--refresh", "1ms", "exporter", "-h"}} {
		code, out, errs := runArgs(t, args...)
		if code != 0 || errs != "" || out != help(mustParse(t, args)) || strings.Count(out, "\n") < 40 {
			t.Errorf("%q: exit %d, stderr %q, stdout %d lines; want the whole help", args, code, errs, strings.Count(out, "\n"))
		}
	}
}

func mustParse(t *testing.T, args []string) config {
	t.Helper()
	c, err := parse(args)
	if err != nil {
		t.Fatalf("parse(%q): %v", args, err)
	}
	return c
}

// commandIn finds the command where pflag gave up before reaching it.
func TestCommandIn(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want command
	}{
		{nil, cmdTUI},
		{[]string{"--nope"}, cmdTUI},
		{[]string{"list"}, cmdList},
		{[]string{"--timeout", "5s", "describe"}, cmdDescribe},
		{[]string{"--timeout=5s", "describe"}, cmdDescribe},
		{[]string{"--read-only", "abort"}, cmdAbort}, // a bool takes no value
		{[]string{"-b", "list"}, cmdTUI},
		{[]string{"-bk:9092", "list"}, cmdList},
		{[]string{"-hb", "k:9092", "list"}, cmdList},
		{[]string{"-ob", "json", "list"}, cmdTUI}, // -o's value is b; json is no command
		{[]string{"--nope", "snapshot"}, cmdSnapshot},
		{[]string{"--", "exporter"}, cmdExporter},
		{[]string{"-é", "list"}, cmdList},
		{[]string{"forceTerminateTransaction"}, cmdForceTerminate},
		{[]string{"status", "list"}, cmdTUI},
	} {
		if got := commandIn(tc.args); got != tc.want {
			t.Errorf("commandIn(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}
