package cli

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// commandArgs is how a row of the table is asked for on the command line.
func commandArgs(cmd command) []string {
	switch cmd {
	case cmdTUI:
		return nil
	case cmdDemoHeadless:
		return []string{"demo", "--headless"}
	}
	return []string{string(cmd)}
}

// flagArg gives flag f a value of its type.
func flagArg(f *pflag.Flag) string {
	switch f.Value.Type() {
	case "bool":
		return "--" + f.Name
	case "duration":
		return "--" + f.Name + "=1s"
	case "int", "int16", "int32", "int64":
		return "--" + f.Name + "=1"
	}
	return "--" + f.Name + "=x"
}

func TestCommandTableIsComplete(t *testing.T) {
	var c config
	fs := flagSet(&c)
	cmds := []command{cmdTUI, cmdDemo, cmdSnapshot, cmdList, cmdDescribe, cmdDescribeProducers, cmdFindHanging, cmdAbort, cmdForceTerminate}
	for _, cmd := range cmds {
		if specOf(config{cmd: cmd}).flags == nil {
			t.Errorf("command %q has no row in the table", cmd)
		}
	}
	taken := map[string]bool{}
	for _, s := range commands {
		for _, f := range s.flags {
			if fs.Lookup(f) == nil {
				t.Errorf("%s takes --%s, which is no flag", s.cmd.title(), f)
			}
			taken[f] = true
		}
	}
	fs.VisitAll(func(f *pflag.Flag) {
		if !taken[f.Name] && !slices.Contains(everywhere, f.Name) {
			t.Errorf("--%s goes with no command", f.Name)
		}
	})
}

// Every flag a command does not take is refused with one line naming the
// flag and the command, never silently ignored; every flag it takes passes
// that check. The pairs come from the table, the refusals from parse.
func TestFlagDoesNotApply(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/state")
	var c config
	fs := flagSet(&c)
	for _, s := range commands {
		fs.VisitAll(func(f *pflag.Flag) {
			if slices.Contains(everywhere, f.Name) || (s.cmd == cmdDemoHeadless && f.Name == "headless") {
				return
			}
			args := append(commandArgs(s.cmd), flagArg(f))
			_, err := parse(args)
			want := "--" + f.Name + " does not apply to " + s.cmd.title()
			refused := err != nil && strings.HasPrefix(err.Error(), want)
			if takes := slices.Contains(s.flags, f.Name); takes == refused {
				t.Errorf("%q: takes %v, error %v", args, takes, err)
			}
			if refused && (strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "(it goes with ")) {
				t.Errorf("%q: error %q is not one line naming where the flag goes", args, err)
			}
		})
	}
}

// The pairs the issue found, spelled out.
func TestFlagDoesNotApplyMessages(t *testing.T) {
	for _, tt := range []struct {
		args []string
		msg  string
	}{
		{[]string{"snapshot", "--refresh", "1s"}, "--refresh does not apply to snapshot (it goes with the UI, demo, exporter)"},
		{[]string{"list", "--refresh", "1s"}, "--refresh does not apply to list (it goes with the UI, demo, exporter)"},
		{[]string{"demo", "--headless", "--refresh", "1s"}, "--refresh does not apply to demo --headless: it runs the cluster without the UI (it goes with the UI, demo, exporter)"},
		{[]string{"demo", "--headless", "--timeout", "1s"}, "--timeout does not apply to demo --headless: it runs the cluster without the UI (it goes with every other command)"},
		{[]string{"demo", "--headless", "--read-only"}, "--read-only does not apply to demo --headless"},
		{[]string{"snapshot", "--audit-log", "/tmp/a"}, "--audit-log does not apply to snapshot (it goes with the UI, demo, abort, force-terminate, commit, resolve)"},
		{[]string{"describe", "--transactional-id", "x", "--audit-log", "/tmp/a"}, "--audit-log does not apply to describe"},
		{[]string{"list", "--checkpoint-interval", "1m"}, "--checkpoint-interval does not apply to list (it goes with the UI, demo, snapshot)"},
		{[]string{"find-hanging", "--topic", "t", "--yes"}, "--yes does not apply to find-hanging (it goes with abort, force-terminate, commit, resolve)"},
		{[]string{"demo", "--tls-ca", "ca.pem"}, "--tls-ca does not apply to demo: it runs its own plaintext cluster (it goes with every other command)"},
		{[]string{"demo", "--output", "json"}, "--output does not apply to demo (it goes with snapshot, list,"},
		{[]string{"list", "--flink", "http://jm:8081"}, "--flink does not apply to list (it goes with the UI, demo, snapshot, commit, resolve)"},
		{[]string{"snapshot", "--flink", "jm:8081"}, `--flink "jm:8081": want the JobManager's REST address, http://HOST:PORT or https://HOST:PORT`},
		{[]string{"snapshot", "--flink", "http://jm:8081", "--flink-prefix", "orders"}, `bad --flink-prefix "orders": want JOB=PREFIX`},
		{[]string{"snapshot", "--flink", "http://jm:8081", "--flink-prefix", "a=x", "--flink-prefix", "a=y"}, `--flink-prefix maps "a" to both "x" and "y"`},
		{[]string{"snapshot", "--flink-prefix", "a=x"}, "--flink-prefix needs --flink"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, err := parse(tt.args)
			if err == nil || !strings.HasPrefix(err.Error(), tt.msg) {
				t.Errorf("error %v, want %q", err, tt.msg)
			}
			if _, ok := err.(usageError); !ok {
				t.Errorf("%T is not a usage error", err)
			}
		})
	}
}

// Every row carries what dispatch, help and completion read from it.
func TestCommandRows(t *testing.T) {
	seen := map[command]bool{}
	for _, s := range commands {
		if seen[s.cmd] {
			t.Errorf("%s has two rows", s.cmd.title())
		}
		seen[s.cmd] = true
		if s.run == nil || s.synopsis == "" || strings.Contains(s.synopsis, "\n") {
			t.Errorf("%s: run %v, synopsis %q: want a run function and a one-line synopsis", s.cmd.title(), s.run != nil, s.synopsis)
		}
		// What changes the cluster is audited and confirmed.
		if s.acts && (!slices.Contains(s.flags, "audit-log") || !slices.Contains(s.flags, "yes")) {
			t.Errorf("%s changes the cluster but takes no --audit-log or --yes", s.cmd.title())
		}
	}
}
