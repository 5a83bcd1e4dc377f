package ui

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/txnscope/txnscope/internal/audit"
)

// inProfile runs the harness in context p of a file holding names; :ctx
// records where it was asked to go.
func inProfile(p Profile, names ...string) func(*Options) {
	return func(o *Options) {
		o.Profile, o.Profiles = p, names
		o.Switch = func(string) error { return nil }
	}
}

func TestCmdlineSwitchesContext(t *testing.T) {
	var asked []string
	h := started(t, inProfile(Profile{Name: "staging", Label: "staging eu"}, "staging", "prod-eu", "prod-us"), func(o *Options) {
		o.Switch = func(name string) error {
			asked = append(asked, name)
			if name == "prod-us" {
				return errors.New("/cfg.yaml:9:14: context \"prod-us\": --command-config /x: no such file")
			}
			return nil
		}
	})
	mustContain(t, h.screen(), " staging eu ")

	// tab completes the command, then as much of the name as is shared.
	h.press(":")
	h.typeText("c")
	h.press("tab")
	if v := h.m.cmd.in.Value(); v != "c" {
		t.Errorf("c is ctx or context: the value stays %q, want c", v)
	}
	h.typeText("tx")
	h.press("tab")
	h.typeText("p")
	h.press("tab")
	if v := h.m.cmd.in.Value(); v != "ctx prod-" {
		t.Errorf("after tab: %q, want \"ctx prod-\"", v)
	}
	mustContain(t, h.screen(), "prod-eu prod-us")

	// A context that cannot be read is said, and the UI stays where it is.
	h.typeText("us")
	h.press("enter")
	if h.quit || h.m.SwitchedTo() != "" {
		t.Fatal("a context that failed to read was switched to")
	}
	mustContain(t, h.screen(), `context prod-us: /cfg.yaml:9:14`)

	for _, bad := range []struct{ typed, says string }{
		{"ctx qa", "no context qa (have staging, prod-eu, prod-us)"},
		{"ctx staging", "already in context staging"},
		{"frob", "unknown command :frob"},
		{"ctx", "contexts: *staging prod-eu prod-us"},
	} {
		h.press(":")
		h.typeText(bad.typed)
		h.press("enter")
		mustContain(t, h.screen(), bad.says)
		if h.quit {
			t.Fatalf(":%s quit", bad.typed)
		}
	}
	// esc closes the line without running it.
	h.press(":")
	h.typeText("ctx prod-eu")
	h.press("esc")
	if h.quit || h.m.cmd != nil {
		t.Fatal("esc ran the command line")
	}
	h.press(":")
	h.typeText("ctx prod-eu")
	h.press("enter")
	if !h.quit || h.m.SwitchedTo() != "prod-eu" || asked[len(asked)-1] != "prod-eu" {
		t.Fatalf("quit %v switched to %q asked %v", h.quit, h.m.SwitchedTo(), asked)
	}
}

// TestCmdlineNotWhileActing: no switching with a dialog open or an action
// on its way; the keys typed into a dialog never reach the command line.
func TestCmdlineNotWhileActing(t *testing.T) {
	h := started(t, inProfile(Profile{Name: "staging"}, "staging", "prod"))
	h.selectID("crashed-job-0-7")
	h.press("a", ":")
	if h.m.cmd != nil {
		t.Fatal(": inside the dialog opened the command line")
	}
	if got := h.m.switchProfile("prod"); got != nil || h.m.SwitchedTo() != "" {
		t.Fatal("switched with a dialog open")
	}
	mustContain(t, h.screen(), "an action is open")
}

func TestCmdlineWithoutContexts(t *testing.T) {
	h := started(t)
	h.press(":")
	h.typeText("ctx prod")
	h.press("enter")
	if h.quit {
		t.Fatal("switched without contexts")
	}
	mustContain(t, h.screen(), "no contexts: txnscope config add NAME")
}

// TestProtectedContextWantsItsName: on a protected context the abort word
// alone sends nothing; the word and the context's name do, and the audit
// log names the context.
func TestProtectedContextWantsItsName(t *testing.T) {
	log := filepath.Join(t.TempDir(), "audit.log")
	h := started(t, inProfile(Profile{Name: "prod-eu", Protected: true}, "prod-eu"), func(o *Options) {
		o.Audit = audit.New(log).InContext("prod-eu")
	})
	mustContain(t, h.screen(), "prod-eu · protected")
	h.selectID("crashed-job-0-7")
	h.press("a")
	for _, typed := range []string{"abort", "abort prod", "abort staging", "prod-eu", "abort prod-eu now"} {
		h.typeText(typed)
		h.press("enter")
		if n := len(h.admin.Executed()); n != 0 {
			t.Fatalf("%q sent %d", typed, n)
		}
		mustContain(t, h.screen(), "type abort prod-eu (exactly)")
		h.press("ctrl+u")
	}
	h.typeText("abort prod-eu")
	h.press("enter")
	if n := len(h.admin.Executed()); n != 1 {
		t.Fatalf("abort prod-eu sent %d", n)
	}
	lines := auditLines(t, log)
	if len(lines) == 0 || lines[0].Context != "prod-eu" {
		t.Fatalf("audit lines %+v", lines)
	}
}
