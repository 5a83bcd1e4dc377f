package flinkrest

import (
	"os"
	"path/filepath"
	"testing"
)

// Flink's layout (DIR/<job id>/chk-N/_metadata, or DIR/chk-N when given the
// job's own directory): only a chk-N holding a _metadata is a completed
// checkpoint.
func TestReadRetained(t *testing.T) {
	dir := t.TempDir()
	mk := func(path string, file bool) {
		p := filepath.Join(dir, path)
		if file {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mk("83d3c711c8fe7c52004be21235990872/chk-3/_metadata", true)
	mk("83d3c711c8fe7c52004be21235990872/chk-4", false)                 // in progress, or failed: no _metadata
	mk("83d3c711c8fe7c52004be21235990872/chk-5", true)                  // a file, not a checkpoint
	mk("83d3c711c8fe7c52004be21235990872/shared/chk-9/_metadata", true) // too deep
	mk("chk-12/_metadata", true)
	mk("chk-x/_metadata", true)
	r := ReadRetained(dir)
	if r.Err != "" || len(r.Checkpoints) != 2 || r.Checkpoints[0].N != 3 || r.Checkpoints[1].N != 12 || r.Checkpoints[0].AtMs <= 0 {
		t.Errorf("%+v, want chk-3 and chk-12", r)
	}
	if r := ReadRetained(filepath.Join(dir, "missing")); r.Err == "" {
		t.Errorf("a missing directory read as %+v", r)
	}
}
