package cli

import (
	"fmt"
	"strings"
	"testing"
)

func TestShortList(t *testing.T) {
	seeds := func(n int) []string {
		s := make([]string, n)
		for i := range s {
			s[i] = fmt.Sprintf("127.0.0.1:%d", i+1)
		}
		return s
	}
	for _, tc := range []struct {
		items []string
		want  string
	}{
		{nil, ""},
		{seeds(1), "127.0.0.1:1"},
		{seeds(3), "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3"},
		{seeds(4), "4 bootstrap servers (127.0.0.1:1, 127.0.0.1:2, 127.0.0.1:3, … and 1 more)"},
		{seeds(1000), "1000 bootstrap servers (127.0.0.1:1, 127.0.0.1:2, 127.0.0.1:3, … and 997 more)"},
	} {
		if got := shortList(tc.items, ",", "bootstrap servers"); got != tc.want {
			t.Errorf("shortList(%d items) = %q, want %q", len(tc.items), got, tc.want)
		}
	}
	if got := shortList(seeds(100000), ",", "x"); len(got) > 100 || strings.Contains(got, "\n") {
		t.Errorf("List of 100000 items is %d bytes", len(got))
	}
}
