package cli

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// helpFlags are the flags a help lists, one per line.
var helpFlagLine = regexp.MustCompile(`(?m)^  (?:-\w, |    )--([\w-]+)`)

func listed(help string) []string {
	var names []string
	for _, m := range helpFlagLine.FindAllStringSubmatch(help, -1) {
		names = append(names, m[1])
	}
	return names
}

// `txnscope X --help` prints X's synopsis and exactly the flags X takes,
// whichever way it is asked for.
func TestCommandHelp(t *testing.T) {
	for _, s := range commands {
		if s.cmd == cmdTUI {
			continue
		}
		args := append(commandArgs(s.cmd), "--help")
		if s.arg != "" {
			args = []string{string(s.cmd), "bash", "-h"}
		}
		code, out, errs := runArgs(t, args...)
		if code != 0 || errs != "" || !strings.HasPrefix(out, "txnscope "+string(s.cmd)+": "+s.synopsis+"\n") {
			t.Errorf("%q: exit %d, stderr %q, stdout %.80q", args, code, errs, out)
			continue
		}
		want := slices.Concat(s.flags, everywhere)
		got := listed(out)
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%q lists %q, want %q", args, got, want)
		}
		if !strings.Contains(out, "Exit status: 0 success, 1 ") {
			t.Errorf("%q does not give the exit statuses", args)
		}
	}
	// Help for an unknown command, or none, is the usage.
	for _, args := range [][]string{{"--help"}, {"nope", "--help"}} {
		if _, out, _ := runArgs(t, args...); out != usage() {
			t.Errorf("%q is not the usage", args)
		}
	}
}

// The usage lists every command by its synopsis and every flag once, and
// carries the facts the hand-written help had: defaults, limits, value
// shapes, that the password has no flag, exit statuses, DURATION.
func TestUsageFacts(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/state")
	u := usage()
	for _, s := range commands {
		if !strings.Contains(u, s.synopsis) {
			t.Errorf("usage lacks %s's synopsis", s.cmd.title())
		}
	}
	var all []string
	flagSet(&config{}).VisitAll(func(f *pflag.Flag) { all = append(all, f.Name) })
	if got := listed(u); !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(all))) {
		t.Errorf("usage lists %q, want every flag once: %q", got, all)
	}
	for _, fact := range []string{
		"-b, --bootstrap-server HOST:PORT,...", `(default "localhost:9092")`,
		"--refresh DURATION", "500ms to 1h: every refresh scans the whole cluster (default 2s)",
		"--timeout DURATION", "at most 10m", "(default 10s)",
		"--checkpoint-interval DURATION", "at most 24h",
		`--audit-log PATH`, `(default "/state/txnscope/audit.log")`,
		"-o, --output table|json", `(default "table")`,
		"--sasl-password-file FILE", "TXNSCOPE_SASL_PASSWORD", "There is no flag for the password itself",
		"--sasl-mechanism MECHANISM", "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER, GSSAPI or AWS_MSK_IAM",
		"--max-transaction-timeout MIN", "(default 15)", "--duration-filter MS", "(-1: all)",
		"regular files of at most 4 MiB", "DURATION is like 500ms, 2s, 1m30s.",
		"Exit status: 0 success, 1 the cluster could not be read or an abort was refused or failed, 2 bad usage.",
	} {
		if !strings.Contains(oneLine(u), oneLine(fact)) { // wrapped anywhere
			t.Errorf("usage lacks %q", fact)
		}
	}
	// --read-only and the audit log cover every request that changes the
	// cluster, not only aborts: a reader must not think commit slips past.
	for _, name := range []string{"read-only", "audit-log"} {
		usage := flagSet(&config{}).Lookup(name).Usage
		for _, cmd := range []command{cmdAbort, cmdForceTerminate, cmdCommit, cmdResolve} {
			if !strings.Contains(usage, string(cmd)) {
				t.Errorf("--%s's help does not name %s: %q", name, cmd, usage)
			}
		}
	}
	// -1 stands for "not given": never shown as a default.
	if strings.Contains(u, "(default -1)") {
		t.Error("usage shows a default of -1")
	}
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", "")
	if !strings.Contains(oneLine(usage()), "no default: HOME and XDG_STATE_HOME are unset, pass it") {
		t.Error("without HOME, the usage does not say --audit-log has no default")
	}
}
