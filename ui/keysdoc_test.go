package ui

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"

	"github.com/txnscope/txnscope/views"
)

// The README's keys table is generated from the keymap, as the help screen
// is, so the two cannot drift: `go test ./ui -run TestKeysDoc -update`
// rewrites the block between these markers.
const (
	keysBegin  = "<!-- keys:begin -->"
	keysEnd    = "<!-- keys:end -->"
	readmePath = "../README.md"
)

// The golden package registers -update for the golden files; the README's
// block follows the same flag. Defined here only if nobody else did.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files and the README's keys table")
	}
}

func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// docGroups is the full help plus the keys it leaves to the footer: those of
// the filter prompt and the abort dialog, and ctrl+c.
func docGroups(k keyMap) []views.HelpGroup {
	return append(k.groups(),
		views.HelpGroup{Title: "while typing a filter", Keys: []key.Binding{k.Apply, k.Clear}},
		views.HelpGroup{Title: "in the abort dialog", Keys: []key.Binding{k.Confirm, k.Cancel}},
		views.HelpGroup{Title: "anywhere", Keys: []key.Binding{k.ForceQuit}},
	)
}

// keysTable renders the keymap as a markdown table. A key that read-only
// mode leaves unbound says so.
func keysTable() string {
	full, ro := docGroups(newKeyMap(false)), docGroups(newKeyMap(true))
	var b strings.Builder
	b.WriteString("| key | action |\n|---|---|\n")
	for i, g := range full {
		fmt.Fprintf(&b, "| **%s** | |\n", cell(g.Title))
		for j, k := range g.Keys {
			desc := k.Help().Desc
			if !ro[i].Keys[j].Enabled() {
				desc += " (not in `--read-only`)"
			}
			fmt.Fprintf(&b, "| `%s` | %s |\n", k.Help().Key, cell(desc))
		}
	}
	return b.String()
}

func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// keysBlock splits doc around the generated block: before it (markers
// included up to the begin line), the block, and from the end marker on.
func keysBlock(doc []byte) (before, block, after []byte, err error) {
	i := bytes.Index(doc, []byte(keysBegin+"\n"))
	j := bytes.Index(doc, []byte(keysEnd))
	if i < 0 || j < 0 || j < i {
		return nil, nil, nil, fmt.Errorf("%s has no %s … %s block", readmePath, keysBegin, keysEnd)
	}
	start := i + len(keysBegin) + 1
	return doc[:start], doc[start:j], doc[j:], nil
}

func TestKeysDoc(t *testing.T) {
	doc, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	before, block, after, err := keysBlock(doc)
	if err != nil {
		t.Fatal(err)
	}
	want := keysTable()
	if updating() {
		out := append(append(append([]byte{}, before...), want...), after...)
		if err := os.WriteFile(readmePath, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if string(block) != want {
		t.Errorf("README.md's keys table differs from the keymap (ui/keys.go); run `go test ./ui -run TestKeysDoc -update`\n"+
			"README has:\n%s\nthe keymap gives:\n%s", block, want)
	}
}

// Every binding of the help, the filter prompt and the dialog has its row,
// and the keys read-only mode leaves unbound say so.
func TestKeysDocFollowsTheKeymap(t *testing.T) {
	base := keysTable()
	k := newKeyMap(false)
	if !strings.Contains(base, "| `"+k.Sort.Help().Key+"` | "+k.Sort.Help().Desc+" |") {
		t.Fatalf("the sort key's row is missing:\n%s", base)
	}
	if !strings.Contains(base, "| `"+k.Abort.Help().Key+"` | "+k.Abort.Help().Desc+" (not in `--read-only`) |") {
		t.Fatalf("the abort key is not marked as absent in read-only mode:\n%s", base)
	}
	for _, g := range docGroups(k) {
		for _, b := range g.Keys {
			if !strings.Contains(base, "| `"+b.Help().Key+"` | "+cell(b.Help().Desc)) {
				t.Errorf("binding %q (%s) has no row", b.Help().Key, b.Help().Desc)
			}
		}
	}
}

func TestKeysBlockNeedsItsMarkers(t *testing.T) {
	if _, _, _, err := keysBlock([]byte("# x\n" + keysBegin + "\n| a |\n")); err == nil {
		t.Error("a block without its end marker was accepted")
	}
	before, block, after, err := keysBlock([]byte("a\n" + keysBegin + "\nT\n" + keysEnd + "\nb\n"))
	if err != nil || string(before) != "a\n"+keysBegin+"\n" || string(block) != "T\n" || string(after) != keysEnd+"\nb\n" {
		t.Errorf("split = %q %q %q, %v", before, block, after, err)
	}
}
