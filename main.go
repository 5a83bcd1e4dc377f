// Command txnscope is a terminal UI that shows every transaction of a Kafka
// cluster live and aborts stuck ones safely. See README.md; the command line
// lives in internal/cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/txnscope/txnscope/internal/cli"
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
	code := cli.Run(ctx, os.Args[1:], cli.Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
	stop()
	os.Exit(code)
}
