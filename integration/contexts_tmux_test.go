package integration

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/testutil/uitest"
)

// TestTmuxContexts: two real clusters (the two brokers of scripts/kafka-up --with-noverify) are
// two contexts of one config file, written with `txnscope config` alone. The UI opens on the
// current one, `:ctx prod` (tab-completed) switches live and nothing of the first cluster stays
// on screen; prod is protected: its dialog refuses "abort" and sends "abort prod", whose audit
// lines name the context; the transaction on the other cluster is untouched; `:ctx staging`
// comes back. Then `txnscope --context staging snapshot` reads staging only.
func TestTmuxContexts(t *testing.T) {
	t.Parallel()
	staging, prod := Bootstrap(t), NoVerifyBootstrap(t)
	requireLoopback(t, staging)
	requireLoopback(t, prod)
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	sAdm, pAdm := newAdmin(t, staging), newAdmin(t, prod)
	sID, pID := tuiID("ctxstg"), tuiID("ctxprod")
	openTxn(ctx, t, producer(t, staging, sID, 2*time.Minute), topicOn(ctx, t, sAdm), 1, "staging")
	openTxn(ctx, t, producer(t, prod, pID, 2*time.Minute), topicOn(ctx, t, pAdm), 1, "prod")

	bin := buildTxnscope(ctx, t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "txnscope", "config.yaml")
	prodAudit := filepath.Join(dir, "prod-audit.log")
	env := []string{"TXNSCOPE_CONFIG=" + cfg, "XDG_STATE_HOME=" + filepath.Join(dir, "state")}
	for _, args := range [][]string{
		{"config", "add", "staging", "-b", staging, "--refresh", tuiRefresh, "--label", "staging eu", "--color", "green"},
		{"config", "add", "prod", "-b", prod, "--refresh", tuiRefresh, "--label", "PROD eu", "--color", "red", "--protected", "--audit-log", prodAudit},
		{"config", "validate"},
	} {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("txnscope %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}

	term := &tuiTerm{Term: uitest.StartTerm(t, 160, 40, env, bin), t: t}
	term.WaitText([]string{" staging eu ", "● connected", "context staging"})
	term.filter(sID)
	term.Wait(sID+" Ongoing on staging", func(scr string) bool {
		r, ok := rowOf(scr, sID)
		return ok && r.state == "Ongoing"
	})

	term.Keys(":")
	term.Text("ctx pr")
	term.Keys("Tab")
	term.WaitText([]string{":ctx prod "})
	term.Keys("Enter")
	scr := term.WaitText([]string{" PROD eu · protected ", "● connected", "context prod"}, " staging eu ", sID)
	if strings.Contains(scr, "filter /") {
		t.Errorf("the staging filter came along:\n%s", scr)
	}
	term.filter(pID)
	term.Wait(pID+" Ongoing on prod", func(scr string) bool {
		r, ok := rowOf(scr, pID)
		return ok && r.state == "Ongoing"
	})

	term.Keys("a")
	term.WaitText([]string{"FORCE-TERMINATE " + pID, "Type abort prod and press enter"})
	term.Text("abort")
	term.Keys("Enter")
	term.WaitText([]string{"type abort prod (exactly)"})
	if b, err := os.ReadFile(prodAudit); err != nil || len(b) != 0 {
		t.Fatalf("after \"abort\" alone the audit log must be open and empty: %q, %v", b, err)
	}
	term.Keys("C-u")
	term.Text("abort prod")
	term.Keys("Enter")
	term.WaitText([]string{"sent; the broker accepted it"})
	lines := readAudit(t, prodAudit)
	if len(lines) != 2 {
		t.Fatalf("audit log: %d lines, want 2: %+v", len(lines), lines)
	}
	for _, e := range lines {
		if e.Context != "prod" || e.Bootstrap != prod || e.TransactionalID != pID {
			t.Errorf("audit line %+v: want context prod, bootstrap %s, id %s", e, prod, pID)
		}
	}
	described, err := sAdm.DescribeTransactions(ctx, sID)
	if err != nil || described[sID].State != "Ongoing" {
		t.Fatalf("the staging transaction after the abort on prod: %+v %v", described[sID], err)
	}

	term.Keys("Escape")
	term.WaitText([]string{"sort "}, "FORCE-TERMINATE")
	term.Keys(":")
	term.Text("ctx staging")
	term.Keys("Enter")
	term.WaitText([]string{" staging eu ", "● connected"}, "PROD eu", pID)
	term.quit()

	// The one-shots take the same contexts.
	cmd := exec.CommandContext(ctx, bin, "list", "--context", "prod")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), pID) || strings.Contains(string(out), sID) {
		t.Errorf("list --context prod: %v\n%s", err, out)
	}
}
