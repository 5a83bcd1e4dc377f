package ctxfile

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Kind is the shape of a flag's value in the file.
type Kind int

const (
	Text      Kind = iota
	Path           // a file: relative to the config file's directory, ~/ the home
	Bool           // true or false
	Duration       // 2s, 1m30s
	Int            // a whole number
	Servers        // HOST:PORT text, or a list of them
	List           // a list (one text is a list of one)
	Pairs          // a mapping KEY: VALUE, the flag's KEY=VALUE
	Locations      // Pairs whose values are checkpoint locations (a relative path is a Path)
)

// Flags are the flags a context may set, by the flag's name (the key in the
// file is the flag's name), with the shape of their values.
var Flags = map[string]Kind{
	"bootstrap-server": Servers, "timeout": Duration, "command-config": Path,
	"tls": Bool, "tls-ca": Path, "tls-cert": Path, "tls-key": Path, "tls-server-name": Text, "tls-insecure-skip-verify": Bool,
	"sasl-mechanism": Text, "sasl-username": Text, "sasl-password-file": Path,
	"refresh": Duration, "audit-log": Path, "checkpoint-interval": Duration, "history": Text,
	"flink": List, "flink-prefix": Pairs, "flink-checkpoints": Locations,
	"s3-endpoint": Text, "s3-path-style": Bool, "s3-region": Text,
	"listen": Text, "max-id-series": Int,
}

// Keys are every key a context may hold, sorted.
func Keys() []string {
	ks := slices.Collect(maps.Keys(Flags))
	ks = append(ks, KeyLabel, KeyColor, KeyProtected, KeyReadOnly, KeyProperties)
	slices.Sort(ks)
	return ks
}

// setting reads the value of flag (of kind) into its flag values.
func (r *reader) setting(flag string, kind Kind, v *yaml.Node, where string) (Setting, error) {
	s := Setting{Flag: flag, Pos: pos(v)}
	scalar := func(n *yaml.Node) (string, error) {
		t, err := r.text(n, where)
		if err != nil {
			return "", err
		}
		if !strings.Contains(t, "${") {
			if err := checkValue(kind, t); err != nil {
				return "", r.errf(n, "%s: %v", where, err)
			}
		}
		return t, nil
	}
	switch kind {
	case Bool:
		b, err := r.boolean(v, where)
		if err != nil {
			return s, err
		}
		s.Values = []string{strconv.FormatBool(b)}
	case Servers, List:
		items := []*yaml.Node{v}
		if v.Kind == yaml.SequenceNode {
			items = v.Content
			if len(items) == 0 {
				return s, r.errf(v, "%s: the list is empty", where)
			}
		}
		for _, it := range items {
			t, err := scalar(deref(it))
			if err != nil {
				return s, err
			}
			s.Values = append(s.Values, t)
		}
		if kind == Servers {
			s.Values = []string{strings.Join(s.Values, ",")}
		}
	case Pairs, Locations:
		err := r.mapping(v, where, func(k, v *yaml.Node) error {
			t, err := scalar(v)
			if err != nil {
				return err
			}
			if k.Value == "" {
				return r.errf(k, "%s: a key is empty", where)
			}
			s.Values = append(s.Values, k.Value+"="+t)
			return nil
		})
		if err != nil {
			return s, err
		}
		if len(s.Values) == 0 {
			return s, r.errf(v, "%s: the mapping is empty", where)
		}
	default:
		t, err := scalar(v)
		if err != nil {
			return s, err
		}
		s.Values = []string{t}
	}
	return s, nil
}

// checkValue refuses text that is not of kind; the command line checks the
// bounds (a refresh under 500ms) as it does its flags'.
func checkValue(kind Kind, t string) error {
	switch kind {
	case Duration:
		if _, err := time.ParseDuration(t); err != nil {
			return fmt.Errorf("want a duration like 2s or 1m30s, got %q", t)
		}
	case Int:
		if _, err := strconv.Atoi(t); err != nil {
			return fmt.Errorf("want a whole number, got %q", t)
		}
	case Text, Path, Servers, List:
		if strings.TrimSpace(t) == "" {
			return errors.New("is empty")
		}
	}
	return nil
}

// checkExpansions refuses a ${ that is not closed or names nothing.
func checkExpansions(t string) error {
	_, err := expand(t, func(string) (string, bool) { return "", true })
	return err
}

// expand replaces ${NAME} with NAME's value in the environment; $$ is a $.
// A $ before anything else stays as it is (passwords hold them).
func expand(t string, lookup func(string) (string, bool)) (string, error) {
	if !strings.Contains(t, "$") {
		return t, nil
	}
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		if t[i] != '$' || i+1 == len(t) {
			b.WriteByte(t[i])
			continue
		}
		switch t[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '{':
			end := strings.IndexByte(t[i:], '}')
			if end < 0 {
				return "", errors.New("${ is not closed by }")
			}
			name := t[i+2 : i+end]
			if !envName(name) {
				return "", fmt.Errorf("${%s}: not an environment variable's name", name)
			}
			v, ok := lookup(name)
			if !ok {
				return "", fmt.Errorf("${%s} is not set in the environment", name)
			}
			b.WriteString(v)
			i += end
		default:
			b.WriteByte('$')
		}
	}
	return b.String(), nil
}

func envName(s string) bool {
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	return strings.Trim(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") == ""
}

// Expand is c as the command line takes it: ${NAME} replaced from the
// environment (lookup, os.LookupEnv's shape), ~/ with home and relative
// paths made relative to the file's directory. An unset variable is an
// error at its place.
func (f *File) Expand(c *Context, lookup func(string) (string, bool), home string) (Context, error) {
	out := *c
	out.Settings = slices.Clone(c.Settings)
	dir := filepath.Dir(f.Path)
	var err error
	if out.Label, err = expand(c.Label, lookup); err != nil {
		return out, f.Errorf(c.Pos, "context %q: label: %v", c.Name, err)
	}
	for i, s := range out.Settings {
		kind := Flags[s.Flag]
		vals := slices.Clone(s.Values)
		for j, v := range vals {
			key, val := "", v
			if kind == Pairs || kind == Locations {
				key, val, _ = strings.Cut(v, "=")
			}
			if val, err = expand(val, lookup); err != nil {
				return out, f.Errorf(s.Pos, "context %q: %s: %v", c.Name, s.Flag, err)
			}
			if err := checkValue(kind, val); err != nil {
				return out, f.Errorf(s.Pos, "context %q: %s: %v", c.Name, s.Flag, err)
			}
			switch {
			case kind == Path, kind == Locations && !strings.Contains(val, "://"):
				val = resolvePath(val, dir, home)
			}
			if key != "" {
				val = key + "=" + val
			}
			vals[j] = val
		}
		out.Settings[i].Values = vals
	}
	out.Properties = slices.Clone(c.Properties)
	for i, p := range out.Properties {
		if out.Properties[i].Value, err = expand(p.Value, lookup); err != nil {
			return out, f.Errorf(p.Pos, "context %q: properties: %s: %v", c.Name, p.Key, err)
		}
	}
	return out, nil
}

// resolvePath: ~/x is in home, a relative path in dir.
func resolvePath(p, dir, home string) string {
	switch {
	case p == "~" && home != "":
		return home
	case strings.HasPrefix(p, "~/") && home != "":
		return filepath.Join(home, p[2:])
	case filepath.IsAbs(p):
		return p
	}
	return filepath.Join(dir, p)
}

// Home is the user's home directory for ~/ ("" when unknown).
func Home() string {
	h, _ := os.UserHomeDir()
	return h
}

// suggest is ", did you mean X?" for the known name nearest to got, or "".
func suggest(got string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if d := distance(strings.ToLower(got), k); d < bestD {
			best, bestD = k, d
		}
	}
	if aliases[got] != "" {
		best = aliases[got]
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", best)
}

// aliases are other tools' names for a key.
var aliases = map[string]string{
	"bootstrap": "bootstrap-server", "brokers": "bootstrap-server", "bootstrap_servers": "bootstrap-server",
	"bootstrap.servers": "bootstrap-server", "seed_brokers": "bootstrap-server", "readonly": "read-only", "read_only": "read-only",
	"colour": "color", "current": "current-context", "context": "current-context", "current_context": "current-context", "currentContext": "current-context",
	"properties-file": "command-config", "command_config": "command-config",
}

// distance is the Levenshtein distance of a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
