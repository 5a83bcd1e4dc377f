// Package cli is txnscope's command line: the table of commands (commands.go),
// one file per command (cmd_*.go), the flags, and the help, shell completion
// and docs/cli.md generated from the table.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/txnscope/txnscope/internal/escape"
)

// Exit statuses, part of the command line contract.
const (
	exitOK      = 0
	exitFailure = 1 // the cluster could not be read, an abort was refused or failed, ...
	exitUsage   = 2
)

// Stdio is the program's standard streams.
type Stdio struct {
	In       io.Reader
	Out, Err io.Writer
}

// Run parses args (the arguments after the program name) and does what they
// ask; it returns the exit status.
func Run(ctx context.Context, args []string, std Stdio) int {
	c, err := parse(args)
	if err != nil {
		// The arguments may be pasted from anywhere (an id from a listing);
		// the messages Go-quote them (%q) or not (pflag's unknown flag).
		fmt.Fprintf(std.Err, "txnscope: %s\n%s\n", escape.Requote(err.Error()), seeHelp(c))
		return exitUsage
	}
	switch {
	case c.help:
		fmt.Fprint(std.Out, help(c))
		return exitOK
	case c.version:
		fmt.Fprintln(std.Out, version())
		return exitOK
	}

	for _, w := range c.warnings {
		fmt.Fprintf(std.Err, "txnscope: warning: %s\n", escape.Text(w)) // they name files
	}
	err = specOf(c).run(ctx, c, std)
	if err == nil {
		return exitOK
	}
	// Errors quote the cluster (ids, topics, a broker's error text): written
	// out, never raw.
	fmt.Fprintf(std.Err, "txnscope: %s\n", escape.Line(err.Error()))
	if errors.As(err, new(usageError)) {
		fmt.Fprintln(std.Err, seeHelp(c))
		return exitUsage
	}
	return exitFailure
}

// seeHelp is the line after a usage error: where the flags of the command
// that was run are told. Not the help itself: its hundred lines would push
// the error off the screen.
func seeHelp(c config) string {
	return strings.Join(strings.Fields("see txnscope "+string(specOf(c).cmd)+" --help"), " ")
}

// usageError is bad input on the command line: exit status 2, with a
// pointer to the command's help.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// clip shortens a value quoted in an error: an argument pasted by mistake
// may be kilobytes long, and the message is one line.
func clip(s string) string {
	const most = 64
	if r := []rune(s); len(r) > most {
		return string(r[:most]) + "…"
	}
	return s
}

// oneLine keeps an error message to one line of stderr.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// Main is the program: txnscope's main, and the end-to-end tests' copy of
// it (internal/e2e runs its test binary as the program).
//
// SIGHUP (the SSH session dropped) ends txnscope as SIGINT and SIGTERM
// do: an abort in flight is recorded as an unknown outcome and the
// terminal restored, instead of the process dying mid-request. The first
// signal asks for a clean shutdown. A dropped session delivers SIGHUP
// twice, and a supervisor may repeat SIGTERM: those are ignored from then
// on, so they cannot cut the audit log's result line short; a second
// ctrl+c, should the shutdown hang, kills the process the usual way.
func Main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	context.AfterFunc(ctx, func() {
		signal.Ignore(syscall.SIGHUP, syscall.SIGTERM)
		stop()
	})
	code := Run(ctx, os.Args[1:], Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
	stop()
	os.Exit(code)
}
