// Package ckptstore lists and reads Flink's checkpoint locations where
// users keep them: a local directory (or file://) and an S3 bucket (s3://,
// and the s3a:// and s3p:// of Flink's two S3 file systems), S3-compatible
// stores included. Paths inside a store are slash-separated and relative to
// its root; nothing outside the root is listed or read.
package ckptstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/txnscope/txnscope/internal/escape"
)

// Entry is one name directly under a directory of a store.
type Entry struct {
	Name string
	Dir  bool
	// Odd says what the entry is when it is neither a directory nor a
	// regular file ("a symbolic link", "a named pipe (FIFO)"); "" otherwise.
	Odd  string
	Size int64
}

// Store is one checkpoint location.
type Store interface {
	// Root is the location, as evidence names it.
	Root() string
	// List lists dir ("" is the root), refusing one of more than max
	// entries without holding them all.
	List(ctx context.Context, dir string, max int) ([]Entry, error)
	// Stat describes the file at path; its error wraps fs.ErrNotExist
	// when there is none.
	Stat(ctx context.Context, path string) (Entry, error)
	// Read reads the regular file at path, refusing one over limit bytes.
	Read(ctx context.Context, path string, limit int64) ([]byte, error)
	// Within is the path in the store of a state file's handle as Flink
	// wrote it into a _metadata (absolute, with its scheme), when that
	// file is under dir; ok is false when it is not.
	Within(handle, dir string) (path string, ok bool)
	// Show names path as its user writes it.
	Show(path string) string
}

// S3Options are what an S3-compatible store needs beyond the standard AWS
// settings (environment, shared config and profile, web identity, instance
// role), which the AWS SDK reads itself.
type S3Options struct {
	// Endpoint is the store's URL ("" AWS's own, or AWS_ENDPOINT_URL_S3).
	Endpoint string
	// PathStyle asks for bucket names in the path, as most S3-compatible
	// stores need.
	PathStyle bool
	// Region overrides the one the AWS settings give.
	Region string
}

// Open is the store of location: a local path, file://PATH, or
// s3://BUCKET/PATH.
func Open(ctx context.Context, location string, o S3Options) (Store, error) {
	scheme, rest, ok := strings.Cut(location, "://")
	if !ok {
		return Local(location)
	}
	switch strings.ToLower(scheme) {
	case "file":
		return Local(rest)
	case "s3", "s3a", "s3p":
		return openS3(ctx, rest, o)
	}
	if strings.Trim(strings.ToLower(scheme), "abcdefghijklmnopqrstuvwxyz0123456789+.-") != "" {
		scheme = escape.Quote(scheme)
	}
	return nil, fmt.Errorf("txnscope reads checkpoints from a local path, file:// or s3:// (and S3-compatible stores); not %s://", scheme)
}

// join joins slash-separated path elements, skipping empty ones.
func join(elem ...string) string {
	var parts []string
	for _, e := range elem {
		if e = strings.Trim(e, "/"); e != "" {
			parts = append(parts, e)
		}
	}
	return strings.Join(parts, "/")
}

// Join joins path elements of a store's paths.
func Join(elem ...string) string { return join(elem...) }
