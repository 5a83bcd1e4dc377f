package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// completion prints a shell completion script made from the table of
// commands: every command, the flags each takes, and the values of the flags
// whose usage names them as A|B|C (--output, --sasl-mechanism).
const cmdCompletion command = "completion"

var shells = []string{"bash", "zsh", "fish"}

func checkCompletion(c *config, _ func(string) bool) error {
	if !slices.Contains(shells, c.arg) {
		return usagef("completion needs the shell: %s", strings.Join(shells, ", "))
	}
	return nil
}

func runCompletion(_ context.Context, c config, std Stdio) error {
	script := fishCompletion()
	switch c.arg {
	case "bash":
		script = bashCompletion()
	case "zsh":
		// zsh runs bash's completion functions through bashcompinit.
		script = "#compdef txnscope\nautoload -U +X bashcompinit && bashcompinit\n" + bashCompletion()
	}
	_, err := io.WriteString(std.Out, script)
	return err
}

// flagValues is what follows flag name on the command line: its choices,
// "FILE" for a path, "" for a bool, "?" for anything else.
func flagValues(name string) string {
	f := flagSet(&config{}).Lookup(name)
	shape, _ := pflag.UnquoteUsage(f)
	switch {
	case f.Value.Type() == "bool":
		return ""
	case strings.Contains(shape, "|"):
		return strings.ReplaceAll(shape, "|", " ")
	case shape == "FILE" || shape == "PATH":
		return "FILE"
	}
	return "?"
}

// spellings are a flag's forms on the command line.
func spellings(name string) []string {
	if f := flagSet(&config{}).Lookup(name); f.Shorthand != "" {
		return []string{"-" + f.Shorthand, "--" + name}
	}
	return []string{"--" + name}
}

func bashCompletion() string {
	var b strings.Builder
	b.WriteString("# bash completion for txnscope: source <(txnscope completion bash)\n_txnscope() {\n" +
		"  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd= w\n" +
		"  for w in \"${COMP_WORDS[@]:1:COMP_CWORD-1}\"; do\n    case $w in\n")
	var names []string
	for _, s := range commands {
		if s.cmd != cmdTUI && s.cmd.kind() == string(s.cmd) {
			names = append(names, string(s.cmd))
		}
	}
	fmt.Fprintf(&b, "      %s) cmd=$w; break;;\n    esac\n  done\n  case $prev in\n", strings.Join(names, "|"))
	var all []string
	flagSet(&config{}).VisitAll(func(f *pflag.Flag) { all = append(all, f.Name) })
	for _, name := range all {
		switch v := flagValues(name); v {
		case "":
		case "FILE":
			fmt.Fprintf(&b, "    %s) COMPREPLY=($(compgen -f -- \"$cur\")); return;;\n", strings.Join(spellings(name), "|"))
		case "?":
			fmt.Fprintf(&b, "    %s) return;;\n", strings.Join(spellings(name), "|"))
		default:
			fmt.Fprintf(&b, "    %s) COMPREPLY=($(compgen -W %q -- \"$cur\")); return;;\n", strings.Join(spellings(name), "|"), v)
		}
	}
	b.WriteString("  esac\n  case $cmd in\n")
	for _, name := range append([]string{""}, names...) {
		s, _ := lookup(name)
		if name == "" {
			s = specOf(config{cmd: cmdTUI})
		}
		words := flagWords(s)
		switch {
		case s.arg != "":
			words = strings.ReplaceAll(s.arg, "|", " ")
		case name == "":
			words = strings.Join(names, " ") + " " + words
		case name == string(cmdDemo):
			words += " " + flagWords(specOf(config{cmd: cmdDemo, headless: true}))
		}
		fmt.Fprintf(&b, "    %q) COMPREPLY=($(compgen -W %q -- \"$cur\"));;\n", name, words)
	}
	b.WriteString("  esac\n}\ncomplete -F _txnscope txnscope\n")
	return b.String()
}

// flagWords are the spellings of the flags s takes, --help and --version.
func flagWords(s spec) string {
	var words []string
	for _, name := range slices.Concat(s.flags, everywhere) {
		words = append(words, spellings(name)...)
	}
	return strings.Join(words, " ")
}

func fishCompletion() string {
	var b strings.Builder
	b.WriteString("# fish completion for txnscope: txnscope completion fish | source\ncomplete -c txnscope -f\n")
	var names []string
	for _, s := range commands {
		if s.cmd != cmdTUI && s.cmd.kind() == string(s.cmd) {
			names = append(names, string(s.cmd))
			fmt.Fprintf(&b, "complete -c txnscope -n __fish_use_subcommand -a %s -d %s\n", s.cmd, fishQuote(s.synopsis))
		}
	}
	for _, s := range commands {
		cond := "__fish_use_subcommand"
		if s.cmd != cmdTUI {
			cond = "'__fish_seen_subcommand_from " + s.cmd.kind() + "'"
		}
		if s.arg != "" {
			fmt.Fprintf(&b, "complete -c txnscope -n %s -a %s\n", cond, fishQuote(strings.ReplaceAll(s.arg, "|", " ")))
		}
		for _, name := range slices.Concat(s.flags, everywhere) {
			fmt.Fprintf(&b, "complete -c txnscope -n %s%s\n", cond, fishFlag(name))
		}
	}
	return b.String()
}

// fishFlag is the rest of fish's complete line for flag name.
func fishFlag(name string) string {
	f := flagSet(&config{}).Lookup(name)
	line := " -l " + name
	if f.Shorthand != "" {
		line += " -s " + f.Shorthand
	}
	switch v := flagValues(name); v {
	case "":
	case "FILE":
		line += " -r -F"
	case "?":
		line += " -r"
	default:
		line += " -x -a " + fishQuote(v)
	}
	_, u := pflag.UnquoteUsage(f)
	return line + " -d " + fishQuote(u)
}

func fishQuote(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}
