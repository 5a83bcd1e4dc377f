// Package internal_test guards the layers of txnscope: the domain rules in
// model do no I/O, only kafkaadmin speaks Kafka, and the properties parser
// reads a file without pulling in a Kafka client. Each test reads the import
// graph with `go list -deps -json`, so a new import that crosses a boundary
// fails here instead of in review.
package internal_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/txnscope/txnscope"

// franzGo is the Kafka client; only kafkaadmin and its packages may import it.
const franzGo = "github.com/twmb/franz-go"

// ioImports are the standard packages through which a package reaches files,
// the network, processes or the terminal.
var ioImports = []string{"os", "net", "io/fs", "io/ioutil", "syscall", "log", "log/slog"}

// goPackage is the part of `go list -json` these tests read.
type goPackage struct {
	ImportPath string
	Standard   bool
	Imports    []string
}

// deps is rel (a directory under the module root, "model") and every package
// it depends on, outside of tests. ok is false when rel has no package.
func deps(t *testing.T, rel string) (pkgs []goPackage, ok bool) {
	t.Helper()
	if !exists(rel) {
		return nil, false
	}
	cmd := exec.Command(goCmd(t), "list", "-deps", "-json", module+"/"+rel)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v: %s", rel, err, stderr.String())
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p goPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list -deps %s: %v", rel, err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, true
}

// exists reports whether the module has a directory rel. The test runs in
// internal/; the module root is its parent.
func exists(rel string) bool {
	fi, err := os.Stat(filepath.Join("..", rel))
	return err == nil && fi.IsDir()
}

// goCmd is the go command that runs this test.
func goCmd(t *testing.T) string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	if root := os.Getenv("GOROOT"); root != "" {
		return filepath.Join(root, "bin", "go")
	}
	t.Fatal("no go command on PATH (nor in $GOROOT/bin) to list the imports with")
	return ""
}

// ours is a package of this module.
func ours(p goPackage) bool {
	return p.ImportPath == module || strings.HasPrefix(p.ImportPath, module+"/")
}

func isFranzGo(path string) bool { return path == franzGo || strings.HasPrefix(path, franzGo+"/") }

// kafkaadminPkg is kafkaadmin or one of its packages (kafkaadmin/demo).
func kafkaadminPkg(path string) bool {
	return path == module+"/kafkaadmin" || strings.HasPrefix(path, module+"/kafkaadmin/")
}

// TestModelDoesNoIO: model holds the domain decisions and is tested with
// plain values, so neither it nor any package of ours it imports may reach
// files, the network or Kafka. (The standard library's own packages, fmt
// say, are not held to this.)
// The -o json output schema (internal/jsonout) is held to the same: it
// only turns model values into documents.
func TestModelDoesNoIO(t *testing.T) {
	for _, rel := range []string{"model", "internal/jsonout"} {
		pkgs, ok := deps(t, rel)
		if !ok {
			t.Fatalf("no %s package", rel)
		}
		for _, p := range pkgs {
			if isFranzGo(p.ImportPath) {
				t.Errorf("%s depends on %s: the domain rules must not know the Kafka client", rel, p.ImportPath)
			}
			if !ours(p) {
				continue
			}
			for _, imp := range p.Imports {
				if slices.Contains(ioImports, imp) || strings.HasPrefix(imp, "os/") || strings.HasPrefix(imp, "net/") {
					t.Errorf("%s (%s or a package it imports) imports %s: it does no I/O", p.ImportPath, rel, imp)
				}
			}
		}
	}
}

// TestKafkaOnlyThroughKafkaadmin: the screens, the renderers and the command
// line reach Kafka through kafkaadmin alone. ui and views do not even have
// franz-go among their dependencies (ui is handed its cluster as an
// interface); the command line builds the client, so it has franz-go
// through kafkaadmin, but no package of ours besides kafkaadmin imports it.
func TestKafkaOnlyThroughKafkaadmin(t *testing.T) {
	for _, c := range []struct {
		rel   string
		none  bool // not even through kafkaadmin
		maybe bool // may not exist yet
	}{
		{rel: "ui", none: true},
		{rel: "views", none: true},
		{rel: "internal/cli", maybe: true},
	} {
		t.Run(strings.ReplaceAll(c.rel, "/", "_"), func(t *testing.T) {
			pkgs, ok := deps(t, c.rel)
			switch {
			case !ok && c.maybe:
				t.Skipf("no %s package yet", c.rel)
			case !ok:
				t.Fatalf("no %s package", c.rel)
			}
			var franz, via []string
			for _, p := range pkgs {
				if isFranzGo(p.ImportPath) {
					franz = append(franz, p.ImportPath)
				}
				if ours(p) && slices.ContainsFunc(p.Imports, func(imp string) bool { return isFranzGo(imp) || kafkaadminPkg(imp) }) {
					via = append(via, p.ImportPath)
				}
				if !ours(p) || kafkaadminPkg(p.ImportPath) {
					continue
				}
				for _, imp := range p.Imports {
					if isFranzGo(imp) {
						t.Errorf("%s (in the dependencies of %s) imports %s: Kafka is spoken through kafkaadmin only", p.ImportPath, c.rel, imp)
					}
				}
			}
			if c.none && len(franz) > 0 {
				t.Errorf("%s depends on %d franz-go packages (%s, ...) through %s: it must not depend on the Kafka client at all",
					c.rel, len(franz), franz[0], strings.Join(via, ", "))
			}
		})
	}
}

// TestSettingsHaveNoKafkaClient: the .properties parser reads a Java
// client's settings into plain values, and the connection settings it shares
// with the command line are plain values too: neither may pull in franz-go
// (the parser did, through kafkaadmin, while it was the top-level
// clientprops).
func TestSettingsHaveNoKafkaClient(t *testing.T) {
	for _, c := range []struct{ rel, old string }{
		{rel: "internal/clientprops", old: "clientprops"},
		{rel: "internal/conn"},
	} {
		t.Run(strings.ReplaceAll(c.rel, "/", "_"), func(t *testing.T) {
			pkgs, ok := deps(t, c.rel)
			switch {
			case !ok && c.old != "" && exists(c.old):
				t.Skipf("the package is still the top-level %s, which imports kafkaadmin; "+
					"this test checks %s once it has moved there without franz-go (issue 10)", c.old, c.rel)
			case !ok && c.old != "":
				t.Fatalf("no %s package (nor %s)", c.rel, c.old)
			case !ok:
				t.Skipf("no %s package yet (issue 10 moves the connection settings there)", c.rel)
			}
			for _, p := range pkgs {
				if isFranzGo(p.ImportPath) {
					t.Errorf("%s depends on %s: settings must not need the Kafka client", c.rel, p.ImportPath)
				}
			}
		})
	}
}

// TestExporterCannotAbort: the exporter is handed its cluster as an
// interface that only reads (exporter.Admin), so it has neither kafkaadmin
// (Execute, the force-terminate), the audit log, nor the UI with its abort
// dialogs among its dependencies, let alone franz-go.
func TestExporterCannotAbort(t *testing.T) {
	pkgs, ok := deps(t, "internal/exporter")
	if !ok {
		t.Fatal("no internal/exporter package")
	}
	banned := []string{module + "/kafkaadmin", module + "/ui", module + "/views", module + "/internal/audit"}
	for _, p := range pkgs {
		if isFranzGo(p.ImportPath) || slices.ContainsFunc(banned, func(b string) bool {
			return p.ImportPath == b || strings.HasPrefix(p.ImportPath, b+"/")
		}) {
			t.Errorf("internal/exporter depends on %s: it must not reach code that aborts", p.ImportPath)
		}
	}
}
