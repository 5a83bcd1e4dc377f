package ctxfile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"

	"github.com/txnscope/txnscope/internal/inputfile"
)

// Value is one key of a context being written: Text, Bool, a List or Pairs
// (in their order), whichever is set.
type Value struct {
	Key   string
	Text  string
	Bool  *bool
	List  []string
	Pairs [][2]string
}

// UseContext makes name the current context of the file at path.
func UseContext(path, name string) error {
	return edit(path, func(f *File, root *yaml.Node) error {
		if _, ok := f.Find(name); !ok {
			return fmt.Errorf("no context %q in %s%s", name, path, have(f.Names()))
		}
		set(root, keyCurrent, scalar(name))
		return nil
	})
}

// PutContext writes the context name with values into the file at path,
// replacing one of that name, creating the file (mode 0600, its directory
// 0700) if there is none. A first context becomes the current one.
func PutContext(path, name string, values []Value) error {
	if err := CheckName(name); err != nil {
		return fmt.Errorf("context %q: %v", name, err)
	}
	return edit(path, func(f *File, root *yaml.Node) error {
		m := &yaml.Node{Kind: yaml.MappingNode}
		for _, v := range values {
			m.Content = append(m.Content, scalar(v.Key), v.node())
		}
		ctxs := get(root, keyContexts)
		if ctxs == nil || ctxs.Kind != yaml.MappingNode {
			ctxs = &yaml.Node{Kind: yaml.MappingNode}
			set(root, keyContexts, ctxs)
		}
		set(ctxs, name, m)
		if f.Current == "" {
			set(root, keyCurrent, scalar(name))
		}
		return nil
	})
}

// DeleteContext removes the context name; current-context goes with it if
// it named it.
func DeleteContext(path, name string) error {
	return edit(path, func(f *File, root *yaml.Node) error {
		if _, ok := f.Find(name); !ok {
			return fmt.Errorf("no context %q in %s%s", name, path, have(f.Names()))
		}
		del(get(root, keyContexts), name)
		if f.Current == name {
			del(root, keyCurrent)
		}
		return nil
	})
}

func (v Value) node() *yaml.Node {
	switch {
	case v.Bool != nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: fmt.Sprint(*v.Bool)}
	case v.List != nil:
		n := &yaml.Node{Kind: yaml.SequenceNode}
		for _, s := range v.List {
			n.Content = append(n.Content, scalar(s))
		}
		return n
	case v.Pairs != nil:
		n := &yaml.Node{Kind: yaml.MappingNode}
		for _, p := range v.Pairs {
			n.Content = append(n.Content, scalar(p[0]), scalar(p[1]))
		}
		return n
	}
	return scalar(v.Text)
}

// scalar is text as a string, quoted where YAML would read it otherwise.
func scalar(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

func get(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func set(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			v.HeadComment, v.LineComment = m.Content[i+1].HeadComment, m.Content[i+1].LineComment
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, scalar(key), v)
}

func del(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
}

// edit reads the file at path (none: an empty one), lets change edit its
// document, checks the result reads back as a config file, and replaces the
// file with it in one rename: a reader sees the old file or the new one,
// never half of either. Comments are kept; the layout is YAML's own.
func edit(path string, change func(f *File, root *yaml.Node) error) error {
	var data []byte
	mode := fs.FileMode(0o600)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
		if data, err = inputfile.Read(path); err != nil {
			return &Error{Path: path, Msg: err.Error()}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := Parse(path, data)
	if err != nil {
		return err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return syntaxError(path, data, err)
	}
	if doc.Kind == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode}}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode { // an empty document: null
		*root = yaml.Node{Kind: yaml.MappingNode, HeadComment: root.HeadComment}
	}
	if err := change(f, root); err != nil {
		return err
	}
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	if _, err := Parse(path, out.Bytes()); err != nil {
		return fmt.Errorf("not written: the result would not read back: %w", err)
	}
	return replace(path, out.Bytes(), mode)
}

// replace writes data to path through a temporary file in its directory.
func replace(path string, data []byte, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".config-*.yaml")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // gone after the rename; there after a failure
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
