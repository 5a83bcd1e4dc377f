package exporter

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// httpLimits bound what HTTP clients can hold of the exporter. Every open
// connection is a file descriptor, and the exporter's Kafka connections
// come from the same limit: a flood of idle connections must not leave
// none for the cluster.
type httpLimits struct {
	// readHeader and read: a scrape is a GET with no body, its headers are
	// all there is to read; a client that takes longer is not Prometheus.
	readHeader, read time.Duration
	// write: the page at 100,000 ids and 1,000 pinned partitions (160 KB) is built in under 10 ms and
	// sent in a few seconds even at 1 Mbit/s; 30 s is well above that and
	// above a usual scrape_timeout (10 s), so only a stalled client is cut.
	write time.Duration
	// idle: Prometheus reuses its connection from one scrape to the next;
	// 30 s keeps it across the 15 s interval docs/alerting.md suggests,
	// and a slower scraper just dials again.
	idle time.Duration
	// conns: Prometheus holds one connection per target, an HA pair two;
	// 64 leaves room for curl, health checks and a dashboard's direct
	// scrapes, and is far below the usual 1024 descriptors per process.
	conns int
}

var defaultHTTPLimits = httpLimits{readHeader: 10 * time.Second, read: 10 * time.Second, write: 30 * time.Second, idle: 30 * time.Second, conns: 64}

// server serves h on ln within l. While half the connections are taken, a
// connection is closed after its answer instead of kept alive: clients
// that only hold connections open then cannot fill the cap.
func (l httpLimits) server(h http.Handler, ln *limitListener) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: l.readHeader, ReadTimeout: l.read, WriteTimeout: l.write, IdleTimeout: l.idle,
		ConnState: func(c net.Conn, s http.ConnState) {
			if s == http.StateIdle && ln.busy() {
				c.Close()
			}
		}}
}

// limitListener holds at most max connections open. One past the cap is
// closed at once rather than left waiting in the kernel's accept queue:
// behind a flood, a scrape would wait there for minutes, where now it
// fails fast and the next one gets in.
type limitListener struct {
	net.Listener
	max  int64
	open atomic.Int64
}

func limitConns(ln net.Listener, n int) *limitListener {
	return &limitListener{Listener: ln, max: int64(n)}
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) > l.max {
			l.open.Add(-1)
			c.Close()
			continue
		}
		return &limitConn{Conn: c, l: l}, nil
	}
}

// busy: half the connections are taken.
func (l *limitListener) busy() bool { return 2*l.open.Load() >= l.max }

type limitConn struct {
	net.Conn
	l    *limitListener
	once sync.Once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.open.Add(-1) })
	return err
}
