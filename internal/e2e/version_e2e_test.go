package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestE2EVersionNamesTheCheckout: a binary built from this checkout, as
// `go install .` builds it, names the commit it was built from in
// --version, and says dirty exactly when git sees changes. -buildvcs=true
// because a GOFLAGS of -buildvcs=false (this machine's go env has it)
// would drop the stamp, which is what is under test.
func TestE2EVersionNamesTheCheckout(t *testing.T) {
	git := func(args ...string) string {
		out, err := exec.Command("git", args...).Output()
		if err != nil {
			t.Skipf("not a git checkout (git %s: %v)", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}
	head := git("rev-parse", "HEAD")
	dirty := git("status", "--porcelain") != ""
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bin := filepath.Join(t.TempDir(), "txnscope")
	build := exec.CommandContext(ctx, "go", "build", "-buildvcs=true", "-o", bin, ".")
	build.Dir = "../.." // the module's root: main.go
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		t.Fatalf("--version: %v", err)
	}
	line := string(out)
	if !strings.HasPrefix(line, "txnscope v0.0.0-") || !strings.Contains(line, head[:12]) {
		t.Errorf("--version %q: want the pseudo-version of %s", line, head[:12])
	}
	if !strings.Contains(line, "revision "+head+" (") {
		t.Errorf("--version %q: want revision %s and its time", line, head)
	}
	if got := strings.Contains(line, "dirty"); got != dirty {
		t.Errorf("--version %q: dirty %v, git status says %v", line, got, dirty)
	}
}
