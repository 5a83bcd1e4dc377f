// Package ctxfile reads and writes txnscope's config file: named contexts,
// each holding what the command line's flags can say about one cluster (its
// brokers, its properties, its Flink jobs, the UI's and the exporter's
// settings), plus whether it is read-only or protected and how the header
// shows it. Every mistake in the file is one error naming the file, the line
// and the column; nothing is returned from a file that did not read whole.
package ctxfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/txnscope/txnscope/internal/clientprops"
	"github.com/txnscope/txnscope/internal/inputfile"
)

// Env names, beside the --config and --context flags.
const (
	EnvConfig  = "TXNSCOPE_CONFIG"
	EnvContext = "TXNSCOPE_CONTEXT"
)

// Top-level keys.
const (
	keyCurrent  = "current-context"
	keyContexts = "contexts"
)

// Keys of a context that are not flags.
const (
	KeyLabel      = "label"
	KeyColor      = "color"
	KeyProtected  = "protected"
	KeyReadOnly   = "read-only"
	KeyProperties = "properties"
)

// Pos is a place in the file, 1-based.
type Pos struct{ Line, Col int }

// Error is a mistake in the file, at a place in it.
type Error struct {
	Path string
	Pos  Pos
	Msg  string
}

func (e *Error) Error() string {
	if e.Pos.Line == 0 {
		return e.Path + ": " + e.Msg
	}
	if e.Pos.Col == 0 {
		return fmt.Sprintf("%s:%d: %s", e.Path, e.Pos.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.Path, e.Pos.Line, e.Pos.Col, e.Msg)
}

// File is a config file as read.
type File struct {
	Path string
	// Current is current-context ("" when not set), at CurrentPos.
	Current    string
	CurrentPos Pos
	// Contexts in the order of the file.
	Contexts []Context
	// Secret names the first setting that holds a credential written out
	// in the file (not from the environment): such a file should be private.
	Secret string
}

// Context is one named context.
type Context struct {
	Name string
	Pos  Pos // of its name
	// Label and Color are how the header shows it (Label defaults to Name).
	Label, Color string
	ReadOnly     bool
	ReadOnlyPos  Pos
	// Protected: acting needs the context's name typed as well as the
	// command's word.
	Protected bool
	// Settings are the flags it sets, in the order of the file.
	Settings []Setting
	// Properties are client properties given inline (the keys of a
	// --command-config file), in the order of the file.
	Properties []Property
}

// Setting is one flag's value(s) from a context: Values has one element for
// a scalar flag, one per element of a list, and "K=V" per entry of a map.
type Setting struct {
	Flag   string
	Values []string
	Pos    Pos
}

// Property is one client property given inline.
type Property struct {
	Key, Value string
	Pos        Pos
}

// Find is the context called name.
func (f *File) Find(name string) (*Context, bool) {
	for i := range f.Contexts {
		if f.Contexts[i].Name == name {
			return &f.Contexts[i], true
		}
	}
	return nil, false
}

// Names are the contexts' names, in the order of the file.
func (f *File) Names() []string {
	out := make([]string, len(f.Contexts))
	for i, c := range f.Contexts {
		out[i] = c.Name
	}
	return out
}

// At is "PATH:LINE:COL", where p is.
func (f *File) At(p Pos) string { return fmt.Sprintf("%s:%d:%d", f.Path, p.Line, p.Col) }

// Errorf is an Error at p in f.
func (f *File) Errorf(p Pos, format string, args ...any) error {
	return &Error{Path: f.Path, Pos: p, Msg: fmt.Sprintf(format, args...)}
}

// Setting is the setting of flag in c, if it has one.
func (c *Context) Setting(flag string) (Setting, bool) {
	for _, s := range c.Settings {
		if s.Flag == flag {
			return s, true
		}
	}
	return Setting{}, false
}

// DefaultPath is where the file is looked for without --config or
// TXNSCOPE_CONFIG: $XDG_CONFIG_HOME/txnscope/config.yaml, else
// ~/.config/txnscope/config.yaml; "" when neither is set.
func DefaultPath(getenv func(string) string) string {
	if d := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "txnscope", "config.yaml")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "txnscope", "config.yaml")
	}
	return ""
}

// ErrNotExist is Load's error for a file that is not there.
var ErrNotExist = fs.ErrNotExist

// Load reads the file at path. A file that is not there is an error that
// errors.Is(err, ErrNotExist) tells apart.
func Load(path string) (*File, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", path, ErrNotExist)
	}
	data, err := inputfile.Read(path)
	if err != nil {
		return nil, &Error{Path: path, Msg: err.Error()}
	}
	return Parse(path, data)
}

// Parse reads data, the text of the file at path.
func Parse(path string, data []byte) (*File, error) {
	f := &File{Path: path}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, syntaxError(path, data, err)
	}
	if doc.Kind == 0 { // empty file
		return f, nil
	}
	var more yaml.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, syntaxError(path, data, err)
		}
		return nil, f.Errorf(Pos{Line: more.Line}, "a second YAML document (---): the file holds one")
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return f, nil
	}
	r := reader{f: f, dir: filepath.Dir(path)}
	if err := r.top(root); err != nil {
		return nil, err
	}
	return f, nil
}

// syntaxError is the YAML parser's error with the file's name and line.
// The parser's own line is where the construct it was in began ("line 1"
// for a bad indent under contexts:), or missing: the first line whose
// prefix of the file no longer parses is where the mistake is, which holds
// for the short files this is.
func syntaxError(path string, data []byte, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if k, _ := fmt.Sscanf(msg, "line %d:", &line); k == 1 {
		msg = strings.TrimSpace(msg[strings.Index(msg, ":")+1:])
	}
	if lines := strings.SplitAfter(string(data), "\n"); len(lines) <= 5000 {
		for k := 1; k <= len(lines); k++ {
			var n yaml.Node
			if yaml.Unmarshal([]byte(strings.Join(lines[:k], "")), &n) != nil {
				line = k
				break
			}
		}
	}
	return &Error{Path: path, Pos: Pos{Line: line}, Msg: oneLine(msg)}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func pos(n *yaml.Node) Pos { return Pos{Line: n.Line, Col: n.Column} }

// names are the keys of one mapping, to refuse one given twice.
type names map[string]Pos

// reader walks the document.
type reader struct {
	f   *File
	dir string // the file's directory: relative paths in it start there
}

func (r *reader) errf(n *yaml.Node, format string, args ...any) error {
	return r.f.Errorf(pos(n), format, args...)
}

// mapping checks n is a mapping and calls each for its pairs, refusing a
// key given twice and merge keys.
func (r *reader) mapping(n *yaml.Node, what string, each func(k, v *yaml.Node) error) error {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		return r.errf(n, "%s must be a mapping (key: value lines), not %s", what, kindOf(n))
	}
	seen := names{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return r.errf(k, "a key in %s must be a plain name", what)
		}
		if k.Tag == "!!merge" {
			return r.errf(k, "merge keys (<<) are not supported: write the keys out")
		}
		if first, dup := seen[k.Value]; dup {
			return r.errf(k, "%q is given twice in %s (first at line %d)", k.Value, what, first.Line)
		}
		seen[k.Value] = pos(k)
		if err := each(k, deref(v)); err != nil {
			return err
		}
	}
	return nil
}

// deref follows an alias (*name) to its anchor.
func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func kindOf(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	switch n.Tag {
	case "!!null":
		return "empty"
	case "!!bool":
		return "true/false"
	case "!!int", "!!float":
		return "a number (" + n.Value + ")"
	}
	return fmt.Sprintf("%q", n.Value)
}

func (r *reader) top(root *yaml.Node) error {
	var ctxNode *yaml.Node
	err := r.mapping(root, "the file", func(k, v *yaml.Node) error {
		switch k.Value {
		case keyCurrent:
			s, err := r.text(v, keyCurrent)
			if err != nil {
				return err
			}
			r.f.Current, r.f.CurrentPos = s, pos(v)
		case keyContexts:
			ctxNode = v
		default:
			if s := suggest(k.Value, []string{keyCurrent, keyContexts}); s != "" {
				return r.errf(k, "unknown key %q%s", k.Value, s)
			}
			return r.errf(k, "unknown key %q: the file holds %s and %s", k.Value, keyCurrent, keyContexts)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if ctxNode != nil && !(ctxNode.Kind == yaml.ScalarNode && ctxNode.Tag == "!!null") {
		err := r.mapping(ctxNode, keyContexts, func(k, v *yaml.Node) error {
			return r.context(k, v)
		})
		if err != nil {
			return err
		}
	}
	if r.f.Current != "" {
		if _, ok := r.f.Find(r.f.Current); !ok {
			return r.f.Errorf(r.f.CurrentPos, "%s %q is not a context of this file%s", keyCurrent, r.f.Current, have(r.f.Names()))
		}
	}
	return nil
}

// have lists the contexts there are, for a message about a missing one.
func have(ns []string) string {
	if len(ns) == 0 {
		return " (it has none)"
	}
	return " (it has " + strings.Join(ns, ", ") + ")"
}

// Have is have, for the command line's messages.
func Have(f *File) string { return have(f.Names()) }

func (r *reader) context(k, v *yaml.Node) error {
	name := k.Value
	if err := CheckName(name); err != nil {
		return r.errf(k, "context %q: %v", name, err)
	}
	c := Context{Name: name, Pos: pos(k)}
	in := fmt.Sprintf("context %q", name)
	if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
		return r.errf(v, "%s is empty: give it at least bootstrap-server", in)
	}
	err := r.mapping(v, in, func(k, v *yaml.Node) error {
		key := k.Value
		where := in + ": " + key
		switch key {
		case KeyLabel:
			s, err := r.text(v, where)
			if err != nil {
				return err
			}
			if err := CheckLabel(s); err != nil {
				return r.errf(v, "%s: %v", where, err)
			}
			c.Label = s
		case KeyColor:
			s, err := r.text(v, where)
			if err != nil {
				return err
			}
			if err := CheckColor(s); err != nil {
				return r.errf(v, "%s: %v", where, err)
			}
			c.Color = strings.ToLower(s)
		case KeyProtected:
			b, err := r.boolean(v, where)
			if err != nil {
				return err
			}
			c.Protected = b
		case KeyReadOnly:
			b, err := r.boolean(v, where)
			if err != nil {
				return err
			}
			c.ReadOnly, c.ReadOnlyPos = b, pos(v)
		case KeyProperties:
			props, err := r.properties(v, where)
			if err != nil {
				return err
			}
			c.Properties = props
		default:
			kind, ok := Flags[key]
			if !ok {
				return r.errf(k, "%s: unknown key%s", in+": "+quoteKey(key), suggest(key, Keys()))
			}
			s, err := r.setting(key, kind, v, where)
			if err != nil {
				return err
			}
			c.Settings = append(c.Settings, s)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if _, ok := c.Setting("command-config"); ok && len(c.Properties) > 0 {
		return r.errf(k, "%s has both command-config and properties: give the properties in one place", in)
	}
	if c.Label == "" {
		c.Label = c.Name
	}
	if s := r.secretIn(c); s != "" && r.f.Secret == "" {
		r.f.Secret = s
	}
	r.f.Contexts = append(r.f.Contexts, c)
	return nil
}

func quoteKey(k string) string { return fmt.Sprintf("%q", k) }

// CheckName refuses a context name that cannot be typed after :ctx or
// after the command's word in a confirmation.
func CheckName(name string) error {
	switch {
	case name == "":
		return errors.New("a context needs a name")
	case len(name) > 63:
		return errors.New("a context's name is at most 63 characters")
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return errors.New("a context's name holds only letters, digits, '-', '_' and '.'")
		}
	}
	return nil
}

// CheckLabel refuses a label the header cannot show on one line.
func CheckLabel(s string) error {
	if len([]rune(s)) > 40 {
		return errors.New("at most 40 characters")
	}
	for _, c := range s {
		if c < ' ' || c == 0x7f || (c >= 0x80 && c < 0xa0) {
			return errors.New("control characters are not allowed")
		}
	}
	return nil
}

// Colors are the colour names a context may take; #RGB and #RRGGBB too.
var Colors = []string{"red", "orange", "yellow", "green", "cyan", "blue", "magenta", "purple", "grey", "white"}

// CheckColor refuses a colour the header cannot draw.
func CheckColor(s string) error {
	s = strings.ToLower(s)
	if slices.Contains(Colors, s) || s == "gray" {
		return nil
	}
	if strings.HasPrefix(s, "#") && (len(s) == 4 || len(s) == 7) && strings.Trim(s[1:], "0123456789abcdef") == "" {
		return nil
	}
	return fmt.Errorf("want one of %s, or #RRGGBB; got %q", strings.Join(Colors, ", "), s)
}

// text is a scalar's text: strings and numbers (a user name of digits) are
// text, true/false and empty values are not.
func (r *reader) text(n *yaml.Node, where string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" || n.Tag == "!!bool" {
		return "", r.errf(n, "%s: want text, got %s", where, kindOf(n))
	}
	if err := checkExpansions(n.Value); err != nil {
		return "", r.errf(n, "%s: %v", where, err)
	}
	return n.Value, nil
}

func (r *reader) boolean(n *yaml.Node, where string) (bool, error) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		return false, r.errf(n, "%s: want true or false, got %s", where, kindOf(n))
	}
	var b bool
	if err := n.Decode(&b); err != nil {
		return false, r.errf(n, "%s: want true or false, got %q", where, n.Value)
	}
	return b, nil
}

func (r *reader) properties(n *yaml.Node, where string) ([]Property, error) {
	var out []Property
	err := r.mapping(n, where, func(k, v *yaml.Node) error {
		if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
			return r.errf(v, "%s: %s: want a value, got %s", where, k.Value, kindOf(v))
		}
		if err := checkExpansions(v.Value); err != nil {
			return r.errf(v, "%s: %s: %v", where, k.Value, err)
		}
		out = append(out, Property{Key: k.Value, Value: v.Value, Pos: pos(v)})
		return nil
	})
	return out, err
}

// secretIn names the first credential c writes out in the file: a
// properties value that holds one, not all of it from the environment.
func (r *reader) secretIn(c Context) string {
	for _, p := range c.Properties {
		if clientprops.SecretKey(p.Key) && !fromEnvOnly(p.Value) {
			return fmt.Sprintf("context %q properties %s (line %d)", c.Name, p.Key, p.Pos.Line)
		}
	}
	return ""
}

// fromEnvOnly: a JAAS line whose password and secrets all come from ${...}
// is no secret on disk. Any quoted value that is not an expansion is taken
// for one.
func fromEnvOnly(v string) bool {
	for _, key := range []string{"password=", "clientSecret=", "secret="} {
		for rest := v; ; {
			i := strings.Index(rest, key)
			if i < 0 {
				break
			}
			rest = rest[i+len(key):]
			val := strings.Trim(strings.Fields(rest + " ")[0], `";`)
			if !strings.HasPrefix(val, "${") {
				return false
			}
		}
	}
	if !strings.ContainsAny(v, "=") { // a bare value (ssl.key.password=...)
		return strings.HasPrefix(v, "${") && strings.HasSuffix(v, "}")
	}
	return true
}
