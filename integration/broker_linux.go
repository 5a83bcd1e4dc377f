package integration

import "syscall"

// brokerProcAttr makes the kernel kill the broker JVM when the test process dies (a go test killed
// by a timeout, a signal or a closed pipe never runs its cleanups), so no broker outlives its test.
// The signal follows the thread that started the JVM; Go only ends threads that a goroutine left
// locked, which the tests never do.
func brokerProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
