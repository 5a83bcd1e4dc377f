package integration

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/buildinfo"
	"github.com/txnscope/txnscope/internal/exporter"
)

// c3Watch is what an operator and Prometheus see of the three-node cluster: the real txnscope
// TUI in tmux (the log followed) and an exporter whose /healthz is read every half second.
type c3Watch struct {
	tui    *tuiTerm
	mu     sync.Mutex
	health []c3Health
}

type c3Health struct {
	at   time.Time
	code int
	body string
}

// expRefresh is the exporter's interval in these tests: /healthz allows three of them without a
// successful refresh, and a refresh with a hung node takes the request timeout.
const expRefresh = 5 * time.Second

// watch starts both with the request timeout; they stop when the test ends.
func (c *c3) watch(ctx context.Context, timeout time.Duration) *c3Watch {
	c.t.Helper()
	w := &c3Watch{tui: startTUI(ctx, c.t, strings.Join(c.bootstrap, ","), "--timeout", timeout.String())}
	c.t.Cleanup(w.tui.quit)
	e := exporter.New(exporter.Options{Admin: c.scopeClient(true, timeout), Refresh: expRefresh, Build: buildinfo.Info{Version: "test"}})
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	c.t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	wg.Go(func() { e.Run(ctx) })
	wg.Go(func() {
		h := e.Handler()
		for ctx.Err() == nil {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
			b, _ := io.ReadAll(rec.Body)
			w.mu.Lock()
			w.health = append(w.health, c3Health{at: time.Now(), code: rec.Code, body: strings.TrimSpace(string(b))})
			w.mu.Unlock()
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
		}
	})
	return w
}

// healthIn are the /healthz answers read within [from, to].
func (w *c3Watch) healthIn(from, to time.Time) []c3Health {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []c3Health
	for _, h := range w.health {
		if !h.at.Before(from) && !h.at.After(to) {
			out = append(out, h)
		}
	}
	return out
}

// waitHealth waits up to patience for /healthz to answer code with a body starting with prefix.
func (w *c3Watch) waitHealth(t *testing.T, patience time.Duration, code int, prefix string) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		w.mu.Lock()
		var last c3Health
		if len(w.health) > 0 {
			last = w.health[len(w.health)-1]
		}
		w.mu.Unlock()
		if last.at.After(start) && last.code == code && strings.HasPrefix(last.body, prefix) {
			return time.Since(start)
		}
		if time.Since(start) > patience {
			t.Errorf("/healthz never answered %d %q… within %s; the last: %d %q", code, prefix, patience, last.code, last.body)
			return patience
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// keysAnswer opens the help and closes it, and says how long the screen took to show it.
func (w *c3Watch) keysAnswer() time.Duration {
	start := time.Now()
	w.tui.Keys("?")
	w.tui.WaitText([]string{"txnscope keys"})
	took := time.Since(start)
	w.tui.Keys("Escape")
	w.tui.WaitText([]string{"TRANSACTIONAL ID"}, "txnscope keys")
	return took
}

// degradedText is what the header says of a node that does not answer.
func degradedText(node int32) string { return fmt.Sprintf("degraded: broker %d not answering", node) }
