package views

import (
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"
)

// TestFooterKeepsTheStatus: a status of any length is shown; the keys give
// way. A status too long for even one key beside it once lost to them.
func TestFooterKeepsTheStatus(t *testing.T) {
	keys := []key.Binding{
		key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open the transaction's detail")),
		key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "abort")),
	}
	for n := 0; n <= 90; n += 5 {
		status := strings.Repeat("s", n)
		got := ansi.Strip(Footer(status, keys, 80, PlainStyles()))
		if ansi.StringWidth(got) != 80 {
			t.Errorf("status of %d: footer %d wide", n, ansi.StringWidth(got))
		}
		if want := status[:min(n, 70)]; !strings.Contains(got, want) {
			t.Errorf("status of %d lost: %q", n, got)
		}
	}
}
