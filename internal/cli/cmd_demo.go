package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/txnscope/txnscope/internal/audit"
	"github.com/txnscope/txnscope/kafkaadmin/demo"
)

const (
	cmdDemo command = "demo"
	// cmdDemoHeadless is demo --headless: the cluster without the UI, which
	// takes none of the UI's flags. It is never c.cmd, only a row of the table.
	cmdDemoHeadless command = "demo --headless"
)

// demoLog is where the demo workloads write: a file next to the audit log in
// the user's state directory (stdout belongs to the UI or to the bootstrap
// line). It falls back to the temporary directory, then to nowhere.
func demoLog() (io.Writer, string, func()) {
	dirs := []string{os.TempDir()}
	if p := audit.DefaultPath(); p != "" {
		dirs = append([]string{filepath.Dir(p)}, dirs...)
	}
	for _, dir := range dirs {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			continue
		}
		path := filepath.Join(dir, "demo.log")
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
		if err != nil {
			continue
		}
		return f, path, func() { f.Close() }
	}
	return io.Discard, "", func() {}
}

func startDemo(ctx context.Context) (*demo.Demo, string, func(), error) {
	w, path, closeLog := demoLog()
	d, err := demo.Start(ctx, demo.Options{Log: w})
	if err != nil {
		closeLog()
		return nil, "", nil, err
	}
	return d, path, func() { d.Close(); closeLog() }, nil
}

// runDemoTUI opens the UI on a fresh demo cluster.
func runDemoTUI(ctx context.Context, c config, std Stdio) error {
	if err := needTerminal(std.Out); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	d, _, stop, err := startDemo(ctx)
	if err != nil {
		return err
	}
	defer stop()
	if c.checkpointInterval == 0 {
		// The demo knows its jobs' interval: their problems are judged by it.
		c.checkpointInterval = d.CheckpointInterval()
	}
	return runTUI(ctx, c, d.Bootstrap(), std.Out)
}

// runHeadless runs the demo cluster until ctx ends (SIGINT/SIGTERM). The
// bootstrap line comes first on stdout so that scripts can read it and go on.
func runHeadless(ctx context.Context, _ config, std Stdio) error {
	stdout, stderr := std.Out, std.Err
	d, path, stop, err := startDemo(ctx)
	if err != nil {
		return err
	}
	defer stop()
	if _, err := fmt.Fprintf(stdout, "bootstrap: %s\n", strings.Join(d.Bootstrap(), ",")); err != nil {
		return err
	}
	if path != "" {
		fmt.Fprintf(stderr, "demo log: %s\n", path)
	}
	fmt.Fprintln(stderr, "demo cluster running; stop it with ctrl+c or SIGTERM")
	<-ctx.Done()
	return nil
}
