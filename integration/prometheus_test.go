package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/txnscope/txnscope/model"
)

// prometheusBin is where Debian's prometheus package (which .ci/run installs for promtool) puts the server.
const prometheusBin = "/usr/bin/prometheus"

// TestPrometheusAlertNearTimeout: a real Prometheus server scrapes the built `txnscope exporter`
// every second and evaluates the unmodified deploy/prometheus/alerts.yml. A real transaction with a
// 70 s timeout, left open by the Java Flink-like sink killed mid-checkpoint, makes TransactionNearTimeout
// go pending once past 90 % (63 s) for its txn_job, the id in its annotations; the exporter's age and
// ratio for it match what kafkaadmin reads; after force-terminate (before the coordinator's own
// abort at 70 s) the alert is gone from /api/v1/alerts.
func TestPrometheusAlertNearTimeout(t *testing.T) {
	t.Parallel()
	bootstrap := Bootstrap(t)
	requireLoopback(t, bootstrap)
	prom := requirePrometheus(t)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	bin := buildTxnscope(ctx, t)
	requireFlinkLike(ctx, t)
	adm := newAdmin(t, bootstrap)
	topic := topicWith(ctx, t, adm, 1)
	// The Java Flink-like sink (a KafkaSink's ids, <prefix>-<subtask>-<checkpoint>), killed with
	// checkpoint 1's transaction open: it lingers until the coordinator aborts it at its timeout.
	// 90 % of the timeout leaves 7 s, for a refresh, a scrape and an evaluation of 1 s each on a
	// loaded machine, before that abort.
	prefix := name(t, "job")
	id := flinkID(prefix, 0, 1)
	if m := model.JobOf(id); m.Job.Family != model.FlinkSink || m.Job.Name != prefix {
		t.Fatalf("JobOf(%s) = %+v, want the Flink job %s", id, m, prefix)
	}
	const timeout = 70 * time.Second
	opened := time.Now() // until kafkaadmin tells when the transaction began, below
	crashed := startFlink(t, "crashed", bootstrap, "--topic", topic, "--prefix", prefix, "--parallelism", "1",
		"--checkpoint-interval-ms", "60000", "--records", "240", "--transaction-timeout-ms", fmt.Sprint(timeout.Milliseconds()))
	crashed.waitEvent(ctx, "first", id)
	crashed.kill9(ctx)

	exporterURL := startExporter(ctx, t, bin, bootstrap)
	api := startPrometheus(ctx, t, prom, exporterURL)
	waitFor(ctx, t, "Prometheus to scrape txnscope_up 1", func() (bool, string) {
		v, err := api.query(ctx, `txnscope_up`)
		return err == nil && v == "1", fmt.Sprintf("txnscope_up %q (%v)", v, err)
	})

	// The exporter's numbers are kafkaadmin's: its age for the id is the model's, within a refresh.
	sc := newScope(t, bootstrap)
	series := scrape(ctx, t, exporterURL)
	scraped := time.Now()
	tx := txnOf(t, sc.poll(ctx), id)
	labels := fmt.Sprintf(`{transactional_id=%q,txn_job=%q}`, id, prefix)
	age, ok1 := series["txnscope_transaction_open_age_seconds"+labels]
	ratio, ok2 := series["txnscope_transaction_open_timeout_ratio"+labels]
	// As of the scrape: the poll after it took 34 s once on a loaded CI machine.
	modelAge, _ := tx.Age(scraped)
	if tx.HasStart() {
		opened = tx.StartTime() // the coordinator's: its abort comes a timeout after it
	}
	switch {
	case !ok1 || !ok2:
		t.Fatalf("exporter has no age or ratio for %s%s: %v", id, labels, filterSeries(series, id))
	case tx.State != model.Ongoing || tx.Timeout() != timeout:
		t.Fatalf("kafkaadmin shows %+v, want Ongoing with a %s timeout", tx, timeout)
	case age > modelAge.Seconds()+0.5 || age < modelAge.Seconds()-3:
		t.Errorf("exporter age %.3fs, kafkaadmin's %.3fs: want it at most a refresh (1s) and a refresh's own time behind", age, modelAge.Seconds())
	case abs(ratio-age/timeout.Seconds()) > 0.001:
		t.Errorf("exporter ratio %.4f, want its age %.3fs ÷ %s", ratio, age, timeout)
	}
	if n := series[`txnscope_transactions{state="Ongoing"}`]; n < 1 {
		t.Errorf("txnscope_transactions{state=\"Ongoing\"} %v, want at least our transaction", n)
	}

	// Past 63 s (90 %) the exporter's next refresh, Prometheus' next scrape and rule evaluation
	// make the alert pending; it cannot fire (for: 1m) before the coordinator aborts at 70 s.
	var alert promAlert
	waitFor(ctx, t, "TransactionNearTimeout to go pending", func() (bool, string) {
		if time.Since(opened) > timeout {
			t.Fatalf("TransactionNearTimeout not pending %s after the transaction began (the coordinator aborts it now)", time.Since(opened).Round(time.Millisecond))
		}
		alerts, err := api.alerts(ctx)
		a, ok := findAlert(alerts, "TransactionNearTimeout", prefix)
		alert = a
		return ok, fmt.Sprintf("alerts %+v (%v)", alerts, err)
	})
	t.Logf("%s %s after the transaction began, value %s, labels %v", alert.State, time.Since(opened).Round(time.Millisecond), alert.Value, alert.Labels)
	if alert.State != "pending" && alert.State != "firing" {
		t.Errorf("alert state %q, want pending or firing", alert.State)
	}
	if alert.Labels["txn_job"] != prefix || alert.Labels["severity"] != "critical" {
		t.Errorf("alert labels %v, want txn_job %s and severity critical", alert.Labels, prefix)
	}
	if v, err := strconv.ParseFloat(alert.Value, 64); err != nil || v <= 0.9 || v >= 1 {
		t.Errorf("alert value %q, want a ratio past 0.9 and below 1", alert.Value)
	}
	if !strings.Contains(alert.Annotations["summary"], id) || !strings.Contains(alert.Annotations["summary"], prefix) {
		t.Errorf("summary %q does not name the id and the job", alert.Annotations["summary"])
	}
	if !strings.Contains(alert.Annotations["description"], "txnscope describe --transactional-id "+id) {
		t.Errorf("description %q does not give the command that opens %s", alert.Annotations["description"], id)
	}

	// The TUI's force-terminate, as the on-call would run it from the alert.
	tx = txnOf(t, sc.poll(ctx), id)
	if tx.State != model.Ongoing {
		t.Fatalf("before force-terminate %+v, want Ongoing", tx)
	}
	if r := sc.execute(ctx, forceTerminate(tx)); !r.OK() {
		t.Fatalf("force-terminate: %s (%+v)", r.Summary(), r)
	}
	terminated := time.Now()
	waitFor(ctx, t, "TransactionNearTimeout to resolve", func() (bool, string) {
		alerts, err := api.alerts(ctx)
		_, ok := findAlert(alerts, "TransactionNearTimeout", prefix)
		return err == nil && !ok, fmt.Sprintf("alerts %+v (%v)", alerts, err)
	})
	t.Logf("resolved %s after force-terminate", time.Since(terminated).Round(time.Millisecond))
	if after := scrape(ctx, t, exporterURL); len(filterSeries(after, id)) != 0 {
		t.Errorf("exporter still has series for %s after force-terminate: %v", id, filterSeries(after, id))
	}
}

// requirePrometheus finds the prometheus server binary; without it the test skips, or fails
// under CI=true, where .ci/run installs it.
func requirePrometheus(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(prometheusBin); err == nil {
		return prometheusBin
	}
	if p, err := exec.LookPath("prometheus"); err == nil {
		return p
	}
	msg := prometheusBin + " is missing: install Debian's prometheus package (apt-get install prometheus) to run the Prometheus integration test"
	if isCI() {
		t.Fatal("CI=true and " + msg)
	}
	t.Skip(msg)
	return ""
}

// startExporter runs `txnscope exporter` on a free loopback port, refreshing every second, and
// returns its /metrics URL from the first line it prints.
func startExporter(ctx context.Context, t *testing.T, bin, bootstrap string) string {
	t.Helper()
	// The broker is shared with the tests running beside this one, whose open transactions may be
	// nearer their timeouts than ours: more than the default 10 id series keeps ours among them.
	cmd := exec.Command(bin, "exporter", "-b", bootstrap, "--listen", "127.0.0.1:0", "--refresh", "1s", "--max-id-series", "200")
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	exited := start(t, "txnscope exporter", cmd, &stderr)
	var line string
	waitFor(ctx, t, "txnscope exporter's address", func() (bool, string) {
		select {
		case <-exited:
			t.Fatalf("txnscope exporter exited: %s", stderr.String())
		default:
		}
		var ok bool
		line, _, ok = strings.Cut(stdout.String(), "\n")
		return ok, "stdout " + strconv.Quote(stdout.String())
	})
	u, ok := strings.CutPrefix(line, "listening: ")
	if !ok || !strings.HasPrefix(u, "http://127.0.0.1:") {
		t.Fatalf("txnscope exporter's first line %q, want `listening: http://127.0.0.1:PORT/metrics`; stderr: %s", line, stderr.String())
	}
	return u
}

// startPrometheus runs a Prometheus server on a free loopback port with a temp config that scrapes
// metricsURL and evaluates a copy of the real rules file every second, and waits until it is ready.
func startPrometheus(ctx context.Context, t *testing.T, bin, metricsURL string) promAPI {
	t.Helper()
	dir := t.TempDir()
	rules, err := os.ReadFile(filepath.Join(repoRoot(t), "deploy", "prometheus", "alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "alerts.yml"), rules, 0o644); err != nil {
		t.Fatal(err)
	}
	target, err := url.Parse(metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - %q
scrape_configs:
  - job_name: txnscope
    metrics_path: %q
    static_configs:
      - targets: [%q]
`, filepath.Join(dir, "alerts.yml"), target.Path, target.Host)
	configPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(configPath, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeLoopbackAddr(t)
	cmd := exec.Command(bin, "--config.file="+configPath, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr)
	var logs syncBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	exited := start(t, "prometheus", cmd, &logs)
	api := promAPI{base: "http://" + addr}
	waitFor(ctx, t, "Prometheus to be ready", func() (bool, string) {
		select {
		case <-exited:
			t.Fatalf("prometheus exited: %s", logs.String())
		default:
		}
		code, err := api.get(ctx, "/-/ready", nil)
		return err == nil && code == http.StatusOK, fmt.Sprintf("GET /-/ready: %d %v", code, err)
	})
	return api
}

// start starts cmd and ends it when the test does: SIGTERM, then SIGKILL if it has not exited in
// 10 s; its output is logged when the test failed. The channel closes when it exits.
func start(t *testing.T, what string, cmd *exec.Cmd, output *syncBuffer) <-chan struct{} {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
			t.Errorf("%s did not exit within 10s of SIGTERM", what)
		}
		if t.Failed() {
			t.Logf("%s output:\n%s", what, output.String())
		}
	})
	return exited
}

// freeLoopbackAddr is a port the kernel just gave out and took back: free unless someone takes it
// in the moment before Prometheus binds it.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// waitFor calls ok every 200 ms until it says true; on timeout the last detail it gave is printed.
func waitFor(ctx context.Context, t *testing.T, what string, ok func() (bool, string)) {
	t.Helper()
	for {
		done, detail := ok()
		if done {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v; last: %s", what, ctx.Err(), detail)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// scrape reads the exporter's /metrics into series name{labels} → value.
func scrape(ctx context.Context, t *testing.T, metricsURL string) map[string]float64 {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, metricsURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", metricsURL, err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if v, err := strconv.ParseFloat(line[i+1:], 64); i > 0 && err == nil {
			out[line[:i]] = v
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading %s: %v", metricsURL, err)
	}
	return out
}

func filterSeries(series map[string]float64, contains string) map[string]float64 {
	out := map[string]float64{}
	for k, v := range series {
		if strings.Contains(k, contains) {
			out[k] = v
		}
	}
	return out
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// promAPI is the part of Prometheus' HTTP API the test reads.
type promAPI struct{ base string }

type promAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	State       string            `json:"state"`
	Value       string            `json:"value"`
}

// findAlert is the alert name for the job txnJob (the rules alert per job,
// and name the id in the annotations).
func findAlert(alerts []promAlert, name, txnJob string) (promAlert, bool) {
	for _, a := range alerts {
		if a.Labels["alertname"] == name && a.Labels["txn_job"] == txnJob {
			return a, true
		}
	}
	return promAlert{}, false
}

// get fetches path and decodes the answer's data into data (when not nil).
func (p promAPI) get(ctx context.Context, path string, data any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+path, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || data == nil {
		return resp.StatusCode, err
	}
	var env struct {
		Status string          `json:"status"`
		Data   json.RawMessage `json:"data"`
		Error  string          `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return resp.StatusCode, fmt.Errorf("GET %s: %w: %s", path, err, body)
	}
	if env.Status != "success" {
		return resp.StatusCode, fmt.Errorf("GET %s: %s %s", path, env.Status, env.Error)
	}
	return resp.StatusCode, json.Unmarshal(env.Data, data)
}

// alerts is GET /api/v1/alerts: the pending and firing alerts.
func (p promAPI) alerts(ctx context.Context) ([]promAlert, error) {
	var data struct {
		Alerts []promAlert `json:"alerts"`
	}
	_, err := p.get(ctx, "/api/v1/alerts", &data)
	return data.Alerts, err
}

// query is an instant query whose answer is one sample; it returns that sample's value.
func (p promAPI) query(ctx context.Context, q string) (string, error) {
	var data struct {
		Result []struct {
			Value [2]any `json:"value"`
		} `json:"result"`
	}
	if _, err := p.get(ctx, "/api/v1/query?query="+url.QueryEscape(q), &data); err != nil {
		return "", err
	}
	if len(data.Result) != 1 {
		return "", fmt.Errorf("%s: %d samples, want 1", q, len(data.Result))
	}
	v, _ := data.Result[0].Value[1].(string)
	return v, nil
}
