package cli

import (
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// cmdDemoHeadless is demo --headless: the cluster without the UI, which
// takes none of the UI's flags. It is never c.cmd, only a row of the table.
const cmdDemoHeadless command = "demo --headless"

// spec is one row of the table of commands: which flags the command takes.
// --help and --version go with every command.
type spec struct {
	cmd   command
	flags []string
	// why, when set, tells in a refusal why the command does not take one
	// of the flags whyFor (nil: any flag).
	why    string
	whyFor []string
}

// Flags shared by several commands.
var (
	// clusterFlags: where the cluster is and how to reach it.
	clusterFlags = slices.Concat([]string{"bootstrap-server", "timeout", "command-config"}, tlsFlagNames, saslFlagNames)
	// uiFlags: the UI, and the audit log behind its abort dialogs.
	uiFlags = []string{"refresh", "read-only", "audit-log", "checkpoint-interval"}
	// readFlags: the one-shot commands' common flags. --read-only goes with
	// the commands that only read too, so that a wrapper can always pass it.
	readFlags = slices.Concat(clusterFlags, []string{"output", "read-only"})
	// actFlags: the one-shot commands that change the cluster.
	actFlags = slices.Concat(readFlags, []string{"audit-log", "yes"})
)

// commands is the one table of the commands and the flags each takes: parse
// refuses any other flag given, naming the commands it would apply to.
var commands = []spec{
	{cmd: cmdTUI, flags: slices.Concat(clusterFlags, uiFlags)},
	{cmd: cmdDemo, flags: slices.Concat([]string{"timeout", "headless"}, uiFlags), why: "it runs its own plaintext cluster", whyFor: clusterFlags},
	{cmd: cmdDemoHeadless, flags: []string{"headless"}, why: "it runs the cluster without the UI"},
	{cmd: cmdSnapshot, flags: slices.Concat(clusterFlags, []string{"output", "read-only", "checkpoint-interval"})},
	{cmd: cmdList, flags: slices.Concat(readFlags, []string{"duration-filter", "transactional-id-pattern"})},
	{cmd: cmdDescribe, flags: slices.Concat(readFlags, []string{"transactional-id", "transactionalId"})},
	{cmd: cmdDescribeProducers, flags: slices.Concat(readFlags, []string{"topic", "partition", "broker-id"})},
	{cmd: cmdFindHanging, flags: slices.Concat(readFlags, []string{"topic", "partition", "broker-id", "max-transaction-timeout"})},
	{cmd: cmdAbort, flags: slices.Concat(actFlags, []string{"topic", "partition", "start-offset", "producer-id", "producer-epoch", "coordinator-epoch", "max-transaction-timeout"})},
	{cmd: cmdForceTerminate, flags: slices.Concat(actFlags, []string{"transactional-id", "transactionalId"})},
}

// everywhere are the flags every command takes.
var everywhere = []string{"help", "version"}

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

// title names a command in messages.
func (c command) title() string {
	if c == cmdTUI {
		return "the UI"
	}
	return string(c)
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
		case slices.Contains(s.flags, flag):
			with = append(with, s.cmd.title())
		case s.cmd.kind() != refuser.kind():
			others = false
		}
	}
	if others && len(with) > 0 {
		return "every other command"
	}
	return strings.Join(with, ", ")
}

// kind is the command's first word: demo for demo --headless.
func (c command) kind() string {
	w, _, _ := strings.Cut(string(c), " ")
	return w
}
