package ui

import (
	"context"
	"time"

	"github.com/txnscope/txnscope/internal/audit"
	"github.com/txnscope/txnscope/model"
)

// Options wire the UI to a cluster.
type Options struct {
	Admin              Admin
	Bootstrap          string        // shown in the header and the audit log
	Refresh            time.Duration // poll interval (default 2s)
	ReadOnly           bool
	Audit              *audit.Log       // nil when read-only
	CheckpointInterval time.Duration    // 0 = unknown; passed to model.Query
	Now                func() time.Time // nil = time.Now; tests pin it
	// Warning stays in the header for the whole session, e.g. that the
	// brokers' TLS certificates are not verified.
	Warning string
	// Context is the program's (nil: none): when it ends (a signal), an
	// abort in flight is abandoned and recorded as an unknown outcome.
	Context context.Context
	// Flink is the latest reading of the JobManagers given with --flink
	// (nil: none given; it returns nil until the first reading is in).
	Flink func() *model.FlinkView
	// ReadFlink reads the same sources afresh (nil: none given): a commit
	// asks it again just before every request.
	ReadFlink func(ctx context.Context) *model.FlinkView
	// Profile is the config file's context it runs in; Profiles are the
	// file's contexts, for :ctx. Switch gets the context name ready to run
	// (its files read, its flags checked); on nil the UI quits, and
	// SwitchedTo says where to. nil: no switching (the demo).
	Profile  Profile
	Profiles []string
	Switch   func(name string) error
	// Status is shown in the status line at the start (a context switched
	// to, a warning about its files), as an error with StatusError.
	Status      string
	StatusError bool
}

// The layout needs this much room; below it a message says so.
const (
	minWidth  = 80
	minHeight = 20
)

// historySize is how many events the events pane can go back.
const historySize = 2000

func (o Options) withDefaults() Options {
	if o.Refresh <= 0 {
		o.Refresh = 2 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.ReadOnly {
		o.Audit = nil
	}
	if o.Context == nil {
		o.Context = context.Background()
	}
	return o
}
