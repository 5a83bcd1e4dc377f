// Package rules holds no code: its tests check the Prometheus alert rules beside them, so that
// `go test ./...` catches a broken rule or an untested alert as .ci/run does.
package rules

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// promtool runs promtool with args. It skips without promtool, except under CI=true, where .ci/run has
// installed it and a missing one would hide broken rules.
func promtool(t *testing.T, args ...string) {
	t.Helper()
	if _, err := exec.LookPath("promtool"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool not found (Debian: apt-get install prometheus)")
		}
		t.Skip("promtool not found (Debian: apt-get install prometheus)")
	}
	out, err := exec.Command("promtool", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func TestRulesCheck(t *testing.T) { promtool(t, "check", "rules", "alerts.yml") }

func TestRulesUnitTests(t *testing.T) { promtool(t, "test", "rules", "alerts_test.yml") }

var (
	alertRe = regexp.MustCompile(`(?m)^\s*- alert: (\S+)$`)
	// an alert_rule_test entry whose exp_alerts lists at least one alert
	firingRe = regexp.MustCompile(`(?m)^\s*alertname: (\S+)\n\s*exp_alerts:\n\s*- exp_labels:`)
	silentRe = regexp.MustCompile(`(?m)^\s*alertname: (\S+)\n\s*exp_alerts: \[\]`)
)

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// promtool passes a rule that no test exercises; on-call would then meet its labels and text untested.
func TestEveryAlertTestedFiringAndSilent(t *testing.T) {
	rules, tests := read(t, "alerts.yml"), read(t, "alerts_test.yml")
	names := alertRe.FindAllStringSubmatch(rules, -1)
	if len(names) == 0 {
		t.Fatal("no alert in alerts.yml")
	}
	firing, silent := matches(firingRe, tests), matches(silentRe, tests)
	for _, m := range names {
		if !firing[m[1]] {
			t.Errorf("alert %s: no test expects it to fire", m[1])
		}
		if !silent[m[1]] {
			t.Errorf("alert %s: no test expects it silent", m[1])
		}
	}
}

// Every alert must say how bad it is and what to open.
func TestEveryAlertHasSeverityAndCommand(t *testing.T) {
	rules := read(t, "alerts.yml")
	locs := alertRe.FindAllStringIndex(rules, -1)
	for i, loc := range locs {
		end := len(rules)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		rule, name := rules[loc[0]:end], alertRe.FindStringSubmatch(rules[loc[0]:loc[1]])[1]
		for _, want := range []string{"severity: ", "summary: ", "description: ", "`txnscope "} {
			if !strings.Contains(rule, want) {
				t.Errorf("alert %s: no %q", name, want)
			}
		}
	}
}

func matches(re *regexp.Regexp, s string) map[string]bool {
	out := map[string]bool{}
	for _, m := range re.FindAllStringSubmatch(s, -1) {
		out[m[1]] = true
	}
	return out
}

// dashboardExprs is every query of the Grafana dashboard, with its $instance variable at its All value.
func dashboardExprs(t *testing.T) []string {
	t.Helper()
	var d struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal([]byte(read(t, "grafana-dashboard.json")), &d); err != nil {
		t.Fatalf("grafana-dashboard.json: %v", err)
	}
	var out []string
	for _, p := range d.Panels {
		for _, q := range p.Targets {
			out = append(out, strings.ReplaceAll(q.Expr, "$instance", ".*"))
		}
	}
	if len(out) == 0 {
		t.Fatal("grafana-dashboard.json: no query")
	}
	return out
}

// Each dashboard query is handed to promtool as a recording rule, so that PromQL's own parser judges it.
func TestDashboardQueriesParse(t *testing.T) {
	var b strings.Builder
	b.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	for i, e := range dashboardExprs(t) {
		fmt.Fprintf(&b, "      - record: dashboard:query%d\n        expr: %q\n", i, e)
	}
	f := filepath.Join(t.TempDir(), "dashboard-rules.yml")
	if err := os.WriteFile(f, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	promtool(t, "check", "rules", f)
}

var (
	metricRe = regexp.MustCompile(`txnscope_[a-z_]+`)
	// a row of docs/alerting.md's metric table
	docRowRe = regexp.MustCompile("^\\| `(txnscope_[a-z_]+)`")
)

// A metric the rules or the dashboard use must be one docs/alerting.md lists, i.e. one the exporter
// promises; a typo would otherwise make an alert that can never fire.
func TestMetricsUsedAreDocumented(t *testing.T) {
	documented := map[string]bool{}
	for _, line := range strings.Split(read(t, filepath.Join("..", "..", "docs", "alerting.md")), "\n") {
		if m := docRowRe.FindStringSubmatch(line); m != nil {
			documented[m[1]] = true
		}
	}
	used := append(metricRe.FindAllString(read(t, "alerts.yml"), -1), metricRe.FindAllString(strings.Join(dashboardExprs(t), "\n"), -1)...)
	for _, m := range used {
		if !documented[m] {
			t.Errorf("%s is used but not in docs/alerting.md's metric table", m)
		}
	}
}
