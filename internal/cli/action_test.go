package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/model"
)

// A script that reads an abort's -o json gets a document even when nothing
// was sent, saying so and why, beside the exit status 1 and the stderr line.
func TestActionRefusalsPrintJSON(t *testing.T) {
	_, bootstrap := kafkatest.NewCluster(t)
	b := strings.Join(bootstrap, ",")
	dir := t.TempDir()
	auditLog := filepath.Join(dir, "audit.log")
	blocked := filepath.Join(dir, "file")
	if err := os.WriteFile(blocked, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	kafkatest.InitIDs(t, bootstrap, time.Minute, "idle-id")
	open := kafkatest.OpenTxn(t, bootstrap, "open-id", "orders", time.Minute)
	defer open.Close()

	for _, tc := range []struct {
		name   string
		args   []string
		action string
		target string
		result string // in the result and on stderr
		wire   bool   // the plan was made: the request it would have sent
	}{
		{"no such id", []string{"force-terminate", "--transactional-id", "nope", "--yes"},
			"force-terminate", "nope", "force-terminate refused", false},
		{"nothing open", []string{"force-terminate", "--transactional-id", "idle-id", "--yes"},
			"force-terminate", "idle-id", "force-terminate refused", false},
		{"audit log unwritable", []string{"force-terminate", "--transactional-id", "open-id", "--yes", "--audit-log", filepath.Join(blocked, "audit.log")},
			"force-terminate", "open-id", "nothing sent", false},
		{"no producer on the partition", []string{"abort", "--topic", "orders", "--partition", "2", "--start-offset", "5", "--yes"},
			"abort-partition", "orders-2", "abort refused", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The test's own --audit-log, if any, comes later and wins.
			args := append([]string{tc.args[0], "-b", b, "-o", "json", "--audit-log", auditLog}, tc.args[1:]...)
			code, out, errs := runArgs(t, args...)
			var doc actionJSON
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatalf("exit %d, stdout %q, stderr %q: %v", code, out, errs, err)
			}
			if code != 1 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, tc.result) {
				t.Errorf("exit %d, stderr %q; want 1 and one line saying %q", code, errs, tc.result)
			}
			if !doc.Refused || doc.Sent || doc.OK || doc.Sends != 0 || doc.Attempt != "" ||
				string(doc.Action) != tc.action || doc.Target != tc.target || !strings.Contains(doc.Result, tc.result) {
				t.Errorf("got %+v; want %s of %s refused, saying %q", doc, tc.action, tc.target, tc.result)
			}
			if (doc.Request != "") != tc.wire {
				t.Errorf("request %q; want one only when the plan was made", doc.Request)
			}
		})
	}
	if b, err := os.ReadFile(auditLog); err == nil && strings.Contains(string(b), "attempt") {
		t.Errorf("the audit log has an attempt though nothing was sent:\n%s", b)
	}
}

// Refused after the plan (the operator did not type the word), the document
// says what would have gone out.
func TestRefusedAfterThePlan(t *testing.T) {
	var w bytes.Buffer
	a := model.Action{Kind: model.ForceTerminate, TransactionalID: "orders-enricher-v1-0-41", Coordinator: 1, TimeoutMs: 60000,
		ProducerID: 4001, ProducerEpoch: 3}
	err := refused(out{w: &w, json: true}, config{cmd: cmdForceTerminate}, &a, "/audit.log", errNotConfirmed)
	if !errors.Is(err, errNotConfirmed) {
		t.Errorf("returned %v", err)
	}
	var doc actionJSON
	if err := json.Unmarshal(w.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if !doc.Refused || doc.Sent || doc.ProducerID != 4001 || doc.ProducerEpoch != 3 || doc.Request != a.Wire() ||
		doc.Result != errNotConfirmed.Error() || doc.AuditLog != "/audit.log" {
		t.Errorf("got %+v", doc)
	}
	w.Reset()
	if err := refused(out{w: &w}, config{cmd: cmdForceTerminate}, &a, "/audit.log", errNotConfirmed); err != errNotConfirmed || w.Len() != 0 {
		t.Errorf("table output: %v, printed %q; want the error alone", err, w.String())
	}
}

// --read-only and a missing --yes off a terminal refuse before the cluster is
// touched (here there is none), as usage errors, and under -o json with the
// same refused document as every other refusal.
func TestRefusedBeforeTheClusterPrintJSON(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		action string
		target string
		result string
	}{
		{"read-only force-terminate", []string{"force-terminate", "--read-only", "--transactional-id", "orders-0-7", "--yes"},
			"force-terminate", "orders-0-7", "--read-only forbids it"},
		{"read-only abort", []string{"abort", "--read-only", "--topic", "orders", "--partition", "2", "--start-offset", "5", "--yes"},
			"abort-partition", "orders-2", "--read-only forbids it"},
		{"no --yes off a terminal", []string{"force-terminate", "--transactional-id", "orders-0-7"},
			"force-terminate", "orders-0-7", "needs --yes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, asJSON := range []bool{false, true} {
				args := append([]string{tc.args[0], "-b", "127.0.0.1:1", "--audit-log", filepath.Join(t.TempDir(), "audit.log")}, tc.args[1:]...)
				if asJSON {
					args = append(args, "-o", "json")
				}
				code, out, errs := runArgs(t, args...)
				if msg, _, ok := usageStderr(errs); code != 2 || !ok || !strings.Contains(msg, tc.result) {
					t.Errorf("json %v: exit %d, stderr %q; want 2 and one line saying %q, then where the help is", asJSON, code, errs, tc.result)
				}
				if !asJSON {
					if out != "" {
						t.Errorf("table: stdout %q, want nothing", out)
					}
					continue
				}
				var doc actionJSON
				if err := json.Unmarshal([]byte(out), &doc); err != nil {
					t.Fatalf("stdout %q: %v", out, err)
				}
				if !doc.Refused || doc.Sent || doc.OK || doc.Sends != 0 || doc.Request != "" ||
					string(doc.Action) != tc.action || doc.Target != tc.target || !strings.Contains(doc.Result, tc.result) {
					t.Errorf("got %+v; want %s of %s refused, saying %q", doc, tc.action, tc.target, tc.result)
				}
			}
		})
	}
}
