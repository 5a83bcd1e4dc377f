package cli

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/txnscope/txnscope/internal/clientprops"
	"github.com/txnscope/txnscope/internal/ctxfile"
	"github.com/txnscope/txnscope/internal/inputfile"
)

// contextFlags choose the config file and the context in it.
var contextFlags = []string{"context", "config"}

// ctxInfo is the context a command runs in (the zero value: none).
type ctxInfo struct {
	name, label, color string
	protected          bool
	// readOnly: the context forbids acting; readOnlyAt is where it says so.
	readOnly   bool
	readOnlyAt string
	// origins are where the context set a flag: "PATH:LINE:COL: context
	// "NAME"", for the flag's messages.
	origins map[string]string
	// props are client properties given inline, as a --command-config
	// file's entries; propsFrom names them in messages.
	props     []clientprops.Entry
	propsFrom string
}

// contextEnv is the environment the config file is read in.
type contextEnv struct {
	getenv func(string) string
	lookup func(string) (string, bool)
	home   string
}

func osContextEnv() contextEnv {
	return contextEnv{getenv: os.Getenv, lookup: os.LookupEnv, home: ctxfile.Home()}
}

// configPath is the config file's path: --config, TXNSCOPE_CONFIG, else
// the default; explicit says it was named (then it must exist).
func configPath(fs *pflag.FlagSet, env contextEnv) (path string, explicit bool, err error) {
	if fs.Changed("config") {
		p, _ := fs.GetString("config")
		if strings.TrimSpace(p) == "" {
			return "", true, usagef("--config is empty")
		}
		return p, true, nil
	}
	if p := env.getenv(ctxfile.EnvConfig); p != "" {
		return p, true, nil
	}
	return ctxfile.DefaultPath(env.getenv), false, nil
}

// loadConfig reads the config file; nil, nil when the default one is not
// there.
func loadConfig(fs *pflag.FlagSet, env contextEnv) (*ctxfile.File, string, error) {
	path, explicit, err := configPath(fs, env)
	if err != nil || path == "" {
		return nil, path, err
	}
	f, err := ctxfile.Load(path)
	switch {
	case errors.Is(err, ctxfile.ErrNotExist) && !explicit:
		return nil, path, nil
	case errors.Is(err, ctxfile.ErrNotExist):
		return nil, path, usagef("config file %s does not exist (txnscope config add NAME -b HOST:PORT creates it)", path)
	case err != nil:
		return nil, path, usageError{err.Error()}
	}
	return f, path, nil
}

// chosenContext is the context name the command line, the environment or
// the file's current-context picks ("" for none), and where it was picked.
func chosenContext(fs *pflag.FlagSet, f *ctxfile.File, env contextEnv) (name, from string) {
	if fs.Changed("context") {
		n, _ := fs.GetString("context")
		return n, "--context"
	}
	if n := env.getenv(ctxfile.EnvContext); n != "" {
		return n, ctxfile.EnvContext
	}
	if f != nil && f.Current != "" {
		return f.Current, f.At(f.CurrentPos) + ": current-context"
	}
	return "", ""
}

// applyContext lays the chosen context of the config file under the
// command line: a flag given wins, the context's value comes next, the
// flag's default last. Only the flags the command takes are set (a
// context's exporter address means nothing to list). The context's read-only
// cannot be undone on the command line.
func applyContext(fs *pflag.FlagSet, c *config, s spec, env contextEnv) error {
	if !slices.Contains(s.flags, "context") {
		return nil
	}
	f, path, err := loadConfig(fs, env)
	if err != nil {
		return err
	}
	if f != nil {
		c.configFile = path
	}
	if f != nil && f.Secret != "" {
		if perm, open := inputfile.Exposed(path); open {
			c.warnings = append(c.warnings, fmt.Sprintf("config file %s holds %s and %s", path, f.Secret, exposedNote(path, perm)))
		}
	}
	name, from := chosenContext(fs, f, env)
	if name == "" {
		return nil
	}
	if f == nil {
		return usagef("%s %q: there is no config file (%s); txnscope config add %s -b HOST:PORT creates it", from, clip(name), cmp.Or(path, "no HOME"), clip(name))
	}
	cx, ok := f.Find(name)
	if !ok {
		return usagef("%s %q: no such context in %s%s", from, clip(name), path, ctxfile.Have(f))
	}
	x, err := f.Expand(cx, env.lookup, env.home)
	if err != nil {
		return usageError{err.Error()}
	}
	return c.takeContext(fs, s, f, x)
}

// takeContext sets the flags x holds that the command takes and the
// command line left alone.
func (c *config) takeContext(fs *pflag.FlagSet, s spec, f *ctxfile.File, x ctxfile.Context) error {
	in := fmt.Sprintf("context %q", x.Name)
	c.ctx = ctxInfo{name: x.Name, label: x.Label, color: x.Color, protected: x.Protected, origins: map[string]string{}}
	for _, st := range x.Settings {
		if !slices.Contains(s.flags, st.Flag) || fs.Changed(st.Flag) {
			continue
		}
		at := f.At(st.Pos) + ": " + in
		for _, v := range st.Values {
			if err := fs.Set(st.Flag, v); err != nil {
				return usagef("%s: %s: bad value %q: %v", at, st.Flag, clip(v), err)
			}
		}
		c.ctx.origins[st.Flag] = at
	}
	if x.ReadOnly && slices.Contains(s.flags, "read-only") {
		c.ctx.readOnly, c.ctx.readOnlyAt = true, f.At(x.ReadOnlyPos)
		if fs.Changed("read-only") && !c.readOnly {
			return usagef("%s: %s is read-only, and --read-only=false does not undo that: edit the file to act on it", c.ctx.readOnlyAt, in)
		}
		c.readOnly = true
	}
	if len(x.Properties) > 0 && slices.Contains(s.flags, "command-config") && !fs.Changed("command-config") {
		for _, p := range x.Properties {
			c.ctx.props = append(c.ctx.props, clientprops.Entry{Key: p.Key, Value: p.Value, Line: p.Pos.Line})
		}
		c.ctx.propsFrom = fmt.Sprintf("%s: %s properties", f.Path, in)
	}
	return nil
}

// placed puts a message about a flag the context set at the context's
// place in the file: "--refresh 100ms is shorter..." becomes
// "PATH:7:14: context "prod": refresh 100ms is shorter...".
func (c *config) placed(err error) error {
	var ue usageError
	if !errors.As(err, &ue) || len(c.ctx.origins) == 0 {
		return err
	}
	flags := make([]string, 0, len(c.ctx.origins))
	for f := range c.ctx.origins {
		flags = append(flags, f)
	}
	sort.Slice(flags, func(i, j int) bool { return len(flags[i]) > len(flags[j]) }) // --flink-prefix before --flink
	for _, f := range flags {
		i := strings.Index(ue.msg, "--"+f)
		if i < 0 {
			continue
		}
		if end := i + 2 + len(f); end < len(ue.msg) && (ue.msg[end] == '-' || isLetter(ue.msg[end])) {
			continue
		}
		return usageError{c.ctx.origins[f] + ": " + ue.msg[:i] + ue.msg[i+2:]}
	}
	return err
}

func isLetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }

// confirmPhrase is what the operator types to send: the command's word, and
// on a protected context its name after it.
func (c config) confirmPhrase(word string) string {
	if c.ctx.protected {
		return word + " " + c.ctx.name
	}
	return word
}
