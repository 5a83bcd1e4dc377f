package testutil

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// S3 is an S3-compatible store on 127.0.0.1 (gofakes3, in memory) with one
// bucket, for checkpoints kept in s3://. The test's AWS settings point at
// nothing real: fixed keys, no profile, no instance role.
type S3 struct {
	URL, Bucket string
	backend     *s3mem.Backend
	t           testing.TB
	gets        atomic.Int64
}

// NewS3 starts the store and sets the environment the AWS SDK reads.
func NewS3(t testing.TB, bucket string) *S3 {
	t.Helper()
	be := s3mem.New()
	if err := be.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	s := &S3{Bucket: bucket, backend: be, t: t}
	h := gofakes3.New(be, gofakes3.WithoutVersioning()).Server()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Query().Get("list-type") == "" && r.URL.Query().Get("location") == "" {
			s.gets.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	t.Setenv("AWS_ACCESS_KEY_ID", "txnscope-test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "txnscope-test-secret")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_CONFIG_FILE", "/nonexistent")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	return s
}

// Put writes data at key.
func (s *S3) Put(key string, data []byte) {
	s.t.Helper()
	if _, err := s.backend.PutObject(s.Bucket, key, map[string]string{}, bytes.NewReader(data), int64(len(data)), nil); err != nil {
		s.t.Fatal(err)
	}
}

// Gets is how many objects were read (GET requests other than listings).
func (s *S3) Gets() int64 { return s.gets.Load() }
