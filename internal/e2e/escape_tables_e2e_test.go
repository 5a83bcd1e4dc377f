package e2e

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/escape"
	"github.com/txnscope/txnscope/internal/testutil"
	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
)

// lockedBuffer is a buffer a test may read while the program writes to it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// confirmIn runs the program with args on a terminal (a pseudo-terminal as
// its stdin, stdout and stderr kept apart), waits for its confirmation
// prompt on stderr, types answer and enter, and returns what it printed.
func confirmIn(t *testing.T, answer string, args ...string) result {
	t.Helper()
	master, tty := openPTY(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := txnscope(t, ctx, args...)
	var out, errb lockedBuffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	go io.Copy(io.Discard, master) // the terminal's echo of what is typed
	var err error
	prompted := false
wait:
	for {
		select {
		case err = <-done:
			break wait
		case <-time.After(20 * time.Millisecond):
			if !prompted && strings.Contains(errb.String(), "and press enter to send it") {
				prompted = true
				if _, werr := io.WriteString(master, answer+"\n"); werr != nil {
					t.Fatal(werr)
				}
			}
		}
	}
	if !prompted {
		t.Errorf("txnscope %q ended without asking: stderr %q", args, errb.String())
	}
	r := result{stdout: out.String(), stderr: errb.String()}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	default:
		t.Fatalf("txnscope %q: %v", args, err)
	}
	return r
}

// TestE2EEscapeEveryTable: every command's plain-text output — list, describe,
// describe-producers, find-hanging, snapshot, the abort and force-terminate
// prompts and their results, and the one-line errors — over the same hostile
// ids (testutil.HostileIDs: bytes that are not UTF-8, a lone 0x9b, NUL, ESC
// sequences, CR LF, U+0085, U+009B, a bidi override, quotes, backslashes)
// carries no raw byte a terminal could act on: no C0 control but the newline
// (and the tab of kafka-transactions.sh's tables), no DEL, no C1 control, no
// format character, nothing that is not UTF-8. Each id shows escaped once:
// an id without a backslash never shows \\.
func TestE2EEscapeEveryTable(t *testing.T) {
	quickExit(t)
	c, bs := kafkatest.NewCluster(t)
	b := strings.Join(bs, ",")
	for _, id := range testutil.HostileIDs {
		kafkatest.OpenTxn(t, bs, id, "orders", time.Minute)
	}
	// The abort's target, on a partition of its own.
	lost := kafkatest.Producer(t, bs, "lost-0-1", time.Minute)
	kafkatest.Begin(t, lost)
	kafkatest.Produce(t, lost, "orders", 1, 2)
	auditLog := t.TempDir() + "/audit.log"

	check := func(what string, r result, wantCode int, tabs bool, id string) {
		t.Helper()
		if r.code != wantCode {
			t.Errorf("%s: exit %d, want %d; stderr %q", what, r.code, wantCode, r.stderr)
		}
		for _, o := range []struct{ name, text string }{{"stdout", r.stdout}, {"stderr", r.stderr}} {
			if bad := testutil.RawControl(o.text, tabs && o.name == "stdout"); bad != "" {
				t.Errorf("%s: %s raw on %s:\n%q", what, bad, o.name, o.text)
			}
			if id != "" && !strings.Contains(id, `\`) && strings.Contains(o.text, `\\`) {
				t.Errorf("%s: escaped twice on %s:\n%s", what, o.name, o.text)
			}
		}
		if wantCode == 1 && strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%s: want one line on stderr, got %q", what, r.stderr)
		}
	}

	// A cell of kafka-transactions.sh's table: padded, then a tab.
	cell := func(out, text string) bool {
		return strings.Contains(out, text+" ") || strings.Contains(out, text+"\t")
	}
	r := run1(t, "list", "-b", b)
	check("list", r, 0, true, "")
	for _, id := range testutil.HostileIDs {
		if !cell(r.stdout, escape.Text(id)) {
			t.Errorf("list does not show %s:\n%s", escape.Text(id), r.stdout)
		}
	}
	r = run1(t, "snapshot", "-b", b)
	check("snapshot", r, 0, false, "")
	if n := strings.Count(r.stdout, "\n"); n != len(testutil.HostileIDs)+2 {
		t.Errorf("snapshot: %d lines, want the header and one per id:\n%s", n, r.stdout)
	}
	for _, id := range testutil.HostileIDs {
		if shown := strconv.Quote(id); !strings.Contains(r.stdout, "\n"+id+" ") && !strings.Contains(r.stdout, "\n"+shown+" ") {
			t.Errorf("snapshot does not show %s on its own row:\n%s", shown, r.stdout)
		}
	}
	check("describe-producers", run1(t, "describe-producers", "-b", b, "--topic", "orders", "--partition", "0"), 0, true, "")
	check("find-hanging", run1(t, "find-hanging", "-b", b, "--topic", "orders", "--max-transaction-timeout", "0"), 0, true, "")

	for _, id := range testutil.HostileIDs {
		if strings.Contains(id, "\x00") {
			continue // no command line can hold a NUL; the listings above show it
		}
		what := func(s string) string { return s + " " + strconv.Quote(id) }
		r := run1(t, "describe", "-b", b, "--transactional-id", id)
		check(what("describe"), r, 0, true, id)
		if !cell(r.stdout, escape.Text(id)) {
			t.Errorf("%s does not show %s:\n%s", what("describe"), escape.Text(id), r.stdout)
		}
		check(what("describe of an unknown id"), run1(t, "describe", "-b", b, "--transactional-id", id+"-gone"), 1, true, id)

		r = confirmIn(t, "abort", "force-terminate", "-b", b, "--transactional-id", id, "--audit-log", auditLog)
		check(what("force-terminate"), r, 0, false, id)
		request := "InitProducerId(transactional.id " + escape.Quote(id) + ", producer id -1"
		if !strings.Contains(r.stderr, "id           "+escape.Text(id)+"\n") || !strings.Contains(r.stderr, "Sends "+request) {
			t.Errorf("%s: the prompt does not show the id and %s:\n%s", what("force-terminate"), request, r.stderr)
		}
		if !strings.HasPrefix(r.stdout, "force-terminate "+escape.Text(id)+": sent; the broker accepted it") || !strings.Contains(r.stdout, ": "+request) {
			t.Errorf("%s: the result does not show the id and %s:\n%s", what("force-terminate"), request, r.stdout)
		}
		// Nothing is open any more: refused, in one line quoting the id.
		check(what("force-terminate of an id with nothing open"),
			run1(t, "force-terminate", "-b", b, "--transactional-id", id, "--yes", "--audit-log", auditLog), 1, false, id)
	}

	// No coordinator knows lost-0-1's producer any more: hanging, and abort's to end.
	hideOwners(c)
	r = run1(t, "find-hanging", "-b", b, "--topic", "orders", "--partition", "1", "--max-transaction-timeout", "0")
	check("find-hanging of a hanging transaction", r, 0, true, "")
	if strings.Count(r.stdout, "\n") != 2 {
		t.Errorf("find-hanging: want the header and one row:\n%s", r.stdout)
	}
	r = confirmIn(t, "abort anyway", "abort", "-b", b, "--topic", "orders", "--partition", "1", "--start-offset", "0",
		"--max-transaction-timeout", "0", "--audit-log", auditLog)
	check("abort", r, 0, false, "")
	if !strings.Contains(r.stderr, "Sends WriteTxnMarkers(ABORT") || !strings.HasPrefix(r.stdout, "abort-partition orders-1: sent") {
		t.Errorf("abort: stderr\n%s\nstdout\n%s", r.stderr, r.stdout)
	}
}
