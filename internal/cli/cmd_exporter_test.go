package cli

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/testutil"
	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
)

// lockedBuffer is a stderr the exporter may write while the test reads it.
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

// startExporter runs `txnscope exporter args...` on 127.0.0.1:0 and returns
// its base URL, and stop, which ends it as SIGTERM does and returns its exit
// status.
func startExporter(t *testing.T, args ...string) (base string, stop func() int, stderr *lockedBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	stderr = &lockedBuffer{}
	code := make(chan int, 1)
	go func() {
		code <- Run(ctx, append([]string{"exporter", "--listen", "127.0.0.1:0"}, args...), Stdio{In: strings.NewReader(""), Out: pw, Err: stderr})
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	go io.Copy(io.Discard, pr) //nolint:errcheck // nothing more is expected
	if !strings.HasPrefix(line, "listening: http://") || !strings.HasSuffix(line, "/metrics\n") {
		cancel()
		t.Fatalf("first line %q (%v), stderr %s", line, err, stderr)
	}
	base = strings.TrimSuffix(strings.TrimPrefix(line, "listening: "), "/metrics\n")
	stop = func() int {
		cancel()
		select {
		case c := <-code:
			return c
		case <-time.After(15 * time.Second):
			t.Fatal("the exporter did not stop")
			return -1
		}
	}
	t.Cleanup(func() { cancel() })
	return base, stop, stderr
}

func fetch(t *testing.T, url string) (int, string) {
	t.Helper()
	r, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return r.StatusCode, string(b)
}

// waitFor scrapes url until ok says yes.
func waitFor(t *testing.T, url string, ok func(code int, body string) bool) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, body := fetch(t, url)
		if ok(code, body) {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still %d\n%s", url, code, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestExporterOnKfake: the exporter on a cluster with an open transaction
// serves its age, txnscope_up 1 and ok on /healthz, and SIGTERM ends it
// with status 0.
func TestExporterOnKfake(t *testing.T) {
	_, boot := kafkatest.NewCluster(t)
	kafkatest.OpenTxn(t, boot, "pay-sink-0-3", "payments", time.Minute)
	base, stop, stderr := startExporter(t, "-b", strings.Join(boot, ","), "--refresh", "500ms", "--timeout", "5s")
	body := waitFor(t, base+"/metrics", func(_ int, body string) bool {
		return strings.Contains(body, `txnscope_transaction_open_age_seconds{transactional_id="pay-sink-0-3",txn_job="pay-sink"}`)
	})
	for _, want := range []string{"txnscope_up 1", `txnscope_transactions{state="Ongoing"} 1`, "txnscope_partitions_pinned 1",
		`txnscope_transaction_open_timeout_ratio{transactional_id="pay-sink-0-3",txn_job="pay-sink"}`} {
		if !strings.Contains(body, want) {
			t.Errorf("no %q in\n%s", want, body)
		}
	}
	if code, body := fetch(t, base+"/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	if code := stop(); code != exitOK {
		t.Errorf("exit %d, stderr %s", code, stderr)
	}
}

// TestExporterWithoutCluster: a cluster that does not answer is no reason
// to stop: up is 0, the errors are counted and /healthz says why.
func TestExporterWithoutCluster(t *testing.T) {
	base, stop, stderr := startExporter(t, "-b", testutil.ClosedAddr(t), "--refresh", "500ms", "--timeout", "300ms")
	body := waitFor(t, base+"/metrics", func(_ int, body string) bool {
		return strings.Contains(body, "txnscope_refresh_errors_total 2")
	})
	if !strings.Contains(body, "txnscope_up 0") || strings.Contains(body, "txnscope_transactions{") {
		t.Errorf("metrics without a cluster:\n%s", body)
	}
	code, health := fetch(t, base+"/healthz")
	if code != 503 || !strings.HasPrefix(health, "no refresh has succeeded yet: ") || strings.Count(health, "\n") != 1 {
		t.Errorf("/healthz: %d %q", code, health)
	}
	if code := stop(); code != exitOK {
		t.Errorf("exit %d, stderr %s", code, stderr)
	}
}

// TestExporterListenTaken: a --listen address in use is a one-line error.
func TestExporterListenTaken(t *testing.T) {
	base, stop, _ := startExporter(t, "-b", testutil.ClosedAddr(t), "--timeout", "300ms")
	defer stop()
	code, _, errs := runArgs(t, "exporter", "-b", testutil.ClosedAddr(t), "--listen", strings.TrimPrefix(base, "http://"))
	if code != exitFailure || !strings.Contains(errs, "--listen: ") || !strings.Contains(errs, "address already in use") || strings.Count(errs, "\n") != 1 {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

// TestExporterHelp: exporter's help gives its own --refresh default and
// --listen's, and lists no flag that could change the cluster.
func TestExporterHelp(t *testing.T) {
	code, out, errs := runArgs(t, "exporter", "--help")
	if code != exitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	flat := oneLine(out)
	for _, want := range []string{"txnscope exporter [--listen HOST:PORT] [flags]", "scans the whole cluster (default 15s)", `(default "127.0.0.1:10309")`} {
		if !strings.Contains(flat, oneLine(want)) {
			t.Errorf("help lacks %q:\n%s", want, out)
		}
	}
	for _, not := range []string{"--audit-log", "--yes", "--read-only"} {
		if strings.Contains(out, not) {
			t.Errorf("help lists %s", not)
		}
	}
}
