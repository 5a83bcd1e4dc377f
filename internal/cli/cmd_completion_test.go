package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// script is txnscope completion shell's output, in a file.
func script(t *testing.T, shell string) string {
	t.Helper()
	code, out, errs := runArgs(t, "completion", shell)
	if code != 0 || errs != "" || out == "" {
		t.Fatalf("completion %s: exit %d, stderr %q", shell, code, errs)
	}
	p := filepath.Join(t.TempDir(), "txnscope."+shell)
	if err := os.WriteFile(p, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Every script parses in its shell (zsh and fish when installed).
func TestCompletionParses(t *testing.T) {
	for _, shell := range shells {
		t.Run(shell, func(t *testing.T) {
			if _, err := exec.LookPath(shell); err != nil {
				t.Skipf("%s is not installed", shell)
			}
			if out, err := exec.Command(shell, "-n", script(t, shell)).CombinedOutput(); err != nil {
				t.Errorf("%s -n: %v\n%s", shell, err, out)
			}
		})
	}
}

// The bash completion offers the commands, the flags the command takes
// (and no other), and the values of --output, --sasl-mechanism and the shell.
func TestCompletionBash(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	file := script(t, "bash")
	for _, tt := range []struct {
		line string // the words typed; the last is being completed
		want string
	}{
		{"txnscope sn", "snapshot"},
		{"txnscope find-hanging --to", "--topic"},
		{"txnscope list --to", ""},
		{"txnscope list --ref", ""},
		{"txnscope --ref", "--refresh"},
		{"txnscope snapshot -o ", "table json"},
		{"txnscope list --sasl-mechanism SC", "SCRAM-SHA-256 SCRAM-SHA-512"},
		{"txnscope completion ", "bash zsh fish"},
		{"txnscope demo --he", "--headless --help"},
		{"txnscope forceTerminateTransaction --transactionalI", "--transactionalId"},
		{"txnscope abort --topic ", ""},
	} {
		words := strings.Split(tt.line, " ")
		sh := `source "$1"; COMP_WORDS=("${@:2}"); COMP_CWORD=$(($# - 2)); _txnscope; echo "${COMPREPLY[*]}"`
		out, err := exec.Command("bash", append([]string{"-c", sh, "bash", file}, words...)...).CombinedOutput()
		if got := strings.TrimSpace(string(out)); err != nil || got != tt.want {
			t.Errorf("%q: %q, %v; want %q", tt.line, got, err, tt.want)
		}
	}
}

// A flag's choices are the ones its usage names.
func TestCompletionChoicesInUsage(t *testing.T) {
	for name, values := range choices {
		f := flagSet(&config{}).Lookup(name)
		if f == nil {
			t.Fatalf("--%s is no flag", name)
		}
		for _, v := range values {
			if !strings.Contains(f.Usage, v) {
				t.Errorf("--%s's usage does not name %s", name, v)
			}
		}
	}
}

// fish offers the same, from its own script (when installed).
func TestCompletionFish(t *testing.T) {
	if _, err := exec.LookPath("fish"); err != nil {
		t.Skip("fish is not installed")
	}
	file := script(t, "fish")
	for line, want := range map[string][]string{
		"txnscope snapshot -o ":       {"json", "table"},
		"txnscope find-hanging --top": {"--topic"},
		"txnscope li":                 {"list"},
		"txnscope completion ":        {"bash", "fish", "zsh"}, // fish sorts them
	} {
		out, err := exec.Command("fish", "-c", `source $argv[1]; complete -C $argv[2]`, file, line).CombinedOutput()
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			w, _, _ := strings.Cut(l, "\t")
			got = append(got, w)
		}
		if err != nil || strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%q: %q, %v; want %q", line, got, err, want)
		}
	}
}
