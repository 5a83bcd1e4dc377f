package ui

import (
	"testing"

	tea "charm.land/bubbletea/v2"
)

// TestTooSmallNoKeyActs: with "terminal too small" on screen, a, the word
// abort and enter send nothing and open nothing; neither does a paste into a
// dialog opened before the terminal shrank. q still quits.
func TestTooSmallNoKeyActs(t *testing.T) {
	h := started(t)
	h.selectID("orders-enricher-v1-2-41")
	h.send(tea.WindowSizeMsg{Width: 60, Height: 15})
	mustContain(t, h.screen(), "terminal too small")
	h.press("a")
	h.typeText("abort")
	h.press("enter", "x", "tab", "j", "/", "f", "s", "e", "?")
	if h.m.dialog != nil || len(h.admin.Executed()) != 0 {
		t.Fatalf("keys acted behind the too-small message: dialog %v, executed %v", h.m.dialog != nil, h.admin.Executed())
	}
	if h.m.cur != screenList || h.m.showHelp || h.m.showEvents || h.list().typing || h.selectedID() != "orders-enricher-v1-2-41" {
		t.Errorf("keys changed the screens behind the too-small message: screen %v help %v events %v typing %v selected %s",
			h.m.cur, h.m.showHelp, h.m.showEvents, h.list().typing, h.selectedID())
	}
	h.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	mustNotContain(t, h.screen(), "FORCE-TERMINATE", "sent")

	// A dialog open when the terminal shrinks takes nothing it cannot show.
	h.press("a")
	if h.m.dialog == nil {
		t.Fatal("a did not open the dialog")
	}
	h.send(tea.WindowSizeMsg{Width: 79, Height: 24})
	h.send(tea.PasteMsg{Content: "abort"})
	h.typeText("abort")
	h.press("enter")
	if got := h.m.dialog.input.Value(); got != "" || len(h.admin.Executed()) != 0 {
		t.Fatalf("the hidden dialog took %q and sent %v", got, h.admin.Executed())
	}
	h.send(tea.WindowSizeMsg{Width: 80, Height: 20})
	h.press("esc")
	if h.m.dialog != nil {
		t.Errorf("esc at full size did not close the dialog")
	}

	h.send(tea.WindowSizeMsg{Width: 80, Height: 19})
	h.press("q")
	if !h.quit {
		t.Errorf("q did not quit behind the too-small message")
	}
}

// TestOverlaysHideActions: while help covers the screen, or a dialog is up,
// no action key reaches the screen underneath.
func TestOverlaysHideActions(t *testing.T) {
	h := started(t)
	h.selectID("orders-enricher-v1-2-41")
	h.press("?")
	h.press("a", "x", "enter", "j", "tab", "p", "c", "e", "/", "f", "s")
	if h.m.dialog != nil || h.m.cur != screenList || h.m.showEvents || h.list().typing || h.selectedID() != "orders-enricher-v1-2-41" {
		t.Errorf("keys acted under the help: dialog %v screen %v events %v typing %v selected %s",
			h.m.dialog != nil, h.m.cur, h.m.showEvents, h.list().typing, h.selectedID())
	}
	h.press("esc")

	h.press("enter", "G") // the detail, on orders-7 (hanging)
	h.press("x")
	if h.m.dialog == nil {
		t.Fatal("x did not open the dialog")
	}
	h.press("tab", "p", "c", "esc")
	if h.m.dialog != nil || h.m.cur != screenDetail {
		t.Errorf("keys reached the detail under the dialog: dialog %v screen %v", h.m.dialog != nil, h.m.cur)
	}
}
