package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/txnscope/txnscope/internal/clientprops"
	"github.com/txnscope/txnscope/internal/ctxfile"
	"github.com/txnscope/txnscope/internal/escape"
)

// config manages the config file's contexts: txnscope config list | show
// [NAME] | use NAME | add NAME [flags] | delete NAME | validate [NAME].
const cmdConfig command = "config"

// configVerbs are config's subcommands, with the flags each takes (besides
// --config) and whether it takes a NAME: 1 required, 0 optional, -1 none.
var configVerbs = []struct {
	verb  string
	name  int
	flags []string
	what  string
}{
	{"list", -1, []string{"output"}, "the contexts, the current one marked *"},
	{"show", 0, nil, "one context (default: the current), credentials masked"},
	{"use", 1, nil, "make NAME the current context"},
	{"add", 1, configAddFlags, "write NAME from the flags given (replacing one of that name); the first becomes current"},
	{"delete", 1, nil, "remove NAME"},
	{"validate", 0, nil, "read each context (or NAME) as the UI and the exporter would, files and all"},
}

// configAddFlags are what config add can write into a context.
var configAddFlags = slices.Concat(clusterFlags[len(contextFlags):], uiFlags, []string{"listen", "max-id-series", "label", "color", "protected"})

func configFlagNames() []string {
	names := []string{"config"}
	for _, v := range configVerbs {
		for _, f := range v.flags {
			if !slices.Contains(names, f) {
				names = append(names, f)
			}
		}
	}
	return names
}

// checkConfig refuses a subcommand, a NAME or a flag the subcommand does
// not take.
func checkConfig(c *config, given func(string) bool) error {
	var verbs []string
	for _, v := range configVerbs {
		verbs = append(verbs, v.verb)
	}
	i := slices.IndexFunc(configVerbs, func(v struct {
		verb  string
		name  int
		flags []string
		what  string
	}) bool {
		return v.verb == c.arg
	})
	if i < 0 {
		if c.arg == "" {
			return usagef("config needs a subcommand: %s", strings.Join(verbs, ", "))
		}
		return usagef("unknown config subcommand %q (want %s)", clip(c.arg), strings.Join(verbs, ", "))
	}
	v := configVerbs[i]
	switch {
	case v.name == 1 && c.arg2 == "":
		return usagef("config %s needs the context's NAME", v.verb)
	case v.name == -1 && c.arg2 != "":
		return usagef("unexpected argument %q after config %s", clip(c.arg2), v.verb)
	case c.arg2 != "":
		if err := ctxfile.CheckName(c.arg2); err != nil {
			return usagef("bad context name %q: %v", clip(c.arg2), err)
		}
	}
	for _, f := range configFlagNames() {
		if f != "config" && given(f) && !slices.Contains(v.flags, f) {
			return usagef("--%s does not apply to config %s", f, v.verb)
		}
	}
	if c.ctx.label != "" {
		if err := ctxfile.CheckLabel(c.ctx.label); err != nil {
			return usagef("bad --label: %v", err)
		}
	}
	if c.ctx.color != "" {
		if err := ctxfile.CheckColor(c.ctx.color); err != nil {
			return usagef("bad --color: %v", err)
		}
	}
	return nil
}

func runConfig(_ context.Context, c config, std Stdio) error {
	path := c.configFile
	if path == "" {
		return usagef("no config file: set HOME, XDG_CONFIG_HOME or " + ctxfile.EnvConfig + ", or pass --config PATH")
	}
	if c.arg == "add" {
		if err := ctxfile.PutContext(path, c.arg2, c.added); err != nil {
			return usageError{err.Error()}
		}
		return configDone(std.Out, "context %s written to %s", c.arg2, path)
	}
	f, err := ctxfile.Load(path)
	if errors.Is(err, ctxfile.ErrNotExist) {
		return usagef("config file %s does not exist: txnscope config add NAME -b HOST:PORT creates it", path)
	}
	if err != nil {
		return usageError{err.Error()}
	}
	name := c.arg2
	if name == "" {
		name = f.Current
	}
	if name != "" && c.arg != "list" {
		if _, ok := f.Find(name); !ok {
			return usagef("no context %q in %s%s", name, path, ctxfile.Have(f))
		}
	}
	switch c.arg {
	case "list":
		return listContexts(std.Out, f, c.output == "json")
	case "show":
		if name == "" {
			return usagef("config show needs a NAME: %s has no current-context", path)
		}
		cx, _ := f.Find(name)
		_, err := io.WriteString(std.Out, showContext(f, cx))
		return err
	case "use":
		if err := ctxfile.UseContext(path, name); err != nil {
			return usageError{err.Error()}
		}
		return configDone(std.Out, "current context: %s", name)
	case "delete":
		if err := ctxfile.DeleteContext(path, name); err != nil {
			return usageError{err.Error()}
		}
		return configDone(std.Out, "context %s deleted from %s", name, path)
	}
	return validateContexts(std, f, c.arg2)
}

func configDone(w io.Writer, format string, args ...any) error {
	_, err := fmt.Fprintln(w, escape.Text(fmt.Sprintf(format, args...)))
	return err
}

// validateContexts reads each context as the UI and the exporter would (the
// files it names read, its flags checked), and says which fail and why.
func validateContexts(std Stdio, f *ctxfile.File, only string) error {
	bad := 0
	for _, cx := range f.Contexts {
		if only != "" && cx.Name != only {
			continue
		}
		var problem error
		for _, cmd := range [][]string{nil, {string(cmdExporter)}} {
			args := append(slices.Clone(cmd), "--config", f.Path, "--context", cx.Name)
			if _, err := parse(args); err != nil {
				problem = err
				break
			}
		}
		if problem != nil {
			bad++
			fmt.Fprintf(std.Out, "%s: %s\n", escape.Text(cx.Name), escape.Line(problem.Error()))
			continue
		}
		fmt.Fprintf(std.Out, "%s: ok\n", escape.Text(cx.Name))
	}
	if bad > 0 {
		return fmt.Errorf("%d of the contexts in %s cannot be used as they are", bad, f.Path)
	}
	return nil
}

// listContexts is config list: one line per context.
func listContexts(w io.Writer, f *ctxfile.File, asJSON bool) error {
	type row struct {
		Name      string `json:"name"`
		Current   bool   `json:"current"`
		Label     string `json:"label"`
		Color     string `json:"color,omitempty"`
		Bootstrap string `json:"bootstrap,omitempty"`
		ReadOnly  bool   `json:"read_only"`
		Protected bool   `json:"protected"`
	}
	rows := []row{}
	var table [][]string
	for _, cx := range f.Contexts {
		r := row{Name: cx.Name, Current: cx.Name == f.Current, Label: cx.Label, Color: cx.Color, ReadOnly: cx.ReadOnly, Protected: cx.Protected}
		if s, ok := cx.Setting("bootstrap-server"); ok {
			r.Bootstrap = s.Values[0]
		} else if len(cx.Properties) > 0 {
			r.Bootstrap = "(properties)"
		} else if _, ok := cx.Setting("command-config"); ok {
			r.Bootstrap = "(command-config)"
		}
		rows = append(rows, r)
		mark, notes := " ", []string{}
		if r.Current {
			mark = "*"
		}
		if r.Protected {
			notes = append(notes, "protected")
		}
		if r.ReadOnly {
			notes = append(notes, "read-only")
		}
		table = append(table, []string{mark, r.Name, r.Label, r.Bootstrap, strings.Join(notes, ",")})
	}
	return out{w: w, json: asJSON}.emit(map[string]any{"file": f.Path, "current": f.Current, "contexts": rows},
		[]string{"", "NAME", "LABEL", "BOOTSTRAP", "GUARDS"}, table)
}

// showContext is config show: the context's keys as written, credentials
// masked (a ${VARIABLE} is shown: it is no secret).
func showContext(f *ctxfile.File, cx *ctxfile.Context) string {
	var b strings.Builder
	line := func(format string, args ...any) { b.WriteString(escape.Text(fmt.Sprintf(format, args...)) + "\n") }
	cur := ""
	if cx.Name == f.Current {
		cur = " (current)"
	}
	line("context %s%s, %s", cx.Name, cur, f.At(cx.Pos))
	line("  label: %s", cx.Label)
	if cx.Color != "" {
		line("  color: %s", cx.Color)
	}
	line("  protected: %t", cx.Protected)
	line("  read-only: %t", cx.ReadOnly)
	for _, s := range cx.Settings {
		line("  %s: %s", s.Flag, strings.Join(s.Values, ", "))
	}
	if len(cx.Properties) > 0 {
		line("  properties:")
		for _, p := range cx.Properties {
			line("    %s: %s", p.Key, maskProperty(p.Key, p.Value))
		}
	}
	return b.String()
}

var jaasSecret = regexp.MustCompile(`(?i)((?:password|secret|clientSecret)\s*=\s*)("[^"]*"|[^\s;]+)`)

// maskProperty hides the credentials in a property's value.
func maskProperty(key, value string) string {
	if !clientprops.SecretKey(key) {
		return value
	}
	if key != "sasl.jaas.config" {
		if strings.HasPrefix(value, "${") {
			return value
		}
		return "****"
	}
	return jaasSecret.ReplaceAllStringFunc(value, func(m string) string {
		sub := jaasSecret.FindStringSubmatch(m)
		if strings.HasPrefix(strings.Trim(sub[2], `"`), "${") {
			return m
		}
		return sub[1] + `"****"`
	})
}

// addedValues are the values config add writes: the flags given, with
// paths made absolute (a relative one in the file is relative to the file).
func addedValues(fs *pflag.FlagSet, c *config) []ctxfile.Value {
	var vals []ctxfile.Value
	yes := true
	if c.ctx.label != "" {
		vals = append(vals, ctxfile.Value{Key: ctxfile.KeyLabel, Text: c.ctx.label})
	}
	if c.ctx.color != "" {
		vals = append(vals, ctxfile.Value{Key: ctxfile.KeyColor, Text: strings.ToLower(c.ctx.color)})
	}
	if c.ctx.protected {
		vals = append(vals, ctxfile.Value{Key: ctxfile.KeyProtected, Bool: &yes})
	}
	if c.readOnly {
		vals = append(vals, ctxfile.Value{Key: ctxfile.KeyReadOnly, Bool: &yes})
	}
	fs.VisitAll(func(fl *pflag.Flag) {
		kind, ok := ctxfile.Flags[fl.Name]
		if !ok || !fs.Changed(fl.Name) {
			return
		}
		v := ctxfile.Value{Key: fl.Name}
		switch kind {
		case ctxfile.Bool:
			b := fl.Value.String() == "true"
			v.Bool = &b
		case ctxfile.List:
			v.List, _ = fs.GetStringArray(fl.Name)
		case ctxfile.Pairs, ctxfile.Locations:
			kvs, _ := fs.GetStringArray(fl.Name)
			for _, kv := range kvs {
				k, val, _ := strings.Cut(kv, "=")
				if kind == ctxfile.Locations && !strings.Contains(val, "://") {
					val = absPath(val)
				}
				v.Pairs = append(v.Pairs, [2]string{k, val})
			}
		case ctxfile.Path:
			v.Text = absPath(fl.Value.String())
		default:
			v.Text = fl.Value.String()
		}
		vals = append(vals, v)
	})
	return vals
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
