package conn

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNoBootstrap is ParseBootstrap's error when the lists name no server.
var ErrNoBootstrap = errors.New("no bootstrap server given")

// AddressError is ParseBootstrap's error for a server with white space in
// it: a pasted line break or a space in place of a comma, which the Kafka
// client would only report as an address it cannot dial.
type AddressError struct{ Addr string }

func (e *AddressError) Error() string { return fmt.Sprintf("bad bootstrap server %q", e.Addr) }

// SplitBootstrap splits comma-separated host:port lists into the servers,
// trimmed, without empty entries ("a:1, b:2," is two servers).
func SplitBootstrap(lists ...string) []string {
	var out []string
	for _, list := range lists {
		for _, s := range strings.Split(list, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// ParseBootstrap is SplitBootstrap refusing a server with white space in it
// (*AddressError, the first such) and lists that name none (ErrNoBootstrap).
func ParseBootstrap(lists ...string) ([]string, error) {
	servers := SplitBootstrap(lists...)
	for _, s := range servers {
		if strings.ContainsAny(s, " \t\r\n") {
			return nil, &AddressError{Addr: s}
		}
	}
	if len(servers) == 0 {
		return nil, ErrNoBootstrap
	}
	return servers, nil
}
