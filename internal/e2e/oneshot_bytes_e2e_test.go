package e2e

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/testutil"
	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
)

// exactID is what a script reads as the id: the bytes of the _base64
// companion when there is one, the string otherwise.
func exactID(t *testing.T, s string, b64 *string) string {
	t.Helper()
	if b64 == nil {
		return s
	}
	raw, err := base64.StdEncoding.DecodeString(*b64)
	if err != nil {
		t.Fatalf("companion %q of %q: %v", *b64, s, err)
	}
	return string(raw)
}

type idJSON struct {
	ID  string  `json:"transactional_id"`
	B64 *string `json:"transactional_id_base64"`
}

// TestE2EOneShotJSONExactBytes: two transactional ids that differ only in
// bytes that are not UTF-8 (real producers use them) print the same
// transactional_id in JSON, U+FFFD for the bad byte, and every -o json
// document — list, describe, snapshot, force-terminate — and the audit log
// tell them apart by the _base64 companion of the field. A UTF-8 id has none.
func TestE2EOneShotJSONExactBytes(t *testing.T) {
	quickExit(t)
	_, bs := kafkatest.NewCluster(t)
	b := strings.Join(bs, ",")
	ids := []string{"pair-\xff-0-1", "pair-\xfe-0-1"}
	all := append([]string{"plain-0-1"}, ids...)
	for _, id := range all {
		kafkatest.OpenTxn(t, bs, id, "orders", time.Minute)
	}
	auditLog := filepath.Join(t.TempDir(), "audit.log")
	exactSet := func(what string, got []idJSON) {
		t.Helper()
		var exact []string
		for _, g := range got {
			if g.B64 != nil && g.ID == "plain-0-1" {
				t.Errorf("%s: a UTF-8 id has a companion %q", what, *g.B64)
			}
			exact = append(exact, exactID(t, g.ID, g.B64))
		}
		slices.Sort(exact)
		if want := slices.Sorted(slices.Values(all)); !slices.Equal(exact, want) {
			t.Errorf("%s: the ids read %q, want %q", what, exact, want)
		}
	}

	r := run1(t, "list", "-b", b, "-o", "json")
	mustOK(t, r)
	var list struct{ Transactions []idJSON }
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatal(err)
	}
	exactSet("list", list.Transactions)
	printed := map[string]bool{}
	for _, l := range list.Transactions {
		if l.ID != "plain-0-1" {
			printed[l.ID] = true
		}
	}
	if len(printed) != 1 {
		t.Errorf("list: the two ids print differently without their bytes: %v", printed)
	}

	r = run1(t, "snapshot", "-b", b, "-o", "json")
	mustOK(t, r)
	testutil.CheckSnapshotJSON(t, []byte(r.stdout))
	var snap struct{ Transactions []idJSON }
	if err := json.Unmarshal([]byte(r.stdout), &snap); err != nil {
		t.Fatal(err)
	}
	exactSet("snapshot", snap.Transactions)

	for _, id := range ids {
		r = run1(t, "describe", "-b", b, "-o", "json", "--transactional-id", id)
		mustOK(t, r)
		var d idJSON
		if err := json.Unmarshal([]byte(r.stdout), &d); err != nil || exactID(t, d.ID, d.B64) != id {
			t.Errorf("describe %q: reads %+v (%v)", id, d, err)
		}

		r = run1(t, "force-terminate", "-b", b, "-o", "json", "--yes", "--audit-log", auditLog, "--transactional-id", id)
		mustOK(t, r)
		var ft struct {
			Target    string  `json:"target"`
			TargetB64 *string `json:"target_base64"`
			Request   string  `json:"request"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &ft); err != nil || exactID(t, ft.Target, ft.TargetB64) != id {
			t.Errorf("force-terminate %q: reads %+v (%v)", id, ft, err)
		}
		if !strings.Contains(ft.Request, "transactional.id "+strconv.Quote(id)+",") {
			t.Errorf("force-terminate %q: the request %q does not Go-quote the id", id, ft.Request)
		}
	}

	log, err := os.ReadFile(auditLog)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(log)), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d audit lines, want an attempt and a result for each id:\n%s", len(lines), log)
	}
	for i, l := range lines {
		var e struct {
			idJSON
			Target    string  `json:"target"`
			TargetB64 *string `json:"target_base64"`
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatal(err)
		}
		if id := ids[i/2]; exactID(t, e.Target, e.TargetB64) != id || exactID(t, e.ID, e.B64) != id {
			t.Errorf("audit line %d reads %q / %q, want %q: %s", i, e.Target, e.ID, id, l)
		}
	}
}
