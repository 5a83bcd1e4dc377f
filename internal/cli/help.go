package cli

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// helpWidth is where the flags' usage strings wrap.
const helpWidth = 100

const intro = "txnscope shows every Kafka transaction live and aborts stuck ones safely.\n"

// oneShotNote closes the list of one-shot commands in the usage.
const oneShotNote = `  -o json prints them as JSON. abort and force-terminate show the transaction's start time,
  re-check the target just before every request, refuse unless it is the very transaction
  shown, and write each request to the audit log before it goes out.
`

// The footer closes every help: the facts about durations and files go
// where a flag takes one.
const (
	durationsNote = "DURATION is like 500ms, 2s, 1m30s.\n"
	filesNote     = `Files (--command-config, --sasl-password-file, --tls-*, and the files a properties file
names) must be regular files of at most 4 MiB; one holding a secret that other users can read
is warned about.
`
	exitNote = `A flag the command does not take is refused, never ignored. Exit status: 0 success, 1 the
cluster could not be read or an abort was refused or failed, 2 bad usage.
`
	footer = durationsNote + filesNote + exitNote
)

// help is what --help prints: the usage, or the help of the command given.
func help(c config) string {
	if c.cmd == cmdTUI {
		return usage()
	}
	return commandHelp(specOf(c))
}

// usage is the global help: the commands with their synopses, then every
// flag in its group.
func usage() string {
	var b strings.Builder
	b.WriteString(intro + "\nUsage:\n")
	var plain, oneShots []spec
	for _, s := range commands {
		if s.oneShot {
			oneShots = append(oneShots, s)
		} else {
			plain = append(plain, s)
		}
	}
	width := 0
	for _, s := range commands {
		width = max(width, len(synopsisLine(s)))
	}
	writeSynopses(&b, plain, width)
	b.WriteString("\nOne-shot commands (kafka-transactions.sh's, with its flags, columns and semantics):\n")
	writeSynopses(&b, oneShots, width)
	b.WriteString(oneShotNote)
	for _, g := range flagGroups() {
		fmt.Fprintf(&b, "\n%s:\n%s", g.title, g.set.FlagUsagesWrapped(helpWidth))
	}
	b.WriteString("\nRun `txnscope COMMAND --help` for the flags a command takes.\n" + footer)
	return b.String()
}

// writeSynopses lists commands, one line each, synopses aligned at width.
func writeSynopses(b *strings.Builder, rows []spec, width int) {
	for _, s := range rows {
		fmt.Fprintf(b, "  %-*s  %s\n", width, synopsisLine(s), s.synopsis)
	}
}

// synopsisLine is how the usage spells s before its synopsis.
func synopsisLine(s spec) string {
	line := strings.TrimSpace("txnscope " + string(s.cmd) + " " + s.arg)
	if len(s.flags) > 1 || s.cmd == cmdTUI {
		line += " [flags]"
	}
	return line
}

// commandHelp is s's --help: its synopsis, its usage line and only the flags
// it takes.
func commandHelp(s spec) string {
	var b strings.Builder
	fmt.Fprintf(&b, "txnscope %s: %s\n\nUsage:\n  %s\n", s.cmd, s.synopsis, usageLine(s))
	b.WriteString(commandNotes(s))
	return b.String() + commandFlagsHelp(s)
}

// commandNotes are the paragraphs of s's --help between its usage line
// and its flags ("" for most), and of its man page's description.
func commandNotes(s spec) string {
	var b strings.Builder
	if s.oneShot {
		name := cmp.Or(aliasOf(s.cmd), string(s.cmd))
		b.WriteString("\nkafka-transactions.sh's " + name + ", with its flags, columns and semantics; -o json prints JSON.\n")
	}
	switch s.cmd {
	case cmdConfig:
		b.WriteString("\n")
		for _, v := range configVerbs {
			fmt.Fprintf(&b, "  %-9s %s\n", v.verb, v.what)
		}
		b.WriteString("The file is YAML: current-context, and contexts by name, each holding flags by their names\n" +
			"(bootstrap-server, command-config or properties, flink, ...), label, color, read-only, protected.\n" +
			"${VARIABLE} is read from the environment. docs/contexts.md.\n")
	case cmdCommit:
		b.WriteString("It sends EndTxn(commit) with the transaction's own producer id and epoch, as Flink's committer\n" +
			"would have, only when its checkpoint completed (--flink, --flink-checkpoints) and Flink does not\n" +
			"run the job; the evidence is read again just before every request. docs/aborting.md.\n")
	case cmdResolve:
		b.WriteString("For each open transaction of the job: commit when its checkpoint completed, force-terminate when\n" +
			"it never did, leave open (and say why) when that is not known. One confirmation; each is then\n" +
			"re-checked and audited on its own. Refused while Flink says the job runs. docs/aborting.md.\n")
	}
	if s.acts {
		b.WriteString("It shows the transaction's start time, re-checks the target just before every request,\n" +
			"refuses unless it is the very transaction shown, and writes each request to the audit log\nbefore it goes out.\n")
	}
	return b.String()
}

// commandFlagsHelp is the rest of s's --help: its flags, then the notes.
func commandFlagsHelp(s spec) string {
	var b strings.Builder
	own, cluster := commandFlags(s)
	fmt.Fprintf(&b, "\nFlags:\n%s", own.FlagUsagesWrapped(helpWidth))
	if cluster != nil {
		fmt.Fprintf(&b, "\nCluster flags (they win over --command-config):\n%s", cluster.FlagUsagesWrapped(helpWidth))
	}
	b.WriteString("\n")
	if slices.ContainsFunc(s.flags, func(name string) bool { return flagSet(&config{}).Lookup(name).Value.Type() == "duration" }) {
		b.WriteString(durationsNote)
	}
	if cluster != nil {
		b.WriteString(filesNote)
	}
	return b.String() + exitNote
}

// commandFlags are the flags s takes, as its --help and man page list
// them: its own with --help and --version, and apart the cluster flags of
// a command that connects (nil otherwise).
func commandFlags(s spec) (own, cluster *pflag.FlagSet) {
	connects := slices.Contains(s.flags, "bootstrap-server")
	isCluster := func(name string) bool { return connects && slices.Contains(clusterFlags, name) }
	own = flagsOf(s.flags, func(name string) bool { return !isCluster(name) })
	if f := own.Lookup("refresh"); f != nil && s.cmd == cmdExporter {
		f.DefValue = short(defaultExporterRefresh) // its own default, not the UI's
	}
	for _, name := range everywhere {
		own.AddFlag(helpFlag(name))
	}
	if connects {
		cluster = flagsOf(s.flags, isCluster)
	}
	return own, cluster
}

// usageLine is how s is spelled on the command line.
func usageLine(s spec) string {
	line := strings.Join(strings.Fields("txnscope "+string(s.cmd)+" "+s.arg+" "+s.shape), " ")
	if len(s.flags) > 1 || s.cmd == cmdTUI {
		line += " [flags]"
	}
	if alias := aliasOf(s.cmd); alias != "" {
		line += "\n  (also spelled txnscope " + alias + ")"
	}
	return line
}

// aliasOf is kafka-transactions.sh's spelling of cmd, if it differs.
func aliasOf(cmd command) string {
	for alias, c := range commandAliases {
		if c == cmd {
			return alias
		}
	}
	return ""
}

const clusterTitle = "Cluster flags (not with demo; flags win over --command-config)"

type flagGroup struct {
	title string
	set   *pflag.FlagSet
}

// flagGroups sorts every flag into the usage's groups: those of the UI and
// of several commands, those that say where the cluster is and how to reach
// it, and those only the one-shot commands take.
func flagGroups() []flagGroup {
	oneShotOnly := func(name string) bool {
		taken := false
		for _, s := range commands {
			if slices.Contains(s.flags, name) {
				if !s.oneShot {
					return false
				}
				taken = true
			}
		}
		return taken
	}
	var all []string
	flagSet(&config{}).VisitAll(func(f *pflag.Flag) { all = append(all, f.Name) })
	return []flagGroup{
		{"Flags", flagsOf(all, func(n string) bool { return !slices.Contains(clusterFlags, n) && !oneShotOnly(n) })},
		{clusterTitle, flagsOf(all, func(n string) bool { return slices.Contains(clusterFlags, n) })},
		{"One-shot commands' flags", flagsOf(all, oneShotOnly)},
	}
}

// flagsOf is a flag set holding copies of the flags names that keep holds,
// in the order of flagSet, for FlagUsages.
func flagsOf(names []string, keep func(string) bool) *pflag.FlagSet {
	fs := pflag.NewFlagSet("help", pflag.ContinueOnError)
	fs.SortFlags = false
	flagSet(&config{}).VisitAll(func(f *pflag.Flag) {
		if slices.Contains(names, f.Name) && keep(f.Name) {
			fs.AddFlag(helpFlag(f.Name))
		}
	})
	return fs
}

// helpFlag is a copy of the flag name for the help. pflag's "(default X)"
// is left out where it would mislead: a number defaulting to -1 stands for
// not given (--duration-filter's usage says what -1 means there), and a
// usage that states its defaults itself knows them better.
func helpFlag(name string) *pflag.Flag {
	f := *flagSet(&config{}).Lookup(name)
	if f.DefValue == "-1" || strings.Contains(f.Usage, "default") {
		f.Value, f.DefValue = helpValue{f.Value}, ""
	}
	if f.Value.Type() == "bool" {
		f.Value = helpValue{f.Value}
	}
	return &f
}

// helpValue hides from pflag's usage that a value is a bool flag, which it
// would write --read-only[=true|false] for a flag one gives bare, and lets
// an empty default mean none whatever the type.
type helpValue struct{ pflag.Value }
