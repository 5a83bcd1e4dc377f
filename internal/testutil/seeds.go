// Package testutil holds helpers shared by tests of several packages.
package testutil

import (
	"fmt"
	"net"
	"sync"
	"syscall"
	"testing"
)

// ClosedAddr is a 127.0.0.1 address where connecting is refused. The port
// stays bound (a socket bound, never listening) until the test ends, so a
// cluster a parallel test starts cannot be handed it: a closed listener's
// port once was, and a test of an unreachable cluster reached a live one.
func ClosedAddr(t testing.TB) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	in4, ok := sa.(*syscall.SockaddrInet4)
	if !ok {
		t.Fatalf("bound socket has address %T", sa)
	}
	return fmt.Sprintf("127.0.0.1:%d", in4.Port)
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
