package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
)

// TestExporterHostileIDOnKfake: a real transactional producer whose id is
// not UTF-8 and holds ESC, and a consumer group named alike stuck behind
// its transaction, are served escaped as the TUI shows them (in the text
// format, each backslash doubled once more), and the exporter keeps
// serving. On d0b993a the first scrape panicked and ended the process.
func TestExporterHostileIDOnKfake(t *testing.T) {
	_, boot := kafkatest.NewCluster(t)
	const id, group = "evil\xff\x1b[2J-0-3", "grp\xff\r\nforged"
	kafkatest.OpenTxn(t, boot, id, "payments", time.Minute)
	commitAt(t, boot, group, "payments", 0, 0)
	base, stop, stderr := startExporter(t, "-b", strings.Join(boot, ","), "--refresh", "500ms", "--timeout", "5s")
	body := waitFor(t, base+"/metrics", func(_ int, body string) bool {
		return strings.Contains(body, `txnscope_group_stuck_seconds{group="grp\\xff\\r\\nforged",group_type="classic"}`)
	})
	for _, want := range []string{"txnscope_up 1", "txnscope_scrape_errors_total 0",
		`txnscope_transaction_open_age_seconds{transactional_id="evil\\xff\\x1b[2J-0-3",txn_job="evil\\xff\\x1b[2J"}`} {
		if !strings.Contains(body, want) {
			t.Errorf("no %q in\n%s", want, body)
		}
	}
	for i, r := range body {
		if r < 0x20 && r != '\n' || r == 0x7f || r >= 0x80 && r <= 0x9f || r == '\uFFFD' {
			t.Fatalf("raw %U at byte %d of the page", r, i)
		}
	}
	if code := stop(); code != exitOK {
		t.Errorf("exit %d, stderr %s", code, stderr)
	}
}

// commitAt commits offset for group on topic's partition, as a consumer
// that stopped there would have.
func commitAt(t *testing.T, boot []string, group, topic string, partition int32, offset int64) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(boot...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var o kadm.Offsets
	o.AddOffset(topic, partition, offset, -1)
	r, err := kadm.NewClient(cl).CommitOffsets(ctx, group, o)
	if err == nil {
		err = r.Error()
	}
	if err != nil {
		t.Fatalf("commit %s: %v", group, err)
	}
}
