package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// root is the repository, seen from this package's directory.
const root = "../.."

// The README's promise to a newcomer.
const (
	maxReadmeLines = 200
	firstCommand   = "go run . demo"
	secondCommand  = "go test ./..."
)

var (
	// [text](target) and ![alt](target); the target ends at a space (a title) or ")".
	linkRE       = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)[^)]*\)`)
	screenshotRE = regexp.MustCompile(`screenshots/[A-Za-z0-9_.-]+\.png`)
	fenceRE      = regexp.MustCompile("(?s)```[a-z]*\n(.*?)```")
)

// markdownFiles is README.md and every docs/*.md, relative to root.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"README.md"}
	for _, d := range docs {
		rel, err := filepath.Rel(root, d)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, filepath.ToSlash(rel))
	}
	return files
}

func read(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// outsideFences drops fenced code blocks: a "[x](y)" in a shell example is not a link.
func outsideFences(doc string) string {
	return fenceRE.ReplaceAllString(doc, "")
}

// anchor is GitHub's id for a heading: lower case, punctuation dropped,
// spaces to hyphens.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127 && isLetter(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isLetter(r rune) bool { return strings.ToUpper(string(r)) != strings.ToLower(string(r)) }

// anchors are the ids of doc's headings, duplicates numbered as GitHub does.
func anchors(doc string) map[string]bool {
	ids := map[string]bool{}
	seen := map[string]int{}
	for _, line := range strings.Split(outsideFences(doc), "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		id := anchor(strings.TrimLeft(line, "#"))
		n := seen[id]
		seen[id]++
		if n > 0 {
			id = fmt.Sprintf("%s-%d", id, n)
		}
		ids[id] = true
	}
	return ids
}

func TestLinksResolve(t *testing.T) {
	for _, file := range markdownFiles(t) {
		doc := read(t, file)
		for _, m := range linkRE.FindAllStringSubmatch(outsideFences(doc), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			rel := file
			if path != "" {
				rel = filepath.ToSlash(filepath.Join(filepath.Dir(file), path))
			}
			if _, err := os.Stat(filepath.Join(root, rel)); err != nil {
				t.Errorf("%s: link %s: %s does not exist", file, target, rel)
				continue
			}
			if frag != "" && strings.HasSuffix(rel, ".md") && !anchors(read(t, rel))[frag] {
				t.Errorf("%s: link %s: %s has no heading #%s", file, target, rel, frag)
			}
		}
	}
}

func TestScreenshotsExist(t *testing.T) {
	for _, file := range markdownFiles(t) {
		for _, shot := range screenshotRE.FindAllString(read(t, file), -1) {
			if _, err := os.Stat(filepath.Join(root, shot)); err != nil {
				t.Errorf("%s names %s, which does not exist", file, shot)
			}
		}
	}
}

func TestReadmeIsShort(t *testing.T) {
	readme := read(t, "README.md")
	if n := strings.Count(readme, "\n"); n >= maxReadmeLines {
		t.Errorf("README.md has %d lines, the limit is under %d: move the detail to docs/", n, maxReadmeLines)
	}
}

// The first two commands a newcomer meets are the demo and the tests.
func TestReadmeStartsWithTheTwoCommands(t *testing.T) {
	var cmds []string
	for _, m := range fenceRE.FindAllStringSubmatch(read(t, "README.md"), -1) {
		for _, line := range strings.Split(m[1], "\n") {
			cmd, _, _ := strings.Cut(line, "#")
			if cmd = strings.TrimSpace(cmd); cmd != "" {
				cmds = append(cmds, cmd)
			}
		}
		if len(cmds) >= 2 {
			break
		}
	}
	if len(cmds) < 2 || cmds[0] != firstCommand || cmds[1] != secondCommand {
		t.Errorf("README.md's first two commands are %q, want %q and %q", cmds, firstCommand, secondCommand)
	}
}

// Every page in docs/ is reachable from the README.
func TestReadmeLinksEveryDoc(t *testing.T) {
	readme := read(t, "README.md")
	var want []string
	for _, f := range markdownFiles(t) {
		if f != "README.md" {
			want = append(want, f)
		}
	}
	for _, f := range want {
		if !strings.Contains(readme, "]("+f+")") {
			t.Errorf("README.md does not link %s", f)
		}
	}
}

func TestAnchor(t *testing.T) {
	for _, c := range []struct{ heading, want string }{
		{"Aborting, and which abort to use", "aborting-and-which-abort-to-use"},
		{"One-shot commands: `kafka-transactions.sh`, faster", "one-shot-commands-kafka-transactionssh-faster"},
		{"`snapshot -o json`", "snapshot--o-json"},
		{" Keys", "keys"},
		{"Selection, colours and small terminals", "selection-colours-and-small-terminals"},
		{"What `go test ./...` runs", "what-go-test--runs"},
	} {
		if got := anchor(c.heading); got != c.want {
			t.Errorf("anchor(%q) = %q, want %q", c.heading, got, c.want)
		}
	}
	ids := anchors("# A\n## A\n```\n# not a heading\n```\n### b c\n")
	for _, want := range []string{"a", "a-1", "b-c"} {
		if !ids[want] {
			t.Errorf("anchors lack %q: %v", want, ids)
		}
	}
	if ids["not-a-heading"] {
		t.Error("a comment in a code block was taken for a heading")
	}
}

// TestNamedTestsExist: the docs name the tests that prove what they promise
// (security.md's hostile-input matrix, testing.md); a test renamed or
// deleted must take its name out of them too.
func TestNamedTestsExist(t *testing.T) {
	named := regexp.MustCompile("`((?:Test|Fuzz|Benchmark)[A-Z][A-Za-z0-9_]*)")
	defined := map[string]bool{}
	funcRE := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Benchmark)[A-Za-z0-9_]*)\(`)
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, "_test.go") {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range funcRE.FindAllStringSubmatch(string(b), -1) {
				defined[m[1]] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range markdownFiles(t) {
		for _, m := range named.FindAllStringSubmatch(read(t, f), -1) {
			if !defined[m[1]] {
				t.Errorf("%s names %s, which no _test.go defines", f, m[1])
			}
		}
	}
}
