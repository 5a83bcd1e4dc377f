package cli

import (
	"context"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// command names a row of the table: what txnscope was asked to do.
type command string

// spec is one row of the table of commands. Dispatch, the refusal of a flag
// the command does not take, its --help, the global usage, shell completion
// and docs/cli.md are all made from these rows.
type spec struct {
	cmd      command
	synopsis string // one line
	// shape is how its own flags go together, for its usage line.
	shape string
	// flags are the flags it takes besides --help and --version.
	flags []string
	// acts: it changes the cluster (--read-only refuses it).
	acts bool
	// oneShot: one of kafka-transactions.sh's commands, listed together.
	oneShot bool
	// arg, when set, is the one argument it takes after its name; args is
	// how many it may take (0: one, when arg is set).
	arg  string
	args int
	// why, when set, tells in a refusal why the command does not take one
	// of the flags whyFor (nil: any flag).
	why    string
	whyFor []string
	// check refuses a combination of flags the command cannot run with;
	// given says whether a flag was given. nil: none to check.
	check func(c *config, given func(string) bool) error
	run   func(ctx context.Context, c config, std Stdio) error
}

// Flags shared by several commands.
var (
	// clusterFlags: where the cluster is and how to reach it.
	clusterFlags = slices.Concat(contextFlags, []string{"bootstrap-server", "timeout", "command-config"}, tlsFlagNames, saslFlagNames)
	// uiFlags: the UI, and the audit log behind its abort dialogs.
	// flinkFlags say where Flink's jobs and checkpoints are.
	flinkFlagNames = []string{"flink", "flink-prefix", "flink-checkpoints", "s3-endpoint", "s3-path-style", "s3-region"}
	uiFlags        = slices.Concat([]string{"refresh", "read-only", "audit-log", "checkpoint-interval", "history"}, flinkFlagNames)
	// readFlags: the one-shot commands' common flags. --read-only goes with
	// the commands that only read too, so that a wrapper can always pass it.
	readFlags = slices.Concat(clusterFlags, []string{"output", "read-only"})
	// actFlags: the one-shot commands that change the cluster.
	actFlags = slices.Concat(readFlags, []string{"audit-log", "yes"})
)

// commands is the one table of the commands, in the order the help lists
// them: a command is its row here and its file, cmd_NAME.go. It is filled in
// init because completion's run reads it (a cycle to the compiler).
var commands []spec

func init() {
	commands = []spec{
		{cmd: cmdTUI, synopsis: "open the terminal UI on a cluster",
			flags: slices.Concat(clusterFlags, uiFlags), run: runTUICommand},
		{cmd: cmdDemo, synopsis: "start an embedded demo cluster and open the UI on it",
			flags: slices.Concat([]string{"timeout", "headless"}, uiFlags), why: "it runs its own plaintext cluster", whyFor: clusterFlags,
			run: runDemoTUI},
		{cmd: cmdDemoHeadless, synopsis: `the demo cluster without the UI, until SIGINT/SIGTERM; stdout starts "bootstrap: HOST:PORT,..."`,
			flags: []string{"headless"}, why: "it runs the cluster without the UI", run: runHeadless},
		{cmd: cmdSnapshot, synopsis: "print every transaction once and exit",
			flags: slices.Concat(clusterFlags, []string{"output", "read-only", "checkpoint-interval", "since", "history"}, flinkFlagNames), check: checkSnapshot, run: runSnapshot},
		{cmd: cmdExporter, synopsis: "serve the UI's refresh as Prometheus metrics on /metrics, and /healthz, until SIGINT/SIGTERM",
			shape: "[--listen HOST:PORT]",
			flags: slices.Concat(clusterFlags, []string{"listen", "refresh", "history", "max-id-series"}), check: checkListen, run: runExporter},
		{cmd: cmdList, synopsis: "list the transactions the coordinators know, with their state", oneShot: true,
			shape: "[--duration-filter MS] [--transactional-id-pattern REGEX] [--state STATE,...]",
			flags: slices.Concat(readFlags, []string{"duration-filter", "transactional-id-pattern", "state"}), run: withClient(runList)},
		{cmd: cmdDescribe, synopsis: "one transaction: its producer, state, timeout, start and partitions", oneShot: true,
			shape: "--transactional-id ID",
			flags: slices.Concat(readFlags, []string{"transactional-id", "transactionalId"}), check: checkTransactionalID, run: withClient(runDescribe)},
		{cmd: cmdDescribeProducers, synopsis: "the producers of one partition, and where their open transactions start", oneShot: true,
			shape: "--topic T --partition P [--broker-id B]",
			flags: slices.Concat(readFlags, []string{"topic", "partition", "broker-id"}), check: checkDescribeProducers, run: withClient(runDescribeProducers)},
		{cmd: cmdFindHanging, synopsis: "find hanging transactions: open on a partition, unknown to their coordinator", oneShot: true,
			shape: "(--topic T [--partition P] | --broker-id B) [--max-transaction-timeout MIN]",
			flags: slices.Concat(readFlags, []string{"topic", "partition", "broker-id", "max-transaction-timeout"}), check: checkFindHanging, run: withClient(runFindHanging)},
		{cmd: cmdAbort, synopsis: "abort one open transaction on a partition (changes the cluster)", oneShot: true, acts: true,
			shape: "--topic T --partition P (--start-offset O | --producer-id PID --producer-epoch E --coordinator-epoch CE) [--max-transaction-timeout MIN] [--yes]",
			flags: slices.Concat(actFlags, []string{"topic", "partition", "start-offset", "producer-id", "producer-epoch", "coordinator-epoch", "max-transaction-timeout"}),
			check: checkAbort, run: withClient(runAbort)},
		{cmd: cmdForceTerminate, synopsis: "abort the ongoing transaction of a transactional id (changes the cluster)", oneShot: true, acts: true,
			shape: "--transactional-id ID [--yes]",
			flags: slices.Concat(actFlags, []string{"transactional-id", "transactionalId"}), check: checkTransactionalID, run: withClient(runForceTerminate)},
		{cmd: cmdCommit, synopsis: "commit the ongoing transaction of a transactional id whose Flink checkpoint completed (changes the cluster)", acts: true,
			shape: "--transactional-id ID (--flink URL | --flink-checkpoints PREFIX=LOCATION | --unverified) [--yes]",
			flags: slices.Concat(actFlags, []string{"transactional-id", "unverified"}, flinkFlagNames), check: checkCommit, run: withClient(runCommit)},
		{cmd: cmdResolve, synopsis: "end a stopped Flink job's open transactions: commit the checkpointed ones, abort the rest (changes the cluster)", acts: true,
			shape: "--job PREFIX (--flink URL | --flink-checkpoints PREFIX=LOCATION) [--yes]",
			flags: slices.Concat(actFlags, []string{"job"}, flinkFlagNames), check: checkResolve, run: withClient(runResolve)},
		{cmd: cmdConfig, synopsis: "the config file's contexts: list, show [NAME], use NAME, add NAME [flags], delete NAME, validate [NAME]",
			arg: "list|show|use|add|delete|validate [NAME]", args: 2, shape: "[--label TEXT] [--color COLOR] [--protected]",
			flags: configFlagNames(), why: "it is about the config file, not a cluster", check: checkConfig, run: runConfig},
		{cmd: cmdCompletion, synopsis: "print a shell completion script, for bash, zsh or fish", arg: "bash|zsh|fish",
			check: checkCompletion, run: runCompletion},
	}
}

// commandAliases are kafka-transactions.sh's own spellings.
var commandAliases = map[string]command{"forceTerminateTransaction": cmdForceTerminate}

// everywhere are the flags every command takes.
var everywhere = []string{"help", "version"}

// lookup is the row of the command named name on the command line (an
// alias included); demo --headless is found through specOf.
func lookup(name string) (spec, bool) {
	if alias, ok := commandAliases[name]; ok {
		name = string(alias)
	}
	for _, s := range commands {
		if s.cmd != cmdTUI && string(s.cmd) == name {
			return s, true
		}
	}
	return spec{}, false
}

// specOf is c's row of the table.
func specOf(c config) spec {
	cmd := c.cmd
	if cmd == cmdDemo && c.headless {
		cmd = cmdDemoHeadless
	}
	for _, s := range commands {
		if s.cmd == cmd {
			return s
		}
	}
	return spec{cmd: cmd} // not reached: a test checks every command has its row
}

// named are the commands given by name, for messages: the UI has none,
// demo --headless is demo, and completion is about txnscope, not a cluster.
func named() []string {
	var names []string
	for _, s := range commands {
		if s.cmd != cmdTUI && !s.aside() && !slices.Contains(names, s.cmd.kind()) {
			names = append(names, s.cmd.kind())
		}
	}
	return names
}

// aside: the row takes no flag, as --help and --version: it is about
// txnscope itself, so "every other command" does not count it.
func (s spec) aside() bool { return len(s.flags) == 0 }

// title names a command in messages.
func (c command) title() string {
	if c == cmdTUI {
		return "the UI"
	}
	return string(c)
}

// kind is the command's first word: demo for demo --headless.
func (c command) kind() string {
	w, _, _ := strings.Cut(string(c), " ")
	return w
}

// notApplying refuses the first flag given that c's command does not take:
// a flag silently ignored would run the command with a meaning nobody asked
// for.
func notApplying(fs *pflag.FlagSet, c config) error {
	s := specOf(c)
	var bad error
	fs.Visit(func(f *pflag.Flag) {
		if bad != nil || slices.Contains(s.flags, f.Name) || slices.Contains(everywhere, f.Name) {
			return
		}
		msg := "--" + f.Name + " does not apply to " + s.cmd.title()
		if s.why != "" && (s.whyFor == nil || slices.Contains(s.whyFor, f.Name)) {
			msg += ": " + s.why
		}
		if where := takers(f.Name, s.cmd); where != "" {
			msg += " (it goes with " + where + ")"
		}
		bad = usageError{msg}
	})
	return bad
}

// takers says which commands take flag: "every other command" when only
// refuser's kind (demo and demo --headless are one) does not, else by name.
func takers(flag string, refuser command) string {
	var with []string
	others := true
	for _, s := range commands {
		switch {
		case s.cmd == cmdConfig && refuser != cmdConfig:
			// config add writes most flags into a context: not where they go.
		case slices.Contains(s.flags, flag):
			with = append(with, s.cmd.title())
		case s.cmd.kind() != refuser.kind() && !s.aside():
			others = false
		}
	}
	if len(with) == 0 && refuser != cmdConfig && slices.Contains(specOf(config{cmd: cmdConfig}).flags, flag) {
		return "config add"
	}
	if others && len(with) > 0 {
		return "every other command"
	}
	return strings.Join(with, ", ")
}
