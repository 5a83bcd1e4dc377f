package e2e

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/testutil/uitest"
)

// jobLine is the line of the jobs view (or of a job's subtasks) that names
// name, or "".
func jobLine(screen, name string) string {
	for _, l := range strings.Split(screen, "\n") {
		if slices.Contains(strings.Fields(l), name) {
			return l
		}
	}
	return ""
}

// marked reports whether a jobs view line carries a problem mark (! or !!)
// in front, where the cursor's > may also be.
func marked(line string) bool {
	return strings.Contains(line[:min(len(line), 4)], "!")
}

// TestTmuxDemoJobs runs `txnscope demo` in a real terminal (tmux), opens the
// jobs view with J and waits, at the demo's own pace, for each of its jobs to
// show what it is there to show: inventory-sync-v7 crashed and restarted,
// its leftovers lingering (!!), listed first; payments-dedup-v3 with subtask
// 2 behind; orders-enricher-v1 shared by two jobs; clicks-sessionizer-v2
// healthy, unmarked. enter on the lingering job shows its subtasks and the
// ids they left open.
func TestTmuxDemoJobs(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s := uitest.StartTerm(t, 160, 40, []string{asMain + "=1", "XDG_STATE_HOME=" + t.TempDir()}, exe, "demo")
	s.WaitText([]string{"TRANSACTIONAL ID", "● connected"})

	s.Keys("J")
	s.WaitText([]string{"JOB", "LINGER", "clicks-sessionizer-v2", "orders-enricher-v1", "payments-dedup-v3", "inventory-sync-v7"})

	// The crash comes on checkpoint 3, the restart 3 checkpoints later; the
	// leftovers linger once the restarted job commits.
	s.Wait("inventory-sync-v7 marked !! and lingering, first", func(scr string) bool {
		l := jobLine(scr, "inventory-sync-v7")
		return strings.Contains(l, "!!") && strings.Contains(l, "lingering after a restart") &&
			strings.Index(scr, "inventory-sync-v7") < strings.Index(scr, "payments-dedup-v3")
	})
	s.Wait("payments-dedup-v3 with subtask 2 behind", func(scr string) bool {
		l := jobLine(scr, "payments-dedup-v3")
		return marked(l) && strings.Contains(l, "subtask 2 behind")
	})
	// The shared prefix needs takeovers on three ids in two rounds 10 s
	// apart; on kfake, polled, a takeover is seen only when the other job's
	// transaction had begun: about a minute into the demo.
	s.WaitFor(2*time.Minute, "orders-enricher-v1 looking shared", func(scr string) bool {
		l := jobLine(scr, "orders-enricher-v1")
		return marked(l) && strings.Contains(l, "looks shared")
	})
	scr := s.Wait("every job as it should be at once, clicks-sessionizer-v2 unmarked", func(scr string) bool {
		healthy := jobLine(scr, "clicks-sessionizer-v2")
		return healthy != "" && !marked(healthy) && strings.Contains(jobLine(scr, "inventory-sync-v7"), "!!") &&
			strings.Contains(jobLine(scr, "payments-dedup-v3"), "behind") && strings.Contains(jobLine(scr, "orders-enricher-v1"), "shared")
	})
	if l := jobLine(scr, "inventory-sync-v7"); !strings.HasPrefix(l, ">") {
		t.Errorf("the cursor is not on the lingering job, listed first:\n%s", scr)
	}

	// enter: its subtasks, each with the id its crash left open.
	s.Keys("Enter")
	s.Wait("subtasks 0 and 1 of inventory-sync-v7, each lingering on checkpoint 3", func(scr string) bool {
		return strings.Contains(scr, "SUBTASK") && strings.Contains(scr, "LINGERING IDS") &&
			strings.Contains(jobLine(scr, "inventory-sync-v7-0-3"), "!!") && strings.Contains(jobLine(scr, "inventory-sync-v7-1-3"), "!!")
	})
	s.Keys("Escape")
	s.WaitText([]string{"clicks-sessionizer-v2", "LINGER"}, "LINGERING IDS")

	s.Keys("q")
	if code := s.WaitExit(); code != "0" {
		t.Errorf("the program's exit status is %s, want 0; screen:\n%s", code, s.Capture())
	}
}
