//go:build !linux

package integration

import "syscall"

// brokerProcAttr: without Linux's parent-death signal a broker is stopped only by the test's
// cleanup.
func brokerProcAttr() *syscall.SysProcAttr { return nil }
