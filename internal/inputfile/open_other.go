//go:build !unix

package inputfile

const openFlags = 0

const permsMeanSomething = false
