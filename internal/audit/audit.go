// Package audit keeps the record of every abort attempt, so that what an
// operator did at 3 a.m. can be read in the morning. It is written ahead: an
// "attempt" line is appended and synced to disk before each request that can
// change the cluster goes out, and a "result" line after, joined by an attempt
// id. An attempt line without a result is a request whose outcome was never
// learnt (the process was killed): re-check the cluster.
package audit

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"sync"
	"time"

	"github.com/txnscope/txnscope/internal/escape"
	"github.com/txnscope/txnscope/model"
)

// Log appends lines to one file; it is safe for concurrent use, and several
// processes may append to the same file.
type Log struct {
	path    string
	context string
	mu      sync.Mutex
	f       *os.File
}

// DefaultPath is $XDG_STATE_HOME/txnscope/audit.log, or
// ~/.local/state/txnscope/audit.log; "" when neither is set (a shared
// temporary directory is no place for it). A relative XDG_STATE_HOME is
// ignored, as the XDG specification says: it would follow the working
// directory.
func DefaultPath() string {
	dir := os.Getenv("XDG_STATE_HOME")
	if !filepath.IsAbs(dir) {
		home := os.Getenv("HOME")
		if !filepath.IsAbs(home) {
			return ""
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "txnscope", "audit.log")
}

// New returns the log at path without touching the disk; Open makes it ready.
func New(path string) *Log { return &Log{path: path} }

// Path is where the lines go.
func (l *Log) Path() string { return l.path }

// Open creates the file if needed and keeps it open for appending. It fails,
// with a reason fit for one line, when the log could not be written: no path,
// a directory anyone may write to, something other than a regular file (a
// directory, /dev/full, a FIFO), no permission. An abort is never offered
// before Open succeeded. Calling it again after a success does nothing.
func (l *Log) Open() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		return nil
	}
	return l.open()
}

func (l *Log) open() error {
	if l.path == "" {
		return errors.New("audit log: neither XDG_STATE_HOME nor HOME is set, so there is no default place for it; pass --audit-log PATH")
	}
	dir := filepath.Dir(l.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	if fi, err := os.Stat(dir); err != nil {
		return fmt.Errorf("audit log: %w", err)
	} else if fi.Mode().Perm()&0o002 != 0 {
		// Anyone could replace the file (a symlink to elsewhere) between
		// two attempts.
		return fmt.Errorf("audit log: %s is writable by anyone; pass --audit-log with a directory only you can write", dir)
	}
	if fi, err := os.Stat(l.path); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("audit log: %s is not a regular file (%s)", l.path, kind(fi.Mode()))
	}
	f, err := os.OpenFile(l.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return fmt.Errorf("audit log: %s is not a regular file", l.path)
	}
	l.f = f
	return nil
}

func kind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeSocket != 0:
		return "a socket"
	}
	return m.Type().String()
}

// Close closes the file; the log may be opened again.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// InContext makes every line name the config file's context the requests
// are sent in ("" for none); it returns l.
func (l *Log) InContext(name string) *Log {
	l.context = name
	return l
}

// Begin starts the record of one attempt at a; nothing is written until
// Sending or Done.
func (l *Log) Begin(bootstrap string, a model.Action) *Attempt {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return &Attempt{log: l, id: hex.EncodeToString(b[:]), bootstrap: bootstrap, context: l.context, action: a}
}

// Attempt is the record of one abort attempt.
type Attempt struct {
	log       *Log
	id        string
	bootstrap string
	context   string
	action    model.Action
	// evidenceAt is when the evidence the action now carries was read
	// again (zero: it is the plan's).
	evidenceAt time.Time
}

// ID joins the attempt's lines.
func (at *Attempt) ID() string { return at.id }

// Rests makes the lines from now on carry ev, the evidence as read again
// just before the next request: what the request rests on, not what the
// plan showed.
func (at *Attempt) Rests(ev model.CommitEvidence) {
	at.action.Verdict, at.action.FlinkState = ev.Verdict, ev.FlinkState
	at.evidenceAt = ev.At
	if at.evidenceAt.IsZero() {
		at.evidenceAt = time.Now()
	}
}

// Sending appends, and syncs to disk, the line that says request number try
// is about to go out, as request says (the broker it goes to included). When
// it fails the request must not be sent.
func (at *Attempt) Sending(try int, request string) error {
	e := at.entry("attempt", time.Now())
	e.Try = try
	if request != "" {
		e.Wire = request
	}
	return at.log.write(e)
}

// Done appends the attempt's result.
func (at *Attempt) Done(r model.Result) error {
	t := r.At
	if t.IsZero() {
		t = time.Now()
	}
	e := at.entry("result", t)
	e.Sends = &r.Sends
	if r.Request != "" {
		e.Wire = r.Request
	}
	e.Outcome = outcome(r)
	e.Result = r.Summary()
	e.ErrorCode = r.ErrorCode
	return at.log.write(e)
}

func outcome(r model.Result) string {
	switch {
	case r.Refused:
		return "refused"
	case r.Unknown:
		return "unknown"
	case r.Sent && r.Err == "" && r.ErrorCode == "":
		return "sent"
	}
	return "failed"
}

func (l *Log) write(e Entry) error {
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	// Read with cat or tail at 3 a.m.: nothing in it may act on a terminal.
	line = escape.JSON(line)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return errors.New("audit log: not open")
	}
	if err := l.follow(); err != nil {
		return err
	}
	if _, err := l.f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	return nil
}

// follow reopens the log when the file at its path is no longer the one
// held open (rotated by logrotate, deleted, replaced): the line must reach
// the file the operator will read, not an unlinked one.
func (l *Log) follow() error {
	at, err := os.Stat(l.path)
	if err == nil {
		if held, herr := l.f.Stat(); herr == nil && os.SameFile(at, held) {
			return nil
		}
	}
	l.f.Close()
	l.f = nil
	return l.open()
}

func osUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "unknown"
}
