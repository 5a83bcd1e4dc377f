package flinkrest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/ckptstore"
	"github.com/txnscope/txnscope/model"
)

// The external path a JobManager names leads to the job's directory; a
// remote JobManager's local path is another machine's, and is not read.
func TestExternalStore(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		jm, path, root, err string
	}{
		{"http://jm.example:8081", "s3://ckpt/flink/" + jobA + "/chk-12", "s3://ckpt/flink/" + jobA, ""},
		{"http://127.0.0.1:8082", "file:/tmp/ckpt/" + jobA + "/chk-12", "/tmp/ckpt/" + jobA, ""},
		{"http://localhost:8082", "file:///tmp/ckpt/" + jobA + "/chk-3/", "/tmp/ckpt/" + jobA, ""},
		{"http://jm.example:8081", "file:/tmp/ckpt/" + jobA + "/chk-12", "", "names a local path"},
		{"http://10.0.0.7:8081", "/tmp/ckpt/" + jobA + "/chk-12", "", "another machine's files"},
		{"http://127.0.0.1:8082", "s3://ckpt/flink/savepoint-1a2b", "", "not DIR/chk-N"},
		{"http://127.0.0.1:8082", "gs://ckpt/flink/" + jobA + "/chk-12", "", "not gs://"},
	} {
		st, err := externalStore(ctx, c.jm, c.path, ckptstore.S3Options{Region: "us-east-1"})
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s from %s: %v, want %q", c.path, c.jm, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%s from %s: %v", c.path, c.jm, err)
		case c.err == "" && st.Root() != c.root:
			t.Errorf("%s from %s: root %s, want %s", c.path, c.jm, st.Root(), c.root)
		}
	}
}

// A History Server lists every archived run: the checkpoints of the newest
// ended ones only are followed, never of a running job.
func TestReadExternalBounded(t *testing.T) {
	var jobs []model.FlinkJob
	for i := range 25 {
		jobs = append(jobs, model.FlinkJob{Source: "http://127.0.0.1:8082", ID: fmt.Sprintf("%032d", i), State: "FAILED", StartMs: int64(i),
			Latest: &model.FlinkCheckpoint{ID: 3, Status: "COMPLETED", Path: fmt.Sprintf("%s/%d/chk-3", t.TempDir(), i)}})
	}
	jobs = append(jobs, model.FlinkJob{Source: "http://127.0.0.1:8082", ID: "running", State: "RUNNING", StartMs: 99,
		Latest: &model.FlinkCheckpoint{ID: 3, Path: t.TempDir() + "/r/chk-3"}})
	got := readExternal(context.Background(), Sources{}, jobs, time.Second)
	if len(got) != maxExternal {
		t.Fatalf("%d read, want %d", len(got), maxExternal)
	}
	for i := range 25 {
		if _, ok := got[fmt.Sprintf("%032d", i)]; ok != (i >= 25-maxExternal) {
			t.Errorf("job %d read: %v", i, ok)
		}
	}
}
