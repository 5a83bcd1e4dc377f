// Package testutil holds helpers shared by tests of several packages.
package testutil

import (
	"net"
	"sync"
	"testing"
)

// ClosedAddr is a 127.0.0.1 address nothing listens on: a broker that is
// down, whose host refuses the connection at once.
func ClosedAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// SilentAddr is a 127.0.0.1 address that accepts connections and never
// answers: a broker that is stopped (SIGSTOP) or wedged, or a blackholed
// host, the worst kind of dead seed, as every request to it waits out its
// timeout. It closes when the test ends.
func SilentAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never read or written
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}
