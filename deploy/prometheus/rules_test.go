// Package rules holds no code: its tests check the Prometheus alert rules beside them, so that
// `go test ./...` catches a broken rule or an untested alert as .ci/run does.
package rules

import (
	"os"
	"os/exec"
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
