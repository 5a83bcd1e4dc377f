//go:build unix

package cli

import (
	"syscall"
	"time"
)

// cpuTime is the CPU the process has used, user and system: on a shared
// machine it says more about a benchmark than the wall clock does.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
