// Command txnscope is a terminal UI that shows every transaction of a Kafka
// cluster live and aborts stuck ones safely. See README.md.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/txnscope/txnscope/internal/escape"
)

// Exit statuses, part of the command line contract.
const (
	exitOK      = 0
	exitFailure = 1 // the cluster could not be read, an abort was refused or failed, ...
	exitUsage   = 2
)

func main() {
	// SIGHUP (the SSH session dropped) ends txnscope as SIGINT and SIGTERM
	// do: an abort in flight is recorded as an unknown outcome and the
	// terminal restored, instead of the process dying mid-request. The first
	// signal asks for a clean shutdown. A dropped session delivers SIGHUP
	// twice, and a supervisor may repeat SIGTERM: those are ignored from then
	// on, so they cannot cut the audit log's result line short; a second
	// ctrl+c, should the shutdown hang, kills the process the usual way.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	context.AfterFunc(ctx, func() {
		signal.Ignore(syscall.SIGHUP, syscall.SIGTERM)
		stop()
	})
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run parses args and does what they ask; it returns the exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c, err := parse(args)
	if err != nil {
		fmt.Fprintf(stderr, "txnscope: %v\n\n%s", err, usage())
		return exitUsage
	}
	switch {
	case c.help:
		fmt.Fprint(stdout, usage())
		return exitOK
	case c.version:
		fmt.Fprintf(stdout, "txnscope %s\n", version())
		return exitOK
	}

	for _, w := range c.warnings {
		fmt.Fprintf(stderr, "txnscope: warning: %s\n", w)
	}
	if c.insecure() && (c.cmd == cmdSnapshot || isOneShot(c.cmd)) {
		fmt.Fprintf(stderr, "txnscope: warning: %s\n", insecureWarning)
	}
	if c.cmd == cmdSnapshot {
		err = runSnapshot(ctx, c, stdout, stderr)
	} else if isOneShot(c.cmd) {
		err = runOneShot(ctx, c, stdin, stdout, stderr)
	} else if c.cmd == cmdDemo && c.headless {
		err = runHeadless(ctx, stdout, stderr)
	} else if !isTerminal(stdout) {
		err = usagef("stdout is not a terminal, and the UI needs one; use `txnscope snapshot` for text or JSON output")
	} else if c.cmd == cmdDemo {
		err = runDemoTUI(ctx, c, stdout)
	} else {
		err = runTUI(ctx, c, c.bootstrap, stdout)
	}
	if err == nil {
		return exitOK
	}
	// Errors quote the cluster (ids, topics, a broker's error text): written
	// out, never raw.
	fmt.Fprintf(stderr, "txnscope: %s\n", escape.Line(err.Error()))
	if errors.As(err, new(usageError)) {
		return exitUsage
	}
	return exitFailure
}
