package views

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/txnscope/txnscope/model"
)

// plainReplayHeader are the replay's columns in `snapshot --since -o table`.
var plainReplayHeader = []string{"TIME", "EVENT", "TRANSACTIONAL_ID", "PID/EPOCH", "TOOK", "PARTS", "DETAIL"}

// PlainReplay prints a replay of the coordinators' log under the snapshot's
// table: a blank line, a comment line that says what the log still held (and
// one more naming the records it could not read), then one aligned line per
// event, oldest first, in UTC with milliseconds. Cells hold no spaces (an
// event's kind is hyphenated) but DETAIL, the last.
func PlainReplay(w io.Writer, r model.Replayed, since time.Time, limit int) error {
	evs := r.Events
	bw := bufio.NewWriterSize(w, 64<<10)
	fmt.Fprintf(bw, "\n# the coordinators' log since %s: %s event(s)", utcMs(since), Count(len(evs)))
	if len(evs) >= limit {
		fmt.Fprintf(bw, " (the newest %s only)", Count(limit))
	}
	switch {
	case r.Whole && len(evs) > 0:
		bw.WriteString("; every transition (the log was never compacted)")
	case r.Complete.After(since) && len(r.Unread) > 0:
		fmt.Fprintf(bw, "; every transition from %s, before it not all (compacted, or after a record that cannot be read)", utcMs(r.Complete))
	case r.Complete.After(since):
		fmt.Fprintf(bw, "; every transition from %s, before it only each id's last (compacted)", utcMs(r.Complete))
	}
	bw.WriteString("\n")
	if line := model.UnreadLine(r.Unread); line != "" {
		bw.WriteString("# " + oneLine(line) + "\n")
	}
	rows := make([][]string, 0, len(evs)+1)
	rows = append(rows, plainReplayHeader)
	for _, e := range evs {
		took, parts := "-", "-"
		if e.Kind.Ends() && e.Logged {
			parts = strconv.Itoa(int(e.Parts))
			if !e.Begun.IsZero() {
				took = Elapsed(e.At.Sub(e.Begun))
			}
		}
		detail := "-"
		if e.Detail != "" {
			detail = oneLine(e.Detail)
		}
		rows = append(rows, []string{utcMs(e.At), strings.ReplaceAll(string(e.Kind), " ", "-"), plainID(e.ID),
			fmt.Sprintf("%d/%d", e.ProducerID, e.ProducerEpoch), took, parts, detail})
	}
	widths := make([]int, len(plainReplayHeader)-1)
	for _, r := range rows {
		for i := range widths {
			widths[i] = max(widths[i], cells(r[i]))
		}
	}
	for _, r := range rows {
		if err := writeAligned(bw, r, widths, 2); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func utcMs(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
