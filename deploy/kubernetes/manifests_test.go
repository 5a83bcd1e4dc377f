// Package kubernetes holds no code: its tests check the manifests beside them, since no cluster (and no
// container build) is at hand to try them on: they parse, they agree with each other and with the
// exporter's flags, and prometheusrule.yaml is deploy/prometheus/alerts.yml, rule for rule.
package kubernetes

import (
	"bytes"
	"flag"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v2"
)

var update = flag.Bool("update", false, "rewrite prometheusrule.yaml from deploy/prometheus/alerts.yml")

const (
	alertsPath = "../prometheus/alerts.yml"
	rulePath   = "prometheusrule.yaml"
	ruleHead   = `# Generated from deploy/prometheus/alerts.yml (go test ./deploy/kubernetes -update): the same alert
# rules for the Prometheus Operator. Edit alerts.yml, never this file.
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: txnscope
  labels:
    app.kubernetes.io/name: txnscope-exporter
spec:
`
)

// prometheusRule is alerts.yml under spec:, its comments kept.
func prometheusRule(t *testing.T) string {
	b, err := os.ReadFile(alertsPath)
	if err != nil {
		t.Fatal(err)
	}
	_, groups, ok := strings.Cut(string(b), "\ngroups:\n")
	if !ok {
		t.Fatalf("%s has no top-level groups:", alertsPath)
	}
	var out strings.Builder
	out.WriteString(ruleHead + "  groups:\n")
	for _, l := range strings.SplitAfter(groups, "\n") {
		if strings.TrimSpace(l) != "" {
			out.WriteString("  ")
		}
		out.WriteString(l)
	}
	return out.String()
}

func TestPrometheusRuleIsAlertsYml(t *testing.T) {
	want := prometheusRule(t)
	if *update {
		if err := os.WriteFile(rulePath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(rulePath)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("%s differs from %s: go test ./deploy/kubernetes -update", rulePath, alertsPath)
	}
	// The same rules once parsed, too: the text's indenting kept them where they were.
	var alerts, rule map[string]any
	mustParse(t, alertsPath, &alerts)
	mustParse(t, rulePath, &rule)
	if spec := rule["spec"].(map[any]any); !reflect.DeepEqual(spec["groups"], alerts["groups"]) {
		t.Errorf("%s's spec.groups are not alerts.yml's groups", rulePath)
	}
}

func mustParse(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// manifest is the part of a Kubernetes object the checks read.
type obj = map[any]any

func load(t *testing.T, path string) obj {
	var o obj
	mustParse(t, path, &o)
	for _, k := range []string{"apiVersion", "kind", "metadata"} {
		if o[k] == nil {
			t.Fatalf("%s has no %s", path, k)
		}
	}
	return o
}

// at walks o along keys (a string key, or an int index).
func at(t *testing.T, o any, keys ...any) any {
	t.Helper()
	for _, k := range keys {
		switch k := k.(type) {
		case int:
			l, ok := o.([]any)
			if !ok || k >= len(l) {
				t.Fatalf("no [%d] in %v", k, o)
			}
			o = l[k]
		default:
			m, ok := o.(map[any]any)
			if !ok {
				t.Fatalf("no %v in %v", k, o)
			}
			o = m[k]
		}
	}
	return o
}

func TestManifests(t *testing.T) {
	kinds := map[string]string{}
	files, _ := os.ReadDir(".")
	for _, f := range files {
		if strings.HasSuffix(f.Name(), ".yaml") {
			o := load(t, f.Name())
			kinds[f.Name()] = o["kind"].(string)
		}
	}
	want := map[string]string{"deployment.yaml": "Deployment", "service.yaml": "Service", "servicemonitor.yaml": "ServiceMonitor", "prometheusrule.yaml": "PrometheusRule"}
	if !reflect.DeepEqual(kinds, want) {
		t.Fatalf("manifests %v, want %v", kinds, want)
	}

	d := load(t, "deployment.yaml")
	pod := at(t, d, "spec", "template", "spec")
	c := at(t, pod, "containers", 0)
	args := at(t, c, "args").([]any)
	if args[0] != "exporter" || !slices.Contains(args, any("--listen=0.0.0.0:10309")) {
		t.Errorf("args %v: want the exporter listening on the pod's port 10309", args)
	}
	if p := at(t, c, "ports", 0); at(t, p, "containerPort") != 10309 || at(t, p, "name") != "metrics" {
		t.Errorf("port %v", p)
	}
	for _, probe := range []string{"startupProbe", "readinessProbe"} {
		if at(t, c, probe, "httpGet", "path") != "/healthz" || at(t, c, probe, "httpGet", "port") != "metrics" {
			t.Errorf("%s %v: want /healthz on the metrics port", probe, at(t, c, probe))
		}
	}
	// A cluster that cannot be read makes /healthz 503: liveness must not restart the exporter for it.
	if at(t, c, "livenessProbe", "httpGet", "path") != "/metrics" {
		t.Errorf("livenessProbe %v: want /metrics, which answers whatever the cluster does", at(t, c, "livenessProbe"))
	}
	for _, k := range [][]any{{"requests", "cpu"}, {"requests", "memory"}, {"limits", "memory"}} {
		if at(t, c, append([]any{"resources"}, k...)...) == nil {
			t.Errorf("no resources.%v", k)
		}
	}
	if at(t, pod, "securityContext", "runAsNonRoot") != true || at(t, c, "securityContext", "readOnlyRootFilesystem") != true ||
		at(t, c, "securityContext", "allowPrivilegeEscalation") != false || !reflect.DeepEqual(at(t, c, "securityContext", "capabilities", "drop"), []any{"ALL"}) {
		t.Errorf("security context: want non-root, read-only root, no privilege escalation, no capabilities")
	}
	mount := at(t, c, "volumeMounts", 0, "mountPath").(string)
	if !slices.Contains(args, any("--command-config="+mount+"/client.properties")) {
		t.Errorf("args %v: --command-config is not in the Secret's mount %s", args, mount)
	}

	s := load(t, "service.yaml")
	sel := at(t, d, "spec", "template", "metadata", "labels")
	if !reflect.DeepEqual(at(t, s, "spec", "selector"), sel) || at(t, s, "spec", "ports", 0, "targetPort") != "metrics" {
		t.Errorf("the Service does not select the Deployment's pods on their metrics port")
	}
	if at(t, s, "spec", "publishNotReadyAddresses") != true {
		t.Errorf("the Service must publish not-ready pods: txnscope_up 0 is scraped from one")
	}
	m := load(t, "servicemonitor.yaml")
	if !reflect.DeepEqual(at(t, m, "spec", "selector", "matchLabels"), at(t, s, "metadata", "labels")) ||
		at(t, m, "spec", "endpoints", 0, "port") != "metrics" {
		t.Errorf("the ServiceMonitor does not select the Service's metrics port")
	}
}

// The files are YAML a strict parser takes, one document each (a stray --- would hide the rest).
func TestOneDocumentEach(t *testing.T) {
	files, _ := os.ReadDir(".")
	for _, f := range files {
		if !strings.HasSuffix(f.Name(), ".yaml") {
			continue
		}
		b, _ := os.ReadFile(f.Name())
		if bytes.Contains(b, []byte("\n---")) {
			t.Errorf("%s holds more than one document", f.Name())
		}
	}
}
