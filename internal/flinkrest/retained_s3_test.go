package flinkrest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/internal/ckptstore"
	"github.com/txnscope/txnscope/internal/testutil"
	"github.com/txnscope/txnscope/model"
)

func s3Location(t *testing.T, s3 *testutil.S3, root string) ckptstore.Store {
	t.Helper()
	st, err := ckptstore.Open(context.Background(), "s3://"+s3.Bucket+"/"+root, ckptstore.S3Options{Endpoint: s3.URL, PathStyle: true})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// Checkpoints in S3 read as a local directory's do, committer state in a
// file of the job's included, and a file outside the job is not read.
func TestReadLocationS3(t *testing.T) {
	s3 := testutil.NewS3(t, "ckpt")
	root := "flink/orders"
	s3.Put(root+"/"+jobA+"/chk-3/_metadata", metadata(3, cm("p-0-3", 11, 0), cm("p-1-3", 12, 0), cm("other-0-3", 13, 0)))
	s3.Put(root+"/"+jobA+"/chk-4/", nil) // in progress: a directory marker, no _metadata
	meta, state := testutil.FlinkMetadataInFile(5, "s3://ckpt/"+root+"/"+jobB+"/shared/s1", cm("p-0-5", 21, 1))
	s3.Put(root+"/"+jobB+"/chk-5/_metadata", meta)
	s3.Put(root+"/"+jobB+"/shared/s1", state)
	meta, state = testutil.FlinkMetadataInFile(6, "s3://ckpt/elsewhere/s1", cm("p-0-6", 22, 1))
	s3.Put(root+"/"+jobB+"/chk-6/_metadata", meta)
	s3.Put("elsewhere/s1", state)

	r := ReadLocation(context.Background(), s3Location(t, s3, root), "p")
	if r.Err != "" || r.Dir != "s3://ckpt/"+root || len(r.Jobs) != 2 {
		t.Fatalf("%+v", r)
	}
	a, b := r.Jobs[0], r.Jobs[1]
	if a.JobID != jobB {
		a, b = b, a
	}
	want := []model.RetainedCheckpoint{{N: 3, Committables: []model.Committable{cm("p-0-3", 11, 0), cm("p-1-3", 12, 0)}}}
	if b.Dir != "s3://ckpt/"+root+"/"+jobA || len(b.Problems) != 0 || !slices.EqualFunc(b.Checkpoints, want, sameCheckpoint) {
		t.Errorf("%+v, want chk-3 with p's two committables", b)
	}
	want = []model.RetainedCheckpoint{{N: 5, Committables: []model.Committable{cm("p-0-5", 21, 1)}}}
	if len(a.Problems) != 1 || !strings.Contains(a.Problems[0], `"chk-6" holds a _metadata that operator`) || !strings.Contains(a.Problems[0], "is outside the job's checkpoint directory (not read)") ||
		!slices.EqualFunc(a.Checkpoints, want, sameCheckpoint) {
		t.Errorf("%+v, want chk-5 read from its shared file, chk-6's file refused", a)
	}
}

// Thousands of checkpoints listed, a few read: only the newest completed
// ones (and the newer in-progress ones on the way) are fetched.
func TestReadLocationS3ReadsTheNewest(t *testing.T) {
	s3 := testutil.NewS3(t, "ckpt")
	const n = 3000
	for i := 1; i <= n; i++ {
		s3.Put(fmt.Sprintf("%s/chk-%d/_metadata", jobA, i), metadata(int64(i), cm(fmt.Sprintf("p-0-%d", i), int64(i), 0)))
	}
	s3.Put(fmt.Sprintf("%s/chk-%d/", jobA, n+1), nil) // in progress
	before := s3.Gets()
	r := ReadLocation(context.Background(), s3Location(t, s3, ""), "p")
	if r.Err != "" || len(r.Jobs) != 1 || len(r.Jobs[0].Problems) != 0 {
		t.Fatalf("%+v", r)
	}
	cps := r.Jobs[0].Checkpoints
	if len(cps) != keepNewest || cps[len(cps)-1].N != n || cps[0].N != n-keepNewest+1 {
		t.Errorf("read %v, want the newest %d up to chk-%d", cps, keepNewest, n)
	}
	if got := s3.Gets() - before; got > keepNewest {
		t.Errorf("%d objects fetched for %d checkpoints read", got, keepNewest)
	}
}
