package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/jsonout"
	"github.com/txnscope/txnscope/internal/testutil"
	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/model"
)

// snapshot --since on a coordinators' log that holds records txnscope
// cannot read (kfake keeps none: the test writes one): exit status 0, the
// table and the JSON carry everything it could read, a note on stderr and a
// comment line name the records by partition and offset, and the replay is
// complete only after them. On the same log before them, never compacted,
// it is complete since its first record.
func TestSnapshotSinceReportsWhatItCannotRead(t *testing.T) {
	_, bs := kafkatest.NewCluster(t)
	boot := strings.Join(bs, ",")
	lw := kafkatest.NewTxnLog(t, bs)
	lw.State(0, "since-0-1", 1)
	lw.State(0, "since-0-1", 4)
	lw.State(1, "since-1-1", 4)
	replayOf := func(code int, stdout, stderr string) *jsonout.ReplayJSON {
		t.Helper()
		testutil.CheckSnapshotJSON(t, []byte(stdout))
		var doc jsonout.SnapshotJSON
		if err := json.Unmarshal([]byte(stdout), &doc); err != nil || code != 0 || doc.Replay == nil {
			t.Fatalf("exit %d, %v, stderr %q:\n%s", code, err, stderr, stdout)
		}
		return doc.Replay
	}

	code, stdout, stderr := runArgs(t, "snapshot", "--since", "1h", "-o", "json", "-b", boot, "--timeout", "5s")
	r := replayOf(code, stdout, stderr)
	if !r.NeverCompacted || r.CompleteSince == nil || r.OldestRecord == nil || !r.CompleteSince.Equal(*r.OldestRecord) ||
		len(r.Unreadable) != 0 || stderr != "" {
		t.Fatalf("a log never compacted: %s\nstderr %q", stdout, stderr)
	}
	_, table, _ := runArgs(t, "snapshot", "--since", "1h", "-b", boot, "--timeout", "5s")
	if !strings.Contains(table, "; every transition (the log was never compacted)\n") {
		t.Fatalf("the table of a log never compacted:\n%s", table)
	}

	before := time.Now().Truncate(time.Millisecond)
	corrupt := lw.Raw(2, kafkatest.TxnLogKey(0, "since\x1b]0;owned\a-2-1"), []byte{0, 1, 2, 3})
	newer := lw.Raw(0, kafkatest.TxnLogKey(0, "since-0-1"), kafkatest.NewerTxnLogValue(2))
	lw.State(0, "since-0-2", 1)

	code, stdout, stderr = runArgs(t, "snapshot", "--since", "1h", "-o", "json", "-b", boot, "--timeout", "5s")
	r = replayOf(code, stdout, stderr)
	want := []jsonout.UnreadJSON{
		{Partition: 0, Kind: model.UnreadNewer, Count: 1, FirstOffset: newer, LastOffset: newer,
			Why: `the value of "since-0-1": version 2, newer than txnscope reads (1)`},
		{Partition: 2, Kind: model.UnreadCorrupt, Count: 1, FirstOffset: corrupt, LastOffset: corrupt,
			Why: "the value of \"since\x1b]0;owned\a-2-1\" does not decode (4 bytes)"},
	}
	if fmt.Sprint(r.Unreadable) != fmt.Sprint(want) {
		t.Fatalf("unreadable %+v\nwant %+v", r.Unreadable, want)
	}
	if r.NeverCompacted || r.CompleteSince == nil || !r.CompleteSince.After(before) || len(r.Events) != 4 {
		t.Fatalf("complete since %v (never compacted %v), %d events; want after %s", r.CompleteSince, r.NeverCompacted, len(r.Events), before)
	}
	note := fmt.Sprintf("txnscope: note: 2 records of __transaction_state txnscope cannot read, in 2 partitions: "+
		"partition 0 offset %d (newer version: the value of \"since-0-1\": version 2, newer than txnscope reads (1)); "+
		"partition 2 offset %d (corrupt: the value of \"since\\x1b]0;owned\\x07-2-1\" does not decode (4 bytes)); "+
		"the replay is complete only after them\n", newer, corrupt)
	if stderr != note {
		t.Fatalf("stderr:\n%q\nwant\n%q", stderr, note)
	}

	code, table, stderr = runArgs(t, "snapshot", "--since", "1h", "-b", boot, "--timeout", "5s")
	if code != 0 || stderr != note {
		t.Fatalf("table: exit %d, stderr %q", code, stderr)
	}
	for _, line := range []string{
		"before it not all (compacted, or after a record that cannot be read)\n",
		fmt.Sprintf("\n# 2 records of __transaction_state txnscope cannot read, in 2 partitions: partition 0 offset %d (newer version:", newer),
	} {
		if !strings.Contains(table, line) {
			t.Errorf("the table lacks %q:\n%s", line, table)
		}
	}
	if strings.ContainsAny(table+stderr, "\x1b\a") {
		t.Errorf("a raw control byte of the id in the output:\n%q", table)
	}
}
