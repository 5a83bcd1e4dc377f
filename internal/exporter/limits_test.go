package exporter

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/buildinfo"
	"github.com/txnscope/txnscope/internal/testutil/uitest"
)

// countingListener counts the connections the server holds open, as the
// process's file descriptors would.
type countingListener struct {
	net.Listener
	open, peak atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	n := l.open.Add(1)
	for p := l.peak.Load(); n > p && !l.peak.CompareAndSwap(p, n); p = l.peak.Load() {
	}
	return &countedConn{Conn: c, l: l}, nil
}

type countedConn struct {
	net.Conn
	l    *countingListener
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.l.open.Add(-1) })
	return c.Conn.Close()
}

// serveLimited runs an exporter with short limits on a counted listener.
func serveLimited(t *testing.T, lim httpLimits) (addr string, ln *countingListener) {
	t.Helper()
	a := &uitest.Admin{}
	a.Push(uitest.Snapshot(uitest.T0))
	e := New(Options{Admin: a, Refresh: time.Hour, Build: buildinfo.Info{Version: "v"}})
	e.limits = lim
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln = &countingListener{Listener: inner}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return inner.Addr().String(), ln
}

// idleClients dial n connections that each ask /healthz once and then
// send nothing more. wait returns how many were answered and how many the
// server closed (after an answer, or at once: refused).
func idleClients(t *testing.T, addr string, n int) (wait func() (answered, closed int64)) {
	t.Helper()
	var ans, cls atomic.Int64
	var wg sync.WaitGroup
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		wg.Go(func() {
			c.SetReadDeadline(time.Now().Add(20 * time.Second)) //nolint:errcheck
			if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: exporter\r\n\r\n"); err != nil {
				cls.Add(1) // refused before it could ask
				return
			}
			br := bufio.NewReader(c)
			if r, err := http.ReadResponse(br, nil); err == nil {
				io.Copy(io.Discard, r.Body) //nolint:errcheck
				r.Body.Close()
				ans.Add(1)
				_, err = br.ReadByte()
				if errors.Is(err, io.EOF) {
					cls.Add(1)
				}
				return
			} else if !errors.Is(err, os.ErrDeadlineExceeded) {
				cls.Add(1) // refused: EOF or reset, no answer
			}
		})
	}
	return func() (int64, int64) { wg.Wait(); return ans.Load(), cls.Load() }
}

// TestIdleConnectionsClosed: a client that asks once and then keeps its
// connection open is closed once idle. On d0b993a it stayed open for good.
func TestIdleConnectionsClosed(t *testing.T) {
	addr, _ := serveLimited(t, httpLimits{readHeader: 2 * time.Second, read: 2 * time.Second, write: 5 * time.Second, idle: 300 * time.Millisecond, conns: 64})
	const n = 20 // under half the cap: kept alive until idle
	answered, closed := idleClients(t, addr, n)()
	if answered != n || closed != n {
		t.Errorf("of %d idle clients, %d were answered and %d closed by the server, want all", n, answered, closed)
	}
}

// TestConnectionFlood: hundreds of clients that hold their connection open
// are all answered and closed, or refused past the cap; never more than the
// cap are open at once, and /metrics answers meanwhile. On d0b993a all of
// them stayed open.
func TestConnectionFlood(t *testing.T) {
	const capConns, flood = 32, 300
	addr, ln := serveLimited(t, httpLimits{readHeader: 2 * time.Second, read: 2 * time.Second, write: 5 * time.Second, idle: time.Second, conns: capConns})
	wait := idleClients(t, addr, flood)

	// A scrape during the flood; one refused past the cap is tried again,
	// as Prometheus would at its next scrape.
	var body string
	deadline := time.Now().Add(10 * time.Second)
	for {
		cl := &http.Client{Timeout: 5 * time.Second}
		r, err := cl.Get("http://" + addr + "/metrics")
		if err == nil {
			b, _ := io.ReadAll(r.Body)
			r.Body.Close()
			body = string(b)
			cl.CloseIdleConnections()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics during the flood: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(body, "txnscope_up ") {
		t.Errorf("/metrics during the flood:\n%s", body)
	}

	answered, closed := wait()
	if closed != flood || answered == 0 {
		t.Errorf("of %d clients, %d were answered and %d closed by the server; want some answered and all closed", flood, answered, closed)
	}
	// One more for the instant between accepting one past the cap and
	// closing it.
	if p := ln.peak.Load(); p > capConns+1 {
		t.Errorf("%d connections open at once, want at most %d", p, capConns+1)
	}
	t.Logf("%d of %d answered, the rest refused; at most %d open at once", answered, flood, ln.peak.Load())
}
