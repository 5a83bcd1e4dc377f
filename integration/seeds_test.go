package integration

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/testutil"
)

// TestDeadSeedsRealBroker runs the real binary's list and snapshot against
// the real broker with dead seeds first and last (one silent, as a stopped
// broker is, and one refusing): none of the runs may fail. Before, the first
// metadata request went to a random seed and waited out --timeout on the
// silent one: about half the runs failed.
func TestDeadSeedsRealBroker(t *testing.T) {
	t.Parallel()
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	bin := buildTxnscope(ctx, t)
	seeds := strings.Join([]string{testutil.SilentAddr(t), testutil.ClosedAddr(t), bootstrap, testutil.ClosedAddr(t), testutil.SilentAddr(t)}, ",")
	for _, sub := range []string{"list", "snapshot"} {
		failed := 0
		for i := 0; i < 20; i++ {
			cmd := exec.CommandContext(ctx, bin, sub, "-b", seeds, "--timeout", "2s")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			start := time.Now()
			if err := cmd.Run(); err != nil {
				failed++
				t.Logf("%s run %d: %v after %s: %s", sub, i, err, time.Since(start).Round(time.Millisecond), strings.TrimSpace(stderr.String()))
			}
		}
		if failed > 0 {
			t.Errorf("%s failed %d of 20 runs with dead seeds first and last", sub, failed)
		}
	}
}
