package cli

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

var update = flag.Bool("update", false, "rewrite docs/cli.md's generated block from the table of commands")

const (
	docsPath   = "../../docs/cli.md"
	docsBegin  = "<!-- flags:begin -->\n"
	docsEnd    = "<!-- flags:end -->"
	auditLogIs = "`$XDG_STATE_HOME/txnscope/audit.log` (`~/.local/state/…`; none when neither is set)"
)

// docs/cli.md's commands and flags are the table's: go test ./internal/cli
// -run TestDocs -update rewrites them; without -update, a drift fails.
func TestDocs(t *testing.T) {
	doc, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatal(err)
	}
	begin, end := strings.Index(string(doc), docsBegin), strings.Index(string(doc), docsEnd)
	if begin < 0 || end < begin {
		t.Fatalf("%s has no %q … %q block", docsPath, docsBegin, docsEnd)
	}
	want := string(doc[:begin+len(docsBegin)]) + flagsDoc() + string(doc[end:])
	if want == string(doc) {
		return
	}
	if *update {
		if err := os.WriteFile(docsPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s differs from the table of commands: go test ./internal/cli -run TestDocs -update", docsPath)
}

// flagsDoc is the generated block: the commands with their flags, then every
// flag with its default and usage.
func flagsDoc() string {
	var b strings.Builder
	b.WriteString("| command | what it does | flags (besides `--help`, `--version`) |\n|---|---|---|\n")
	for _, s := range commands {
		line, alias, _ := strings.Cut(usageLine(s), "\n")
		if alias != "" {
			alias = "<br>" + strings.TrimSpace(alias)
		}
		fmt.Fprintf(&b, "| `%s`%s | %s | %s |\n", cell(line), cell(alias), cell(s.synopsis), cell(flagList(s.flags)))
	}
	var cluster []string
	for _, n := range clusterFlags {
		cluster = append(cluster, "`--"+n+"`")
	}
	b.WriteString("\nThe cluster flags are " + strings.Join(cluster, ", ") + ".\n")
	for _, g := range flagGroups() {
		fmt.Fprintf(&b, "\n**%s**\n\n| flag | default | meaning |\n|---|---|---|\n", g.title)
		g.set.VisitAll(func(f *pflag.Flag) {
			shape, usage := pflag.UnquoteUsage(f)
			spelled := "--" + f.Name
			if f.Shorthand != "" {
				spelled = "-" + f.Shorthand + ", " + spelled
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", cell(strings.TrimSpace(spelled+" "+shape)), cell(defaultOf(f)), cell(usage))
		})
	}
	return b.String()
}

// flagList spells names for a table cell: the cluster flags as one item.
func flagList(names []string) string {
	var items []string
	all := !slices.ContainsFunc(clusterFlags, func(n string) bool { return !slices.Contains(names, n) })
	if all {
		items = append(items, "cluster flags")
	}
	for _, n := range names {
		if !all || !slices.Contains(clusterFlags, n) {
			items = append(items, "`--"+n+"`")
		}
	}
	return strings.Join(items, ", ")
}

// defaultOf is the flag's default as the help shows it, the audit log's
// without this machine's home.
func defaultOf(f *pflag.Flag) string {
	switch {
	case f.Name == "audit-log":
		return auditLogIs
	case f.Value.Type() == "bool" || f.DefValue == "" || f.DefValue == "0" || f.DefValue == "0s" || f.DefValue == "-1":
		return ""
	}
	return "`" + f.DefValue + "`"
}

// cell escapes a table cell's pipes.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}
