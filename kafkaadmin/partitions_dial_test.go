package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"
)

// TestDialRefused: only a connect refused at once sends a partition's offsets
// to kgo's leader lookup again; a connect that ran out of time is a broker
// that hangs (its accept queue full under SIGSTOP), and asking again would
// wait it out a second time.
func TestDialRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"refused", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, true},
		{"refused, wrapped", fmt.Errorf("broker 2: %w", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNRESET}), true},
		{"connect timed out", &net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}, false},
		{"connect cut by the request's deadline", &net.OpError{Op: "dial", Net: "tcp", Err: context.DeadlineExceeded}, false},
		{"read timed out", &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}, false},
		{"not a network error", errors.New("boom"), false},
	} {
		if got := dialRefused(c.err); got != c.want {
			t.Errorf("%s: dialRefused(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}
