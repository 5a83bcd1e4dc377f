package exporter

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/buildinfo"
	"github.com/txnscope/txnscope/internal/testutil/uitest"
	"github.com/txnscope/txnscope/model"
)

// clock is a test's now, moved by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// newTest is an exporter on a fake cluster at uitest.T0, refreshing every 15 s.
func newTest() (*Exporter, *uitest.Admin, *clock) {
	a, c := &uitest.Admin{}, &clock{uitest.T0}
	return New(Options{Admin: a, Refresh: 15 * time.Second, Build: buildinfo.Info{Version: "v-test"}, Now: c.now, MaxIDSeries: 100}), a, c
}

// refresh pushes s and refreshes, failing the test on an error.
func refresh(t *testing.T, e *Exporter, a *uitest.Admin, s *model.Snapshot) {
	t.Helper()
	a.Push(s)
	if err := e.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// series gathers the registry as `name{label="v",...}` → value, labels in
// name order, as the text format writes them.
func series(t *testing.T, e *Exporter) map[string]float64 {
	t.Helper()
	mfs, err := e.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, l.GetName()+`="`+l.GetValue()+`"`)
			}
			sort.Strings(ls)
			key := mf.GetName()
			if len(ls) > 0 {
				key += "{" + strings.Join(ls, ",") + "}"
			}
			switch {
			case m.Gauge != nil:
				out[key] = m.GetGauge().GetValue()
			case m.Counter != nil:
				out[key] = m.GetCounter().GetValue()
			}
		}
	}
	return out
}

// named are the series of s whose name is name.
func named(s map[string]float64, name string) map[string]float64 {
	out := map[string]float64{}
	for k, v := range s {
		if k == name || strings.HasPrefix(k, name+"{") {
			out[k] = v
		}
	}
	return out
}
