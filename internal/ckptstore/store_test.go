package ckptstore_test

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/internal/ckptstore"
	"github.com/txnscope/txnscope/internal/testutil"
)

func TestOpen(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	for _, c := range []struct {
		location, root, err string
	}{
		{tmp, tmp, ""},
		{"file://" + tmp + "/", tmp, ""},
		{"s3://ckpt/flink/orders/", "s3://ckpt/flink/orders", ""},
		{"s3a://ckpt/flink", "s3://ckpt/flink", ""},
		{"s3://", "", "names no bucket"},
		{"gs://ckpt/flink", "", "txnscope reads checkpoints from a local path, file:// or s3:// (and S3-compatible stores); not gs://"},
		{"hdfs://nn:8020/flink", "", "not hdfs://"},
		{"", "", "an empty checkpoint directory"},
	} {
		st, err := ckptstore.Open(ctx, c.location, ckptstore.S3Options{Region: "us-east-1"})
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: %v, want %q", c.location, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.location, err)
		case c.err == "" && st.Root() != c.root:
			t.Errorf("%q: root %q, want %q", c.location, st.Root(), c.root)
		}
	}
}

// An S3 prefix reads as a directory does: names one level down, a
// directory marker (Hadoop's S3A writes PATH/) no file, a missing key
// fs.ErrNotExist, a file over the limit refused, and nothing outside.
func TestS3Store(t *testing.T) {
	s3 := testutil.NewS3(t, "ckpt")
	s3.Put("flink/orders/job1/chk-3/_metadata", []byte("meta"))
	s3.Put("flink/orders/job1/chk-3/", nil)
	s3.Put("flink/orders/job1/shared/big", make([]byte, 2<<20))
	s3.Put("flink/orders/README", []byte("x"))
	s3.Put("flink/ordersX/job9/chk-1/_metadata", []byte("not this root's"))
	ctx := context.Background()
	st, err := ckptstore.Open(ctx, "s3://ckpt/flink/orders", ckptstore.S3Options{Endpoint: s3.URL, PathStyle: true})
	if err != nil {
		t.Fatal(err)
	}
	top, err := st.List(ctx, "", 100)
	if err != nil || len(top) != 2 || top[0] != (ckptstore.Entry{Name: "job1", Dir: true, Size: -1}) || top[1].Name != "README" || top[1].Dir {
		t.Fatalf("root %+v, %v", top, err)
	}
	chk, err := st.List(ctx, "job1/chk-3", 100)
	if err != nil || len(chk) != 1 || chk[0].Name != "_metadata" || chk[0].Size != 4 {
		t.Errorf("chk-3 %+v, %v", chk, err)
	}
	if _, err := st.List(ctx, "job1", 1); err == nil || !strings.Contains(err.Error(), "holds more than 1 entries") {
		t.Errorf("a long listing: %v", err)
	}
	if e, err := st.Stat(ctx, "job1/chk-3/_metadata"); err != nil || e.Size != 4 || e.Dir {
		t.Errorf("stat %+v, %v", e, err)
	}
	if _, err := st.Stat(ctx, "job1/chk-4/_metadata"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing key: %v", err)
	}
	if data, err := st.Read(ctx, "job1/chk-3/_metadata", 1<<20); err != nil || string(data) != "meta" {
		t.Errorf("read %q, %v", data, err)
	}
	if _, err := st.Read(ctx, "job1/shared/big", 1<<20); err == nil || !strings.Contains(err.Error(), "larger than the 1 MiB txnscope reads") {
		t.Errorf("a large file: %v", err)
	}
	for handle, want := range map[string]string{
		"s3://ckpt/flink/orders/job1/shared/big":  "job1/shared/big",
		"s3a://ckpt/flink/orders/job1/chk-3/x":    "job1/chk-3/x",
		"s3://other/flink/orders/job1/shared/big": "",
		"s3://ckpt/flink/orders/job2/shared/big":  "",
		"s3://ckpt/flink/orders/job1/../job2/x":   "",
		"s3://ckpt/flink/ordersX/job1/shared/big": "",
		"file:/flink/orders/job1/shared/big":      "",
		"/ckpt/flink/orders/job1/shared/big":      "",
	} {
		if got, ok := st.Within(handle, "job1"); got != want || ok != (want != "") {
			t.Errorf("within %q: %q %v, want %q", handle, got, ok, want)
		}
	}
	if st.Show("job1/chk-3") != "s3://ckpt/flink/orders/job1/chk-3" {
		t.Errorf("shown as %q", st.Show("job1/chk-3"))
	}
	gone, _ := ckptstore.Open(ctx, "s3://nobucket/flink", ckptstore.S3Options{Endpoint: s3.URL, PathStyle: true})
	if _, err := gone.List(ctx, "", 100); err == nil || !strings.Contains(err.Error(), `no bucket "nobucket"`) {
		t.Errorf("a missing bucket: %v", err)
	}
}

// A local directory: symbolic links are named, never followed, and a state
// handle maps only inside the directory asked.
func TestLocalStore(t *testing.T) {
	dir := t.TempDir()
	st, err := ckptstore.Local(dir)
	if err != nil {
		t.Fatal(err)
	}
	for handle, want := range map[string]string{
		"file:" + filepath.Join(dir, "job1", "shared", "s1"): "job1/shared/s1",
		filepath.Join(dir, "job1", "chk-3", "x"):             "job1/chk-3/x",
		filepath.Join(dir, "job2", "x"):                      "",
		filepath.Join(dir, "job1", "..", "job2", "x"):        "",
		"s3://ckpt/job1/x":                                   "",
		"job1/x":                                             "",
	} {
		if got, ok := st.Within(handle, "job1"); got != want || ok != (want != "") {
			t.Errorf("within %q: %q %v, want %q", handle, got, ok, want)
		}
	}
}
