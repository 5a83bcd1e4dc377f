package cli

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/txnscope/txnscope/internal/buildinfo"
	"github.com/txnscope/txnscope/internal/exporter"
	"github.com/txnscope/txnscope/internal/memlimit"
	"github.com/txnscope/txnscope/kafkaadmin"
)

// exporter serves the UI's refresh as Prometheus metrics.
const cmdExporter command = "exporter"

// defaultExporterRefresh: a scrape every 15 s or more is the usual, and a
// refresh scans the whole cluster; the UI's 2 s is for eyes on a screen.
const defaultExporterRefresh = 15 * time.Second

// exporterPort is --listen's default port. Prometheus' default port
// allocations (its wiki) fill 9100-9999 to the last port since 2023, so
// any port there is some exporter's (9308 is kafka_exporter's, 9876 also
// RocketMQ's name server); this one is outside it and no well-known
// service's. To be confirmed, and registered on the wiki, before a release.
const exporterPort = 10309

// runExporter refreshes and serves until SIGINT or SIGTERM. A cluster that
// does not answer is no reason to stop: txnscope_up says so, and the next
// interval tries again.
func runExporter(ctx context.Context, c config, std Stdio) error {
	warnInsecure(c, std.Err)
	// FollowLog as the UI: the coordinators' log tells every abort and
	// fence, where polls can miss those that start and end between two.
	// FollowOnLetGo: the log's first read waits for the exporter to let go
	// of the first listing's rows (exporter.Options.LetGo).
	cl, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: c.bootstrap, Timeout: c.timeout, Security: c.security,
		FollowLog: c.history == "auto", FollowOnLetGo: true})
	if err != nil {
		return usageError{err.Error()}
	}
	defer cl.Close()
	ln, err := net.Listen("tcp", c.listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	memlimit.Hold(ctx)
	go func() {
		select {
		case <-cl.LogLive(): // nil, never ready, without the log
			memlimit.Lean()
		case <-ctx.Done():
		}
	}()
	// The address on stdout, as demo --headless prints its bootstrap: with
	// port 0, a script learns the port here.
	if _, err := fmt.Fprintf(std.Out, "listening: http://%s/metrics\n", ln.Addr()); err != nil {
		ln.Close()
		return err
	}
	e := exporter.New(exporter.Options{Admin: cl, Refresh: c.refresh, Build: buildinfo.Read(), MaxIDSeries: c.maxIDSeries, LetGo: func() {
		memlimit.Settle()
		cl.LetGo()
	}})
	return e.Serve(ctx, ln)
}

// maxIDSeries caps --max-id-series: past a thousand, the page is the
// unbounded one the flag exists to prevent.
const maxIDSeries = 1000

// checkListen refuses a --listen that is not HOST:PORT with a port number,
// and a --max-id-series out of range.
func checkListen(c *config, _ func(string) bool) error {
	if c.maxIDSeries < 0 || c.maxIDSeries > maxIDSeries {
		return usagef("bad --max-id-series %d: want 0 to %d", c.maxIDSeries, maxIDSeries)
	}
	_, port, err := net.SplitHostPort(c.listen)
	if err != nil {
		return usagef("bad --listen %q: want HOST:PORT (e.g. 127.0.0.1:%d)", clip(c.listen), exporterPort)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return usagef("bad --listen %q: the port must be a number from 0 to 65535", clip(c.listen))
	}
	return nil
}
