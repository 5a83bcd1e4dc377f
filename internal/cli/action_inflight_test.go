package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/audit"
	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
)

// turnoverInFlight holds the cluster's first InitProducerId until id's
// producer has committed the transaction open now and begun the next one,
// writing to partition 0 of topic (issue 19, item 4): the request then
// aborts that newer transaction.
func turnoverInFlight(t *testing.T, c *kfake.Cluster, boot []string, id, topic string) {
	p := kafkatest.OpenTxn(t, boot, id, topic, time.Minute)
	var n atomic.Int64
	c.ControlKey(int16(kmsg.InitProducerID), func(kmsg.Request) (kmsg.Response, error, bool) {
		if n.Add(1) > 1 {
			return nil, nil, false
		}
		c.KeepControl()
		done := make(chan struct{})
		go func() {
			defer close(done)
			kafkatest.End(t, p, true)
			time.Sleep(5 * time.Millisecond)
			kafkatest.Begin(t, p)
			kafkatest.Produce(t, p, topic, 0, 1)
		}()
		c.SleepControl(func() { <-done })
		return nil, nil, false
	})
}

// TestForceTerminateInFlightNewer: what the command line prints when the
// request aborted a newer transaction than the one confirmed: exit 1, one
// line on stderr that says the outcome is unknown and names the newer
// transaction; under -o json "unknown": true, "ok": false and the same
// text; the audit log's result line "unknown" with the same text.
func TestForceTerminateInFlightNewer(t *testing.T) {
	const id, topic = "orders-enricher-0-7", "orders"
	const says = "unknown outcome, re-check: the coordinator answered without an error: the one shown had committed before the request arrived (its COMMIT marker is at offset 3 of orders-0); " +
		"a newer transaction of " + id + " began after it (at offset 4 of orders-0) and has an ABORT marker at offset 5: this request most likely aborted it and fenced its producer"
	for _, asJSON := range []bool{true, false} {
		name := map[bool]string{true: "json", false: "table"}[asJSON]
		t.Run(name, func(t *testing.T) {
			c, boot := kafkatest.NewCluster(t)
			turnoverInFlight(t, c, boot, id, topic)
			auditLog := filepath.Join(t.TempDir(), "audit.log")
			args := []string{"force-terminate", "-b", strings.Join(boot, ","), "--audit-log", auditLog, "--transactional-id", id, "--yes"}
			if asJSON {
				args = append(args, "-o", "json")
			}
			code, out, errs := runArgs(t, args...)
			t.Logf("exit %d\nstdout %s\nstderr %s", code, out, errs)
			if code != 1 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "force-terminate "+id+": "+says) || strings.Contains(errs, "nothing was aborted") {
				t.Errorf("exit %d, stderr %q; want 1 and one line: %q", code, errs, says)
			}
			if asJSON {
				var doc actionJSON
				if err := json.Unmarshal([]byte(out), &doc); err != nil {
					t.Fatalf("stdout %q: %v", out, err)
				}
				if !doc.Unknown || doc.OK || !doc.Sent || doc.Refused || doc.Sends != 1 || !strings.HasPrefix(doc.Result, says) || doc.Attempt == "" {
					t.Errorf("JSON %+v; want sent once, unknown, not ok, the result saying %q", doc, says)
				}
			} else if out != "" {
				t.Errorf("stdout %q; want nothing (the result goes to stderr)", out)
			}
			b, err := os.ReadFile(auditLog)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			var res audit.Entry
			if len(lines) != 2 || json.Unmarshal([]byte(lines[1]), &res) != nil || res.Phase != "result" || res.Outcome != "unknown" || !strings.HasPrefix(res.Result, says) {
				t.Errorf("audit log:\n%s\nwant an attempt line, then a result line with outcome unknown saying %q", b, says)
			}
		})
	}
}
