package ckptstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/txnscope/txnscope/internal/inputfile"
)

type local struct{ root string }

// Local is the store of the local directory dir.
func Local(dir string) (Store, error) {
	if dir == "" {
		return nil, errors.New("an empty checkpoint directory")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	return local{filepath.Clean(abs)}, nil
}

func (l local) Root() string { return l.root }

func (l local) path(p string) string { return filepath.Join(l.root, filepath.FromSlash(p)) }

func (l local) Show(p string) string { return l.path(p) }

func (l local) List(_ context.Context, dir string, max int) ([]Entry, error) {
	f, err := os.Open(l.path(dir))
	if err != nil {
		return nil, reason(err)
	}
	defer f.Close()
	var out []Entry
	for {
		batch, err := f.ReadDir(1024)
		for _, e := range batch {
			out = append(out, entry(e.Name(), e.Type(), -1))
		}
		if len(out) > max {
			return nil, fmt.Errorf("holds more than %d entries: not read", max)
		}
		if errors.Is(err, io.EOF) || (err == nil && len(batch) == 0) {
			return out, nil
		}
		if err != nil {
			return nil, reason(err)
		}
	}
}

// entry is a directory entry of mode m: symbolic links are never followed.
func entry(name string, m fs.FileMode, size int64) Entry {
	e := Entry{Name: name, Dir: m.IsDir(), Size: size}
	switch {
	case m&fs.ModeSymlink != 0:
		e.Odd = "a symbolic link"
	case !m.IsDir() && !m.IsRegular():
		e.Odd = inputfile.Kind(m)
	}
	return e
}

func (l local) Stat(_ context.Context, p string) (Entry, error) {
	fi, err := os.Lstat(l.path(p))
	if err != nil {
		return Entry{}, reason(err)
	}
	return entry(fi.Name(), fi.Mode(), fi.Size()), nil
}

func (l local) Read(_ context.Context, p string, limit int64) ([]byte, error) {
	return inputfile.ReadUpTo(l.path(p), limit)
}

func (l local) Within(handle, dir string) (string, bool) {
	p := filepath.FromSlash(strings.TrimPrefix(strings.TrimPrefix(handle, "file://"), "file:"))
	if !filepath.IsAbs(p) {
		return "", false
	}
	rel, err := filepath.Rel(l.path(dir), filepath.Clean(p))
	if err != nil || !filepath.IsLocal(rel) {
		return "", false
	}
	return join(dir, filepath.ToSlash(rel)), true
}

// reason drops the operation and path os puts in front of its errors.
func reason(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
