package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
)

// ManPages are the manual pages, file name → roff, one per command of the
// table: txnscope.1 for the UI (listing every command), txnscope-NAME.1
// for the others. docs/man/ holds them, kept equal by TestManPages; the
// release archives ship them.
func ManPages() map[string]string {
	pages := map[string]string{}
	for _, s := range commands {
		if strings.Contains(string(s.cmd), " ") {
			continue // demo --headless is a flag of demo's page
		}
		pages[manName(s.cmd)+".1"] = manPage(s)
	}
	return pages
}

func manName(cmd command) string {
	if cmd == cmdTUI {
		return "txnscope"
	}
	return "txnscope-" + string(cmd)
}

// manPage is s's page: its name and synopsis, what it does, its flags as
// its --help lists them, and where to read more.
func manPage(s spec) string {
	var b strings.Builder
	name := manName(s.cmd)
	fmt.Fprintf(&b, ".TH %s 1 \"\" \"txnscope\" \"txnscope manual\"\n", strings.ToUpper(name))
	fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n", name, roff(s.synopsis))
	b.WriteString(".SH SYNOPSIS\n")
	for _, line := range strings.Split(usageLine(s), "\n") {
		fmt.Fprintf(&b, ".nf\n%s\n.fi\n", roff(strings.TrimSpace(line)))
	}
	b.WriteString(".SH DESCRIPTION\n")
	fmt.Fprintf(&b, "%s.\n", roff(capitalize(s.synopsis)))
	if notes := strings.TrimSpace(commandNotes(s)); notes != "" {
		fmt.Fprintf(&b, ".PP\n%s\n", roff(strings.Join(strings.Fields(notes), " ")))
	}
	if s.cmd == cmdTUI {
		b.WriteString(".PP\nThe commands:\n")
		for _, c := range commands {
			if c.cmd == cmdTUI {
				continue
			}
			fmt.Fprintf(&b, ".TP\n.B %s\n%s\n", roff("txnscope "+string(c.cmd)), roff(c.synopsis))
		}
	}
	own, cluster := commandFlags(s)
	b.WriteString(".SH OPTIONS\n")
	manFlags(&b, own)
	if cluster != nil {
		b.WriteString(".SS Cluster flags (they win over \\-\\-command\\-config)\n")
		manFlags(&b, cluster)
	}
	b.WriteString(".SH EXIT STATUS\n0 success, 1 the cluster could not be read or an abort was refused or failed, 2 bad usage " +
		"(a flag the command does not take is refused, never ignored).\n")
	if cluster != nil {
		fmt.Fprintf(&b, ".SH FILES\n%s\n", roff(strings.Join(strings.Fields(filesNote), " ")))
	}
	b.WriteString(".SH SEE ALSO\n")
	var see []string
	if s.cmd != cmdTUI {
		see = append(see, "txnscope(1)")
	}
	see = append(see, "kafka-transactions.sh(1)")
	fmt.Fprintf(&b, "%s; the documentation in docs/ of the source (https://github.com/txnscope/txnscope): cli.md, screens.md, aborting.md, alerting.md.\n",
		roff(strings.Join(see, ", ")))
	return b.String()
}

// manFlags writes fs's flags as tagged paragraphs, as --help words them.
func manFlags(b *strings.Builder, fs *pflag.FlagSet) {
	fs.VisitAll(func(f *pflag.Flag) {
		varname, usage := pflag.UnquoteUsage(f)
		tag := "\\fB\\-\\-" + roff(f.Name) + "\\fR"
		if f.Shorthand != "" {
			tag = "\\fB\\-" + roff(f.Shorthand) + "\\fR, " + tag
		}
		if varname != "" && varname != "bool" {
			tag += " \\fI" + roff(varname) + "\\fR"
		}
		switch {
		case f.Name == "audit-log":
			// The default is the user's own path: the page says how it is made.
			usage += " (default $XDG_STATE_HOME/txnscope/audit.log, or ~/.local/state/txnscope/audit.log)"
		case f.DefValue != "" && f.DefValue != "false" && f.DefValue != "[]":
			usage += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(b, ".TP\n%s\n%s\n", tag, roff(usage))
	})
}

// roff escapes text for a man page: a backslash is \e, a dash \-, and a
// line may not begin with a dot or a quote, which roff takes for a request.
func roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			lines[i] = `\&` + l
		}
	}
	return strings.Join(lines, "\n")
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
