package flinkrest

import (
	"context"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/internal/ckptstore"
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
