package cli

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const manDir = "../../docs/man"

// docs/man/ holds the table's man pages: go test ./internal/cli -run
// TestManPages -update rewrites them; without -update, a drift fails, and
// so does a page no command makes any more.
func TestManPages(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "")
	pages := ManPages()
	if *update {
		if err := os.MkdirAll(manDir, 0o755); err != nil {
			t.Fatal(err)
		}
		old, _ := filepath.Glob(filepath.Join(manDir, "*.1"))
		for _, f := range old {
			os.Remove(f)
		}
		for name, page := range pages {
			if err := os.WriteFile(filepath.Join(manDir, name), []byte(page), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	files, _ := filepath.Glob(filepath.Join(manDir, "*.1"))
	var have []string
	for _, f := range files {
		have = append(have, filepath.Base(f))
	}
	if want := slices.Sorted(maps.Keys(pages)); !slices.Equal(have, want) {
		t.Fatalf("docs/man holds %v, the table makes %v: go test ./internal/cli -run TestManPages -update", have, want)
	}
	for name, page := range pages {
		b, err := os.ReadFile(filepath.Join(manDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != page {
			t.Errorf("docs/man/%s differs from the table of commands: go test ./internal/cli -run TestManPages -update", name)
		}
	}
}

// Every page is one man renders without a warning, naming every flag its
// command takes.
func TestManPagesRender(t *testing.T) {
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Skip("no groff to render the pages with")
	}
	for _, s := range commands {
		if strings.Contains(string(s.cmd), " ") {
			continue
		}
		page := ManPages()[manName(s.cmd)+".1"]
		cmd := exec.Command(groff, "-man", "-Tutf8", "-ww")
		cmd.Stdin = strings.NewReader(page)
		var out, errs strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errs
		if err := cmd.Run(); err != nil || errs.Len() > 0 {
			t.Errorf("%s: groff: %v %s", manName(s.cmd), err, errs.String())
		}
		text := strings.ReplaceAll(stripOverstrike(out.String()), "\u2010", "-")
		for _, f := range s.flags {
			if !strings.Contains(text, "--"+f) {
				t.Errorf("%s.1 does not name --%s", manName(s.cmd), f)
			}
		}
	}
}

// stripOverstrike removes groff's bold and underline (X\bX, _\bX) from tty output.
func stripOverstrike(s string) string {
	r := []rune(s)
	var out []rune
	for i := 0; i < len(r); i++ {
		if i+1 < len(r) && r[i+1] == '\b' {
			i++
			continue
		}
		out = append(out, r[i])
	}
	return string(out)
}
