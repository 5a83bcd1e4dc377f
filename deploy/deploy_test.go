// Package deploy holds no code: its tests check what runs the exporter in production where no
// container can be built and no systemd runs: the Dockerfile's build is a static binary, and the
// systemd unit is one systemd-analyze accepts, hardened. deploy/kubernetes and deploy/prometheus
// test theirs.
package deploy

import (
	"context"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// buildRe is the Dockerfile's build: the environment and the go build command, up to its -o.
var buildRe = regexp.MustCompile(`(?m)^RUN (CGO_ENABLED=0) (go build .*) -o (\S+) \.$`)

// TestDockerfileBuildsAStaticBinary runs the Dockerfile's own go build line here and checks what it
// makes has no ELF interpreter and no dynamic section, so it runs on distroless' static image, which
// has no libc; and that the image runs it as a non-root user with no shell to fall back on.
func TestDockerfileBuildsAStaticBinary(t *testing.T) {
	df := read(t, "../Dockerfile")
	m := buildRe.FindStringSubmatch(df)
	if m == nil {
		t.Fatalf("the Dockerfile has no `RUN CGO_ENABLED=0 go build ... -o PATH .` line")
	}
	for _, want := range []string{"FROM gcr.io/distroless/static-debian12:nonroot", "COPY --from=build " + m[3] + " /txnscope",
		"USER 65532:65532", `ENTRYPOINT ["/txnscope"]`} {
		if !strings.Contains(df, want) {
			t.Errorf("the Dockerfile lacks %q", want)
		}
	}
	if strings.Contains(df, "/bin/sh") || regexp.MustCompile(`(?m)^(ENTRYPOINT|CMD) [^\[]`).MatchString(df) {
		t.Errorf("the image has no shell: ENTRYPOINT and CMD must be exec form")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin := filepath.Join(t.TempDir(), "txnscope")
	args := append(strings.Fields(m[2])[1:], "-o", bin, ".")
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), m[1])
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("the binary is not static: it has a %s program header", p.Type)
		}
	}
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil || !strings.HasPrefix(string(out), "txnscope ") {
		t.Errorf("the static binary's --version: %q, %v", out, err)
	}
}

// TestSystemdUnit has systemd-analyze verify the unit, its ExecStart pointed at a built binary and
// its man: documentation at docs/man, and rate its hardening (exposure at most 2.0 of 10).
func TestSystemdUnit(t *testing.T) {
	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze not found")
	}
	unit := read(t, "systemd/txnscope-exporter.service")
	for _, want := range []string{"DynamicUser=yes", "NoNewPrivileges=yes", "ProtectSystem=strict", "LoadCredential=client.properties:",
		"--command-config %d/client.properties"} {
		if !strings.Contains(unit, want) {
			t.Errorf("the unit lacks %q", want)
		}
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "txnscope")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	man := filepath.Join(dir, "man", "man1")
	if err := os.MkdirAll(man, 0o755); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile("../docs/man/txnscope-exporter.1")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(man, "txnscope-exporter.1"), page, 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "txnscope-exporter.service")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(unit, "/usr/local/bin/txnscope", bin)), 0o644); err != nil {
		t.Fatal(err)
	}
	verify := exec.Command(sa, "verify", path)
	verify.Env = append(os.Environ(), "MANPATH="+filepath.Join(dir, "man"))
	if out, err := verify.CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	sec := exec.Command(sa, "security", "--offline=true", "--threshold=20", path) // exposure × 10
	if out, err := sec.CombinedOutput(); err != nil {
		t.Errorf("systemd-analyze security: %v\n%s", err, out)
	} else if i := strings.Index(string(out), "Overall exposure level"); i >= 0 {
		t.Log(strings.TrimSpace(string(out[i:])))
	}
}
