package views

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
)

func batchData(n int, id func(i int) string, phase DialogPhase) ActionDialogData {
	d := ActionDialogData{
		Title: fmt.Sprintf("FORCE-TERMINATE %d LINGERING TRANSACTIONS", n), Of: "job warehouse-loader (flink)",
		Wire:         "InitProducerId(transactional.id <id>, producer id -1, epoch -1, transaction timeout <its timeout>)",
		Consequences: []string{"Each id's coordinator aborts its open transaction.", "Records written in them are discarded."},
		Warning:      "The latest refresh says 1 of the 3 changed since shown (marked): sending those will be refused.",
		Word:         fmt.Sprintf("abort %d", n), Input: "> abort", Phase: phase, AuditPath: "/home/oncall/.local/state/txnscope/audit.log",
		Progress: "2 force-terminated, 1 refused",
	}
	for i := range n {
		r := BatchRow{ID: id(i), ProducerID: int64(3000 + i), Epoch: 1, Age: time.Minute, Timeout: 15 * time.Minute}
		if phase == DialogDone && i%2 == 1 {
			r.Status, r.Bad, r.Reason = "refused", true, "refused: this is a newer transaction of "+id(i)+"; the one shown has ended"
		}
		d.Rows = append(d.Rows, r)
	}
	return d
}

var moreRE = regexp.MustCompile(`… and (\d+) more`)

// Whatever the number of ids and the room, the box keeps its width, never
// runs over the height, and always shows the title with the count and what
// to type (or the outcome); ids left out are counted.
func TestBatchDialogAlwaysShowsTheCountAndTheConfirmation(t *testing.T) {
	st := PlainStyles()
	ids := map[string]func(int) string{
		"short":   func(i int) string { return fmt.Sprintf("warehouse-loader-%d-118", i) },
		"long":    func(i int) string { return strings.Repeat("very-long-prefix-", 6) + strconv.Itoa(i) + "-118" },
		"hostile": func(i int) string { return fmt.Sprintf("evil\x1b]0;pwned\x07\x1b[2J-%d-5", i) },
	}
	for kind, id := range ids {
		for _, n := range []int{1, 3, 12, 400} {
			for _, phase := range []DialogPhase{DialogConfirm, DialogSending, DialogDone} {
				d := batchData(n, id, phase)
				for w := 80; w <= 200; w += 40 {
					for h := 17; h <= 57; h += 8 {
						box := ActionDialog(d, w, h, st)
						name := fmt.Sprintf("%s ids, %d, phase %d, %d×%d", kind, n, phase, w, h)
						lines := strings.Split(box, "\n")
						if len(lines) > h {
							t.Fatalf("%s: %d lines", name, len(lines))
						}
						for i, l := range lines {
							if ansi.StringWidth(l) != DialogWidth(w) {
								t.Fatalf("%s: line %d is %d cells", name, i, ansi.StringWidth(l))
							}
						}
						plain := ansi.Strip(box)
						if strings.Contains(box, "\x07") || strings.Contains(box, "\x1b]0;") {
							t.Fatalf("%s: an id's escape sequence reached the box", name)
						}
						want := []string{d.Title}
						switch phase {
						case DialogConfirm:
							want = append(want, "Type "+d.Word+" and press enter", d.Input)
						case DialogDone:
							want = append(want, d.Progress, "enter or esc closes")
						}
						for _, s := range want {
							if !strings.Contains(plain, s) {
								t.Fatalf("%s: lacks %q:\n%s", name, s, plain)
							}
						}
						shown := strings.Count(plain, "/1 ")
						if m := moreRE.FindStringSubmatch(plain); m != nil {
							more, _ := strconv.Atoi(m[1])
							if shown+more != n {
								t.Fatalf("%s: %d rows shown and %d more, of %d", name, shown, more, n)
							}
						} else if shown != n && shown != 0 {
							t.Fatalf("%s: %d of %d rows shown and no count of the rest:\n%s", name, shown, n, plain)
						}
					}
				}
			}
		}
	}
}
