package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/conn"
	"github.com/txnscope/txnscope/views"
)

// The TUI keeps the insecure-TLS warning in its header, next to (and before)
// the reason it is disconnected, e.g. a refused authentication.
func TestTUIHeaderSecurity(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := config{security: securityInsecureForTest(), readOnly: true}
	warning := tuiOptions(c, nil, "broker1:9093").Warning
	d := views.HeaderData{
		Bootstrap: "broker1:9093",
		Now:       now,
		Warning:   warning,
		Conn: views.Conn{
			Err:     "cannot reach the cluster: SASL_AUTHENTICATION_FAILED: Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256",
			RetryAt: now.Add(4 * time.Second),
			Refresh: 2 * time.Second,
		},
	}
	for _, w := range []int{80, 160} {
		h := views.Header(d, w, views.PlainStyles())
		t.Logf("\n%s", h)
		lines := strings.Split(h, "\n")
		if len(lines) != 3 {
			t.Fatalf("%d lines", len(lines))
		}
		if !strings.Contains(lines[2], "SASL_AUTHENTICATION_FAILED") {
			t.Errorf("width %d: the note line is %q", w, lines[2])
		}
		if !strings.Contains(lines[0], "⚠ TLS cert NOT verified") || !strings.Contains(lines[0], "disconnected") {
			t.Errorf("width %d: the first line is %q", w, lines[0])
		}
	}
}

func securityInsecureForTest() conn.Security {
	return conn.Security{TLS: &conn.TLS{InsecureSkipVerify: true}}
}
