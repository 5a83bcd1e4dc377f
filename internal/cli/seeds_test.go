package cli

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/testutil"
	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
)

// A broker being down is when this tool is used: dead seeds among good ones,
// first and last, must never fail list or snapshot. Before, the first
// metadata request went to a random seed and waited on a silent one for the
// whole timeout, so about one run in three failed.
func TestDeadSeedsNeverFail(t *testing.T) {
	if testing.Short() {
		t.Skip("60 runs")
	}
	_, good := kafkatest.NewCluster(t)
	seeds := strings.Join(append(append([]string{testutil.SilentAddr(t), testutil.ClosedAddr(t)}, good...),
		testutil.ClosedAddr(t), testutil.SilentAddr(t)), ",")
	for _, cmd := range []string{"list", "snapshot"} {
		failed := 0
		for i := 0; i < 30; i++ {
			start := time.Now()
			code, _, errs := runArgs(t, cmd, "-b", seeds, "--timeout", "1s")
			if code != 0 {
				failed++
				t.Logf("%s run %d: exit %d after %s: %s", cmd, i, code, time.Since(start).Round(time.Millisecond), strings.TrimSpace(errs))
			}
		}
		if failed > 0 {
			t.Errorf("%s failed %d of 30 runs with two dead seeds first and two last", cmd, failed)
		}
	}
}

// With every seed dead, the command still fails within --timeout, and the
// error is one short line however many seeds there are.
func TestAllSeedsDead(t *testing.T) {
	many := make([]string, 1000)
	for i := range many {
		many[i] = fmt.Sprintf("127.0.0.1:%d", i+1)
	}
	many[500] = testutil.SilentAddr(t)
	for _, cmd := range []string{"list", "snapshot"} {
		start := time.Now()
		code, out, errs := runArgs(t, cmd, "-b", strings.Join(many, ","), "--timeout", "1s")
		took := time.Since(start)
		if code != 1 || out != "" || strings.Count(errs, "\n") != 1 || len(errs) > 300 {
			t.Errorf("%s: exit %d, stdout %q, stderr %d bytes: %.300q", cmd, code, out, len(errs), errs)
		}
		if took > 3*time.Second {
			t.Errorf("%s: took %s with --timeout 1s", cmd, took)
		}
	}
	_, _, errs := runArgs(t, "snapshot", "-b", strings.Join(many, ","), "--timeout", "200ms")
	if want := "txnscope: 1000 bootstrap servers (127.0.0.1:1, 127.0.0.1:2, 127.0.0.1:3, … and 997 more): "; !strings.HasPrefix(errs, want) {
		t.Errorf("snapshot: stderr %.200q, want it to start %q", errs, want)
	}
}
