package exporter

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/txnscope/txnscope/internal/buildinfo"
)

// TestEveryMetricDocumented: every metric the exporter serves is a row of
// docs/alerting.md's table, but for the two its prose names.
func TestEveryMetricDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/alerting.md")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan *prometheus.Desc, 64)
	newCollector(buildinfo.Info{}, time.Now, time.Minute).Describe(ch)
	close(ch)
	name := regexp.MustCompile(`fqName: "([a-z_]+)"`)
	for d := range ch {
		m := name.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("no name in %s", d)
		}
		if m[1] == "txnscope_refresh_duration_seconds" || m[1] == "txnscope_build_info" {
			continue
		}
		if !strings.Contains(string(b), "\n| `"+m[1]+"` |") {
			t.Errorf("%s is not in docs/alerting.md's metric table", m[1])
		}
	}
}
