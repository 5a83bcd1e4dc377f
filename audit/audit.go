// Package audit appends one JSON line per abort attempt to a file, so that what an
// operator did at 3 a.m. can be read in the morning.
package audit

import (
	"encoding/json"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"sync"
	"time"

	"github.com/txnscope/txnscope/model"
)

// Entry is one line of the audit log.
type Entry struct {
	Time          time.Time `json:"time"`
	User          string    `json:"user"`
	Bootstrap     string    `json:"bootstrap"`
	Action        string    `json:"action"`
	Target        string    `json:"target"`
	ProducerID    int64     `json:"producer_id"`
	ProducerEpoch int16     `json:"producer_epoch"`
	Wire          string    `json:"request"`
	Result        string    `json:"result"`
	ErrorCode     string    `json:"error_code,omitempty"`
}

// Log appends entries to a file; it is safe for concurrent use.
type Log struct {
	path string
	mu   sync.Mutex
}

// DefaultPath is $XDG_STATE_HOME/txnscope/audit.log, or ~/.local/state/... .
func DefaultPath() string {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = os.TempDir()
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "txnscope", "audit.log")
}

// Open returns a log writing to path (created on first write).
func Open(path string) *Log { return &Log{path: path} }

// Path is where entries go.
func (l *Log) Path() string { return l.path }

// Record writes the outcome of one attempt.
func (l *Log) Record(bootstrap string, r model.Result) error {
	e := Entry{
		Time: r.At.UTC(), User: osUser(), Bootstrap: bootstrap, Action: string(r.Action.Kind),
		Target: r.Action.Target(), ProducerID: r.Action.ProducerID, ProducerEpoch: r.Action.ProducerEpoch,
		Wire: r.Action.Wire(), Result: r.Summary(), ErrorCode: r.ErrorCode,
	}
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	f, err := os.OpenFile(l.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("audit log: %w", err)
	}
	return f.Close()
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
