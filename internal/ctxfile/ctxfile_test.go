package ctxfile

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const good = `# two clusters
current-context: staging
contexts:
  prod-eu:
    label: PROD eu-west-1
    color: red
    protected: true
    bootstrap-server: [b1.prod:9092, b2.prod:9092]
    command-config: prod.properties
    refresh: 5s
    flink: http://jm.prod:8081
    flink-prefix:
      orders-job: orders
    flink-checkpoints:
      orders: s3://ckpt/orders
      billing: ckpt/billing
    checkpoint-interval: 1m
  staging:
    bootstrap-server: staging:9092
    read-only: true
    max-id-series: 50
    properties:
      security.protocol: SASL_SSL
      sasl.mechanism: PLAIN
      sasl.jaas.config: org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="${STAGING_PW}";
`

func TestParseGood(t *testing.T) {
	f, err := Parse("/etc/txn/config.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if f.Current != "staging" || !slices.Equal(f.Names(), []string{"prod-eu", "staging"}) {
		t.Fatalf("current %q, names %v", f.Current, f.Names())
	}
	p, _ := f.Find("prod-eu")
	if p.Label != "PROD eu-west-1" || p.Color != "red" || !p.Protected || p.ReadOnly {
		t.Errorf("prod-eu: %+v", p)
	}
	want := map[string][]string{
		"bootstrap-server":  {"b1.prod:9092,b2.prod:9092"},
		"command-config":    {"prod.properties"},
		"refresh":           {"5s"},
		"flink":             {"http://jm.prod:8081"},
		"flink-prefix":      {"orders-job=orders"},
		"flink-checkpoints": {"orders=s3://ckpt/orders", "billing=ckpt/billing"},
	}
	for flag, vals := range want {
		s, ok := p.Setting(flag)
		if !ok || !slices.Equal(s.Values, vals) {
			t.Errorf("%s = %v, want %v", flag, s.Values, vals)
		}
	}
	if s, _ := p.Setting("refresh"); s.Pos != (Pos{10, 14}) {
		t.Errorf("refresh at %v, want 10:14", s.Pos)
	}
	s, _ := f.Find("staging")
	if s.Label != "staging" || !s.ReadOnly || len(s.Properties) != 3 || s.Properties[1].Pos.Line != 24 {
		t.Errorf("staging: %+v", s)
	}
	if f.Secret != "" {
		t.Errorf("a password from ${STAGING_PW} is no secret in the file, got %q", f.Secret)
	}

	x, err := f.Expand(p, func(string) (string, bool) { return "", false }, "/home/op")
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := x.Setting("command-config"); s.Values[0] != "/etc/txn/prod.properties" {
		t.Errorf("a relative path is in the file's directory: %v", s.Values)
	}
	if s, _ := x.Setting("flink-checkpoints"); !slices.Equal(s.Values, []string{"orders=s3://ckpt/orders", "billing=/etc/txn/ckpt/billing"}) {
		t.Errorf("checkpoints: %v", s.Values)
	}
	st, _ := f.Find("staging")
	if _, err := f.Expand(st, func(string) (string, bool) { return "", false }, ""); err == nil ||
		err.Error() != `/etc/txn/config.yaml:25:25: context "staging": properties: sasl.jaas.config: ${STAGING_PW} is not set in the environment` {
		t.Errorf("unset variable: %v", err)
	}
	xs, err := f.Expand(st, func(k string) (string, bool) { return "pa$$word", k == "STAGING_PW" }, "")
	if err != nil || !strings.Contains(xs.Properties[2].Value, `password="pa$$word"`) {
		t.Errorf("expanded once, its own $ kept: %v %v", xs.Properties, err)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"unknown top key", "contexts: {}\ncurrent: x\n", `c.yaml:2:1: unknown key "current" (did you mean current-context?)`},
		{"unknown context key", "contexts:\n  prod:\n    bootstrap: a:1\n", `c.yaml:3:5: context "prod": "bootstrap": unknown key (did you mean bootstrap-server?)`},
		{"misspelt flag", "contexts:\n  prod:\n    refesh: 2s\n", `c.yaml:3:5: context "prod": "refesh": unknown key (did you mean refresh?)`},
		{"wrong type duration", "contexts:\n  prod:\n    refresh: fast\n", `c.yaml:3:14: context "prod": refresh: want a duration like 2s or 1m30s, got "fast"`},
		{"number for duration", "contexts:\n  prod:\n    timeout: 10\n", `c.yaml:3:14: context "prod": timeout: want a duration like 2s or 1m30s, got "10"`},
		{"wrong type bool", "contexts:\n  prod:\n    protected: yes\n", `c.yaml:3:16: context "prod": protected: want true or false, got "yes"`},
		{"wrong type int", "contexts:\n  prod:\n    max-id-series: lots\n", `c.yaml:3:20: context "prod": max-id-series: want a whole number, got "lots"`},
		{"list for text", "contexts:\n  prod:\n    sasl-username: [a, b]\n", `c.yaml:3:20: context "prod": sasl-username: want text, got a list`},
		{"empty value", "contexts:\n  prod:\n    refresh:\n", `c.yaml:3:13: context "prod": refresh: want text, got empty`},
		{"duplicate context", "contexts:\n  prod:\n    refresh: 2s\n  prod:\n    refresh: 3s\n", `c.yaml:4:3: "prod" is given twice in contexts (first at line 2)`},
		{"duplicate key", "contexts:\n  prod:\n    refresh: 2s\n    refresh: 3s\n", `c.yaml:4:5: "refresh" is given twice in context "prod" (first at line 3)`},
		{"unknown current", "current-context: prd\ncontexts:\n  prod:\n    refresh: 2s\n", `c.yaml:1:18: current-context "prd" is not a context of this file (it has prod)`},
		{"bad name", "contexts:\n  prod eu:\n    refresh: 2s\n", `c.yaml:2:3: context "prod eu": a context's name holds only letters, digits, '-', '_' and '.'`},
		{"escape in a label", "contexts:\n  prod:\n    label: \"\\e[2Jprod\"\n", `c.yaml:3:12: context "prod": label: control characters are not allowed`},
		{"bad colour", "contexts:\n  prod:\n    color: rouge\n", `c.yaml:3:12: context "prod": color: want one of red,`},
		{"both properties", "contexts:\n  prod:\n    command-config: a\n    properties: {a: b}\n", `c.yaml:2:3: context "prod" has both command-config and properties`},
		{"contexts a list", "contexts:\n  - name: prod\n", `c.yaml:2:3: contexts must be a mapping (key: value lines), not a list`},
		{"unclosed expansion", "contexts:\n  prod:\n    sasl-username: ${USER\n", `c.yaml:3:20: context "prod": sasl-username: ${ is not closed by }`},
		{"merge key", "base: &b\n  refresh: 2s\ncontexts:\n  prod:\n    <<: *b\n", `c.yaml:1:1: unknown key "base"`},
		{"merge key in context", "contexts:\n  prod:\n    <<: {refresh: 2s}\n", `c.yaml:3:5: merge keys (<<) are not supported`},
		{"syntax", "contexts:\n  prod:\n    refresh: 2s\n   timeout: 1s\n", `c.yaml:4: `},
		{"no line from the parser", "contexts:\n  prod:\n    label: a: b\n", `c.yaml:3: mapping values are not allowed in this context`},
		{"two documents", "contexts: {}\n---\ncontexts: {}\n", `c.yaml:2: a second YAML document (---)`},
		{"tab", "contexts:\n\tprod: {}\n", `c.yaml:2: found character that cannot start any token`},
		{"empty context", "contexts:\n  prod:\n", `c.yaml:2:8: context "prod" is empty`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("c.yaml", []byte(tc.text))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("got %v\nwant %s…", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("more than one line: %q", err)
			}
		})
	}
}

func TestParseEmptyAndSecret(t *testing.T) {
	for _, text := range []string{"", "# nothing yet\n", "contexts:\n"} {
		f, err := Parse("c.yaml", []byte(text))
		if err != nil || len(f.Contexts) != 0 {
			t.Errorf("%q: %v %v", text, f, err)
		}
	}
	f, err := Parse("c.yaml", []byte("contexts:\n  p:\n    properties:\n      sasl.jaas.config: x required password=\"hunter2\";\n"))
	if err != nil || f.Secret != `context "p" properties sasl.jaas.config (line 4)` {
		t.Errorf("secret: %q %v", f.Secret, err)
	}
}

func TestDefaultPath(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, tc := range []struct {
		env  func(string) string
		want string
	}{
		{env("XDG_CONFIG_HOME", "/x", "HOME", "/h"), "/x/txnscope/config.yaml"},
		{env("XDG_CONFIG_HOME", "rel", "HOME", "/h"), "/h/.config/txnscope/config.yaml"},
		{env("HOME", "/h"), "/h/.config/txnscope/config.yaml"},
		{env(), ""},
	} {
		if got := DefaultPath(tc.env); got != tc.want {
			t.Errorf("got %q want %q", got, tc.want)
		}
	}
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "config.yaml")
	yes := true
	if err := PutContext(path, "staging", []Value{{Key: "bootstrap-server", Text: "127.0.0.1:9092"}, {Key: "read-only", Bool: &yes}}); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	if err := PutContext(path, "prod", []Value{{Key: "bootstrap-server", Text: "127.0.0.1:9093"}, {Key: "protected", Bool: &yes},
		{Key: "flink-prefix", Pairs: [][2]string{{"job", "p"}}}, {Key: "flink", List: []string{"http://a:1"}}}); err != nil {
		t.Fatal(err)
	}
	// A comment the operator adds survives the next write.
	data, _ := os.ReadFile(path)
	if err := os.WriteFile(path, append([]byte("# mine\n"), data...), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := UseContext(path, "prod"); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := f.Find("prod")
	if f.Current != "prod" || !p.Protected || len(f.Contexts) != 2 {
		t.Fatalf("after use: %+v", f)
	}
	data, _ = os.ReadFile(path)
	if !strings.Contains(string(data), "# mine") {
		t.Errorf("comment lost:\n%s", data)
	}
	if err := UseContext(path, "nope"); err == nil || !strings.Contains(err.Error(), `no context "nope"`) {
		t.Errorf("use of a missing context: %v", err)
	}
	if err := DeleteContext(path, "prod"); err != nil {
		t.Fatal(err)
	}
	f, _ = Load(path)
	if f.Current != "" || !slices.Equal(f.Names(), []string{"staging"}) {
		t.Errorf("after delete: %+v", f)
	}
	if _, err := Load(filepath.Join(dir, "none.yaml")); !errors.Is(err, ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
}
