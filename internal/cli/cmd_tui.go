package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"

	"github.com/txnscope/txnscope/internal/audit"
	"github.com/txnscope/txnscope/internal/ctxfile"
	"github.com/txnscope/txnscope/internal/flinkrest"
	"github.com/txnscope/txnscope/internal/memlimit"
	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
	"github.com/txnscope/txnscope/ui"
)

// The UI is what txnscope does given no command.
const cmdTUI command = ""

// runTUICommand opens the UI on the user's cluster.
func runTUICommand(ctx context.Context, c config, std Stdio) error {
	if err := needTerminal(std.Out); err != nil {
		return err
	}
	for {
		next, err := runTUIIn(ctx, c, c.bootstrap, std.Out)
		if next == nil || err != nil {
			return err
		}
		// :ctx NAME: the next context on a program of its own, nothing of
		// this one's cluster carried over.
		c = *next
	}
}

// switchArgs are the arguments :ctx NAME is read with: the context as
// `txnscope --context NAME` would take it from the same file, keeping only
// a --read-only given on the command line (it can only add safety).
func (c config) switchArgs(name string) []string {
	args := []string{"--context", name, "--config", c.configFile}
	if c.readOnlyGiven {
		args = append(args, "--read-only")
	}
	return args
}

// needTerminal refuses to start the UI where it cannot be seen.
func needTerminal(stdout io.Writer) error {
	if !isTerminal(stdout) {
		return usagef("stdout is not a terminal, and the UI needs one; use `txnscope snapshot` for text or JSON output")
	}
	return nil
}

// isTerminal reports whether w is a terminal (not a pipe, a file or /dev/null).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

// runTUI opens the UI on the cluster at bootstrap until the user quits or a
// signal arrives.
func runTUI(ctx context.Context, c config, bootstrap []string, stdout io.Writer) error {
	_, err := runTUIIn(ctx, c, bootstrap, stdout)
	return err
}

// runTUIIn is runTUI; next is the context the operator switched to (:ctx),
// read and checked, nil when the UI ended otherwise.
func runTUIIn(ctx context.Context, c config, bootstrap []string, stdout io.Writer) (next *config, err error) {
	cl, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: bootstrap, Timeout: c.timeout, Security: c.security, FollowLog: c.history == "auto"})
	if err != nil {
		return nil, usageError{err.Error()}
	}
	defer cl.Close()
	o := tuiOptions(c, cl, strings.Join(bootstrap, ","))
	o.Context = ctx
	if c.configFile != "" {
		if f, err := ctxfile.Load(c.configFile); err == nil {
			o.Profiles = f.Names()
		}
		o.Switch = func(name string) error {
			nc, err := parse(c.switchArgs(name))
			if err != nil {
				return err
			}
			next = &nc
			return nil
		}
	}
	if len(c.flink.Clients) > 0 || len(c.flink.Retained) > 0 {
		// Read on their own clock, each within --timeout: a JobManager that
		// hangs never holds a refresh of the cluster.
		wctx, stop := context.WithCancel(ctx)
		defer stop()
		o.Flink = flinkrest.Watch(wctx, c.flink, c.refresh, c.timeout)
		o.ReadFlink = func(ctx context.Context) *model.FlinkView { return flinkrest.Read(ctx, c.flink, c.timeout) }
	}
	memlimit.Hold(ctx)
	m := ui.New(o)
	p := tea.NewProgram(m, tea.WithOutput(stdout))
	// A signal quits the program the way q does. Killing it (tea.WithContext)
	// skips waiting for the input reader, which bubbletea then closes under
	// the reader's feet (a data race the race detector reports).
	defer context.AfterFunc(ctx, p.Quit)()
	_, err = p.Run()
	// A signal ends the program with an abort perhaps in flight: its request
	// is abandoned with the context, and its result line must reach the
	// audit log before the process exits.
	recorded := m.Wait(c.timeout + 5*time.Second)
	if o.Audit != nil {
		o.Audit.Close()
	}
	if !recorded {
		return nil, fmt.Errorf("an abort was still in flight when txnscope ended: its attempt line in %s has no result line; re-check the cluster",
			o.Audit.Path())
	}
	// SIGINT, SIGTERM and SIGHUP end the UI as quitting does: they are how an operator
	// (or a supervisor) asks for a clean exit.
	if errors.Is(err, tea.ErrInterrupted) || (errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil) {
		return nil, nil
	}
	if err != nil || m.SwitchedTo() == "" || ctx.Err() != nil {
		return nil, err
	}
	return next, nil
}

func tuiOptions(c config, admin ui.Admin, bootstrap string) ui.Options {
	o := ui.Options{
		Admin:              admin,
		Bootstrap:          bootstrap,
		Refresh:            c.refresh,
		ReadOnly:           c.readOnly,
		CheckpointInterval: c.checkpointInterval,
		Profile:            ui.Profile{Name: c.ctx.name, Label: c.ctx.label, Color: c.ctx.color, Protected: c.ctx.protected},
	}
	if c.ctx.name != "" {
		o.Status = "context " + c.ctx.name
	}
	if len(c.warnings) > 0 {
		o.Status, o.StatusError = "warning: "+c.warnings[0], true
	}
	if c.insecure() {
		o.Warning = "TLS cert NOT verified"
	}
	if !c.readOnly {
		o.Audit = audit.New(c.auditLog).InContext(c.ctx.name)
	}
	return o
}
