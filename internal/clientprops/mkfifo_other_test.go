//go:build !unix

package clientprops

import "errors"

func mkfifo(string) error { return errors.New("not on this system") }
