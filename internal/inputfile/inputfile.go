// Package inputfile reads the small files an operator points txnscope at
// (a properties file, a password, PEM certificates and keys) without letting
// a wrong path hang or kill the process: /dev/zero never ends, a named pipe
// blocks until someone writes to it, a directory or a log file is not what
// was meant. Only regular files of at most MaxSize bytes are read.
package inputfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// MaxSize bounds every file read. The largest honest input is a CA bundle:
// the system's whole trust store is about 200 KiB.
const MaxSize = 4 << 20

// Read returns the contents of the regular file at path. Its errors say what
// is wrong with the file ("a named pipe (FIFO), not a regular file") without
// the path, so that the caller puts the flag or setting that named it and
// the path in front.
func Read(path string) ([]byte, error) { return ReadUpTo(path, MaxSize) }

// ReadUpTo is Read for files of at most limit bytes (a Flink checkpoint's
// _metadata, larger than any settings file).
func ReadUpTo(path string, limit int64) ([]byte, error) {
	f, err := open(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Sized from the file, so that a large one is not copied as it grows.
	var size int64
	if fi, err := f.Stat(); err == nil {
		size = fi.Size()
	}
	buf := bytes.NewBuffer(make([]byte, 0, min(size, limit)+512))
	if _, err := buf.ReadFrom(io.LimitReader(f, limit+1)); err != nil {
		return nil, reason(err)
	}
	data := buf.Bytes()
	// The size was checked at open; a file that grew since, or a /proc file
	// that claims size 0, is caught here.
	if int64(len(data)) > limit {
		return nil, tooLarge(limit)
	}
	return data, nil
}

// Check opens path as Read would, without reading it: a flag can be refused
// while the command line is parsed, before anything connects.
func Check(path string) error {
	f, err := open(path, MaxSize)
	if err != nil {
		return err
	}
	return f.Close()
}

// open refuses anything but a regular file of at most MaxSize bytes. It
// stats the path first, so that a device or a FIFO is never opened at all,
// and opens without blocking (openFlags), so that one swapped in after the
// stat cannot block the open either; the open file is checked again.
func open(path string, limit int64) (*os.File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, reason(err)
	}
	if err := regular(fi, limit); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, reason(err)
	}
	if fi, err = f.Stat(); err == nil {
		err = regular(fi, limit)
	}
	if err != nil {
		f.Close()
		return nil, reason(err)
	}
	return f, nil
}

func regular(fi fs.FileInfo, limit int64) error {
	m := fi.Mode()
	switch {
	case m.IsRegular() && fi.Size() > limit:
		return tooLarge(limit)
	case m.IsRegular():
		return nil
	case m.IsDir(), m&(fs.ModeNamedPipe|fs.ModeSocket|fs.ModeDevice) != 0:
		return fmt.Errorf("%s, not a regular file", Kind(m))
	}
	return errors.New("not a regular file")
}

// Kind says what a file of mode m is when it is not a regular one.
func Kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "not a regular file"
}

func tooLarge(limit int64) error {
	if limit == MaxSize {
		return fmt.Errorf("larger than %d MiB, more than any key, certificate or settings file holds", MaxSize>>20)
	}
	return fmt.Errorf("larger than the %d MiB txnscope reads", limit>>20)
}

// reason drops the operation and path os puts in front of its errors.
func reason(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Exposed reports whether users other than the owner may read the file at
// path (its group or others have the read bit), with its permission bits.
// It says false where permissions do not work that way (Windows).
func Exposed(path string) (fs.FileMode, bool) {
	fi, err := os.Stat(path)
	if err != nil || !permsMeanSomething {
		return 0, false
	}
	perm := fi.Mode().Perm()
	return perm, perm&0o044 != 0
}
