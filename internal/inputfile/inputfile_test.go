//go:build unix

package inputfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within fails the test if f does not return promptly: the holes this
// package closes are a read that never ends and an open that never returns.
func within(t *testing.T, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("still reading after 5s")
		return nil
	}
}

func TestReadRefuses(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: 1 GiB that costs nothing on disk, and must cost nothing to refuse.
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	justOver := filepath.Join(dir, "just-over")
	if err := os.WriteFile(justOver, make([]byte, MaxSize+1), 0o600); err != nil {
		t.Fatal(err)
	}
	zeroLink := filepath.Join(dir, "zero-link")
	if err := os.Symlink("/dev/zero", zeroLink); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{fifo, "a named pipe (FIFO), not a regular file"},
		{"/dev/zero", "a character device, not a regular file"},
		{zeroLink, "a character device, not a regular file"},
		{"/dev/stdin", "not a regular file"},
		{dir, "a directory, not a regular file"},
		{big, "larger than 4 MiB"},
		{justOver, "larger than 4 MiB"},
		{filepath.Join(dir, "missing"), "no such file or directory"},
	} {
		for name, f := range map[string]func(string) error{
			"Read":  func(p string) error { _, err := Read(p); return err },
			"Check": Check,
		} {
			err := within(t, func() error { return f(tc.path) })
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s(%s) = %v, want %q", name, tc.path, err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), tc.path) {
				t.Errorf("%s(%s) = %q repeats the path, which the caller puts in front", name, tc.path, err)
			}
		}
	}
}

func TestReadRegular(t *testing.T) {
	dir := t.TempDir()
	for _, size := range []int{0, 12, MaxSize} {
		p := filepath.Join(dir, "f")
		want := strings.Repeat("x", size)
		if err := os.WriteFile(p, []byte(want), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := Read(p)
		if err != nil || string(got) != want {
			t.Errorf("Read of %d bytes = %d bytes, %v", size, len(got), err)
		}
		if err := Check(p); err != nil {
			t.Errorf("Check of %d bytes: %v", size, err)
		}
	}
	// A /proc file says size 0 and has content: read, not refused.
	if got, err := Read("/proc/self/status"); err == nil && len(got) == 0 {
		t.Errorf("Read(/proc/self/status) read nothing")
	}
}

func TestExposed(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mode os.FileMode
		want bool
	}{{0o600, false}, {0o400, false}, {0o700, false}, {0o644, true}, {0o640, true}, {0o604, true}, {0o620, false}} {
		if err := os.Chmod(p, tc.mode); err != nil {
			t.Fatal(err)
		}
		perm, got := Exposed(p)
		if got != tc.want || perm != tc.mode {
			t.Errorf("Exposed at %04o = %04o, %v; want %v", tc.mode, perm, got, tc.want)
		}
	}
	if _, got := Exposed(filepath.Join(t.TempDir(), "missing")); got {
		t.Error("a missing file is exposed")
	}
}
