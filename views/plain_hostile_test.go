package views

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/testutil"
	"github.com/txnscope/txnscope/model"
)

// TestPlainHostileIDs: snapshot's table and its replay of the log print
// every hostile id on its own row, Go-quoted when it is anything but plain,
// exactly recoverable with strconv.Unquote, and write no raw byte a terminal
// could act on (invalid UTF-8 above all: its bytes decode to the printable
// U+FFFD, and a lone 0x9b is CSI).
func TestPlainHostileIDs(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, id := range testutil.HostileIDs {
		t.Run(strconv.Quote(id), func(t *testing.T) {
			s := &model.Snapshot{TakenAt: now, Txns: []model.Txn{
				{ID: id, State: model.StateOf("Ongoing" + id), ProducerID: 7, ProducerEpoch: 1, Coordinator: 1, TimeoutMs: 60000,
					StartUnixMs: now.Add(-time.Second).UnixMilli(), Described: true, Err: "NOT_COORDINATOR: " + id},
				{ID: "orders-0-1", State: model.Empty, ProducerID: 8},
			}}
			s.Sort()
			var b bytes.Buffer
			if err := PlainTable(&b, s, nil, now); err != nil {
				t.Fatal(err)
			}
			evs := []model.Event{{At: now, ID: id, Kind: model.Aborted, ProducerID: 7, Logged: true, Parts: 1, Begun: now.Add(-time.Second), Detail: "fenced by " + id}}
			if err := PlainReplay(&b, model.Replayed{Events: evs}, now.Add(-time.Hour), 10); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if bad := testutil.RawControl(out, false); bad != "" {
				t.Fatalf("%s raw in\n%q", bad, out)
			}
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if len(lines) != 7 {
				t.Fatalf("%d lines, want the table's 3, a blank line, the replay's comment, header and one event:\n%s", len(lines), out)
			}
			shown := plainID(id)
			if got, err := strconv.Unquote(shown); shown != id && (err != nil || got != id) {
				t.Errorf("the id shows as %q, which does not unquote to it", shown)
			}
			var row string
			for _, l := range lines[1:3] {
				if strings.HasPrefix(l, shown+" ") {
					row = l
				}
			}
			if row == "" || !strings.Contains(row, " 7/1 ") {
				t.Errorf("no row of the id's own, with its producer 7/1:\n%s", out)
			}
			if ev := lines[6]; !strings.Contains(ev, " aborted ") || !strings.Contains(ev, "  "+shown+" ") || !strings.Contains(ev, " 7/0 ") {
				t.Errorf("the event does not show the id %s:\n%s", shown, ev)
			}
		})
	}
}
