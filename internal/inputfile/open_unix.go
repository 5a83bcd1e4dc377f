//go:build unix

package inputfile

import "syscall"

// openFlags: O_NONBLOCK returns at once from opening a FIFO with no writer
// (it has no effect on reading a regular file); O_NOCTTY keeps a terminal
// device from becoming the process's controlling terminal.
const openFlags = syscall.O_NONBLOCK | syscall.O_NOCTTY

const permsMeanSomething = true
