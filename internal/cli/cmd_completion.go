package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/txnscope/txnscope/internal/conn"
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

// choices are the values of the flags whose usage lists them in words (a
// test checks it names each); --output's usage shows them as its shape.
var choices = map[string][]string{
	"sasl-mechanism": conn.Mechanisms(),
}

// flagValues is what follows flag name on the command line: its choices,
// "FILE" for a path, "" for a bool, "?" for anything else.
func flagValues(name string) string {
	f := flagSet(&config{}).Lookup(name)
	shape, _ := pflag.UnquoteUsage(f)
	switch {
	case f.Value.Type() == "bool":
		return ""
	case choices[name] != nil:
		return strings.Join(choices[name], " ")
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
		"  for w in \"${COMP_WORDS[@]:1:$((COMP_CWORD-1))}\"; do\n    case $w in\n")
	var names []string
	for _, s := range commands {
		if s.cmd != cmdTUI && s.cmd.kind() == string(s.cmd) {
			names = append(names, string(s.cmd))
		}
	}
	fmt.Fprintf(&b, "      %s) cmd=$w; break;;\n", strings.Join(names, "|"))
	for alias, cmd := range commandAliases {
		fmt.Fprintf(&b, "      %s) cmd=%s; break;;\n", alias, cmd)
	}
	b.WriteString("    esac\n  done\n  case $prev in\n")
	var files, others []string
	flagSet(&config{}).VisitAll(func(f *pflag.Flag) {
		switch v := flagValues(f.Name); v {
		case "":
		case "FILE":
			files = append(files, spellings(f.Name)...)
		case "?":
			others = append(others, spellings(f.Name)...)
		default:
			fmt.Fprintf(&b, "    %s) COMPREPLY=($(compgen -W %q -- \"$cur\")); return;;\n", strings.Join(spellings(f.Name), "|"), v)
		}
	})
	fmt.Fprintf(&b, "    %s) COMPREPLY=($(compgen -f -- \"$cur\")); return;;\n", strings.Join(files, "|"))
	fmt.Fprintf(&b, "    %s) return;;\n", strings.Join(others, "|"))
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
			words = flagWords(s, specOf(config{cmd: cmdDemo, headless: true}))
		}
		fmt.Fprintf(&b, "    %q) COMPREPLY=($(compgen -W %q -- \"$cur\"));;\n", name, words)
	}
	b.WriteString("  esac\n}\ncomplete -F _txnscope txnscope\n")
	return b.String()
}

// flagWords are the spellings of the flags the rows take, --help and --version.
func flagWords(rows ...spec) string {
	var words []string
	for _, s := range rows {
		for _, name := range slices.Concat(s.flags, everywhere) {
			for _, w := range spellings(name) {
				if !slices.Contains(words, w) {
					words = append(words, w)
				}
			}
		}
	}
	return strings.Join(words, " ")
}

func fishCompletion() string {
	var b strings.Builder
	b.WriteString("# fish completion for txnscope: txnscope completion fish | source\ncomplete -c txnscope -f\n")
	for _, s := range commands {
		if s.cmd != cmdTUI && s.cmd.kind() == string(s.cmd) {
			fmt.Fprintf(&b, "complete -c txnscope -n __fish_use_subcommand -a %s -d %s\n", s.cmd, fishQuote(s.synopsis))
		}
	}
	done := map[string]bool{} // demo's flags and demo --headless's are one list
	for _, s := range commands {
		cond := "__fish_use_subcommand"
		if s.cmd != cmdTUI {
			cond = "'__fish_seen_subcommand_from " + s.cmd.kind() + "'"
		}
		if s.arg != "" {
			fmt.Fprintf(&b, "complete -c txnscope -n %s -a %s\n", cond, fishQuote(strings.ReplaceAll(s.arg, "|", " ")))
		}
		for _, name := range slices.Concat(s.flags, everywhere) {
			if line := fmt.Sprintf("complete -c txnscope -n %s%s\n", cond, fishFlag(name)); !done[line] {
				done[line] = true
				b.WriteString(line)
			}
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
