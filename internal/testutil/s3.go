package testutil

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
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

// NewS3 starts the store and sets this process's environment for the AWS
// SDK (Env), for a test that is not parallel.
func NewS3(t testing.TB, bucket string) *S3 {
	t.Helper()
	s := StartS3(t, bucket)
	for _, kv := range s.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	return s
}

// Env is the environment an AWS SDK or Flink's S3 file system reads to
// reach the store: fixed keys, a region, no profile, no instance role.
func (s *S3) Env() []string {
	return []string{"AWS_ACCESS_KEY_ID=txnscope-test", "AWS_SECRET_ACCESS_KEY=txnscope-test-secret", "AWS_REGION=us-east-1",
		"AWS_CONFIG_FILE=/nonexistent", "AWS_SHARED_CREDENTIALS_FILE=/nonexistent", "AWS_EC2_METADATA_DISABLED=true"}
}

// StartS3 starts the store on 127.0.0.1 (its URL, a bucket of that name),
// for as long as the test runs.
func StartS3(t testing.TB, bucket string) *S3 {
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
		if r.Method == http.MethodPut && r.URL.Query().Has("partNumber") && strings.HasPrefix(r.Header.Get("X-Amz-Content-Sha256"), "STREAMING-") {
			// gofakes3 decodes aws-chunked bodies (what Hadoop's S3A sends, Flink's S3 file
			// system) for whole objects only: a part would be stored with its chunk headers.
			body, err := unchunk(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
			r.Header.Set("Content-Length", strconv.Itoa(len(body)))
			r.Header.Del("X-Amz-Content-Sha256")
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
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

// unchunk decodes an aws-chunked body: chunks of "SIZE;chunk-signature=...\r\n", SIZE bytes
// (hex), "\r\n", up to one of size 0.
func unchunk(r io.Reader) ([]byte, error) {
	br := bufio.NewReader(r)
	var out []byte
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("aws-chunked: %w", err)
		}
		sizeHex, _, _ := strings.Cut(strings.TrimSpace(line), ";")
		n, err := strconv.ParseInt(sizeHex, 16, 64)
		if err != nil || n < 0 || n > 64<<20 {
			return nil, fmt.Errorf("aws-chunked: a chunk of size %q", sizeHex)
		}
		if n == 0 {
			return out, nil
		}
		chunk := make([]byte, n+2)
		if _, err := io.ReadFull(br, chunk); err != nil {
			return nil, fmt.Errorf("aws-chunked: %w", err)
		}
		out = append(out, chunk[:n]...)
	}
}
