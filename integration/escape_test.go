package integration

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode"
)

// TestEscapedIDOnRealKafka: Kafka 4.4 takes a transactional.id holding ESC ] 0 ; … BEL (set the
// window title), ESC [ 2 J (clear the screen) and CR LF (forge a row) from a real franz-go
// producer, and lists and describes it as it is. txnscope's list, describe and TUI show it written
// out, on one row with its state; the terminal's title is not touched.
func TestEscapedIDOnRealKafka(t *testing.T) {
	t.Parallel()
	bootstrap := Bootstrap(t)
	requireLoopback(t, bootstrap)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	adm := newAdmin(t, bootstrap)
	tp := topicOn(ctx, t, adm)
	prefix := fmt.Sprintf("esc-%08x", rand.Uint32())
	id := prefix + "-\x1b]0;pwned\x07-\x1b[2J-x\r\ny"
	shown := prefix + `-\x1b]0;pwned\x07-\x1b[2J-x\r\ny`

	p := producer(t, bootstrap, id, time.Minute)
	openTxn(ctx, t, p, tp, 2, "escaped")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		_ = p.AbortBufferedRecords(ctx)
		endTxn(ctx, t, p, false)
	})
	// The broker keeps the id byte for byte.
	described, err := adm.DescribeTransactions(ctx, id)
	if err != nil || described[id].State != "Ongoing" {
		t.Fatalf("the broker's DescribeTransactions of %q: %v %+v", id, err, described)
	}

	bin := buildTxnscope(ctx, t)
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, bin, append(args, "-b", bootstrap)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("txnscope %s: %v\n%s", args[0], err, stderr.String())
		}
		if bad := strings.IndexFunc(stdout.String(), func(r rune) bool {
			return r != '\n' && r != '\t' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r))
		}); bad >= 0 {
			t.Errorf("txnscope %s prints a control character raw at byte %d:\n%q", args[0], bad, stdout.String())
		}
		return stdout.String()
	}
	rowOfTable := func(out string) []string {
		var rows []string
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, prefix) {
				rows = append(rows, l)
			}
		}
		return rows
	}
	// The broker matches the whole id, and Java's . does not match CR or LF.
	out := run("list", "--transactional-id-pattern", regexp.QuoteMeta(prefix)+`[\s\S]*`)
	if rows := rowOfTable(out); len(rows) != 1 || !strings.HasPrefix(rows[0], shown+"\t") || !strings.Contains(rows[0], "Ongoing") {
		t.Errorf("list: rows %q, want one starting %q with Ongoing", rows, shown)
	}
	out = run("describe", "--transactional-id", id)
	rows := rowOfTable(out)
	if len(rows) != 1 || !strings.Contains(rows[0], "\t"+shown+"\t") || !strings.Contains(rows[0], "Ongoing") {
		t.Errorf("describe: rows %q, want one with %q and Ongoing", rows, shown)
	}
	t.Logf("describe: %q", rows)

	term := startTUI(ctx, t, bootstrap, "--read-only")
	term.filter(prefix)
	scr := term.Wait(shown+" Ongoing on one row", func(scr string) bool {
		r, ok := rowOf(scr, shown)
		return ok && r.state == "Ongoing"
	})
	// The row, the header's oldest open id and the footer's filter at most: a forged CR LF would add more.
	if !strings.HasPrefix(scr, "txnscope") || strings.Count(scr, prefix) > 3 {
		t.Errorf("the screen:\n%s", scr)
	}
	if title := term.Must("display-message", "-p", "-t", "term", "#{pane_title}"); strings.Contains(title, "pwned") {
		t.Errorf("the id set the window title: %q", title)
	}
	term.quit()
}
