package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/conn"
)

// contextsFile is a config file of three contexts in dir, and its path.
func contextsFile(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "config.yaml")
	text := `current-context: staging
contexts:
  staging:
    bootstrap-server: staging:9092
    refresh: 5s
    listen: 127.0.0.1:9999
    max-id-series: 3
  prod:
    label: PROD eu
    color: red
    protected: true
    read-only: false
    bootstrap-server: [p1:9092, p2:9092]
    timeout: 4s
    checkpoint-interval: 1m
    properties:
      security.protocol: SASL_PLAINTEXT
      sasl.mechanism: PLAIN
      sasl.jaas.config: org.apache.kafka.common.security.plain.PlainLoginModule required username="ops" password="${PROD_PW}";
  audit:
    bootstrap-server: audit:9092
    read-only: true
  slow:
    bootstrap-server: slow:9092
    refresh: 100ms
  nojm:
    bootstrap-server: nojm:9092
    flink-prefix:
      orders: orders
`
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func envOf(kv ...string) contextEnv {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return contextEnv{
		getenv: func(k string) string { return m[k] },
		lookup: func(k string) (string, bool) { v, ok := m[k]; return v, ok },
		home:   "/home/op",
	}
}

// TestContextPrecedence: a flag given wins over the context, the context
// over the default; --context over TXNSCOPE_CONTEXT over current-context;
// --config over TXNSCOPE_CONFIG over the default path.
func TestContextPrecedence(t *testing.T) {
	dir := t.TempDir()
	path := contextsFile(t, dir)
	xdg := t.TempDir()
	if err := os.MkdirAll(filepath.Join(xdg, "txnscope"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path, filepath.Join(xdg, "txnscope", "config.yaml")); err != nil {
		t.Fatal(err)
	}
	atDefault := envOf("XDG_CONFIG_HOME", xdg, "PROD_PW", "s3cret")
	path = contextsFile(t, dir) // the same text, named explicitly
	for _, tc := range []struct {
		name string
		args []string
		env  contextEnv
		// want checks the parsed config.
		ctx       string
		bootstrap string
		refresh   time.Duration
		timeout   time.Duration
		readOnly  bool
		listen    string
		series    int
	}{
		{"no file: defaults", nil, envOf(), "", "localhost:9092", 2 * time.Second, 10 * time.Second, false, "", 0},
		{"current-context", nil, atDefault, "staging", "staging:9092", 5 * time.Second, 10 * time.Second, false, "", 0},
		{"a flag wins over the context", []string{"-b", "cli:9092", "--refresh", "1s"}, atDefault, "staging", "cli:9092", time.Second, 10 * time.Second, false, "", 0},
		{"--context wins over current", []string{"--context", "prod"}, atDefault, "prod", "p1:9092,p2:9092", 2 * time.Second, 4 * time.Second, false, "", 0},
		{"TXNSCOPE_CONTEXT wins over current", nil, envOf("XDG_CONFIG_HOME", xdg, "TXNSCOPE_CONTEXT", "audit"), "audit", "audit:9092", 2 * time.Second, 10 * time.Second, true, "", 0},
		{"--context wins over TXNSCOPE_CONTEXT", []string{"--context", "staging"}, envOf("XDG_CONFIG_HOME", xdg, "TXNSCOPE_CONTEXT", "audit"), "staging", "staging:9092", 5 * time.Second, 10 * time.Second, false, "", 0},
		{"--config wins over TXNSCOPE_CONFIG", []string{"--config", path, "--context", "audit"}, envOf("TXNSCOPE_CONFIG", "/nonexistent.yaml"), "audit", "audit:9092", 2 * time.Second, 10 * time.Second, true, "", 0},
		{"TXNSCOPE_CONFIG wins over the default", []string{"--context", "audit"}, envOf("TXNSCOPE_CONFIG", path, "XDG_CONFIG_HOME", "/nonexistent"), "audit", "audit:9092", 2 * time.Second, 10 * time.Second, true, "", 0},
		{"exporter takes listen and the cap", []string{"exporter"}, atDefault, "staging", "staging:9092", 5 * time.Second, 10 * time.Second, false, "127.0.0.1:9999", 3},
		{"exporter: flags still win", []string{"exporter", "--listen", ":0", "--max-id-series", "0"}, atDefault, "staging", "staging:9092", 5 * time.Second, 10 * time.Second, false, ":0", 0},
		{"read-only context", []string{"--context", "audit", "--read-only"}, atDefault, "audit", "audit:9092", 2 * time.Second, 10 * time.Second, true, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseIn(tc.args, tc.env)
			if err != nil {
				t.Fatal(err)
			}
			if c.ctx.name != tc.ctx || strings.Join(c.bootstrap, ",") != tc.bootstrap || c.refresh != tc.refresh || c.timeout != tc.timeout || c.readOnly != tc.readOnly {
				t.Errorf("context %q bootstrap %v refresh %v timeout %v read-only %v", c.ctx.name, c.bootstrap, c.refresh, c.timeout, c.readOnly)
			}
			if tc.listen != "" && (c.listen != tc.listen || c.maxIDSeries != tc.series) {
				t.Errorf("listen %q series %d", c.listen, c.maxIDSeries)
			}
		})
	}

	// The context's inline properties, its password from the environment.
	c, err := parseIn([]string{"--context", "prod"}, atDefault)
	if err != nil {
		t.Fatal(err)
	}
	if sa := c.security.SASL; sa == nil || sa.Mechanism != conn.Plain || sa.Username != "ops" || sa.Password != "s3cret" {
		t.Errorf("security from the context's properties: %+v", c.security.SASL)
	}
	if !c.ctx.protected || c.ctx.label != "PROD eu" || c.ctx.color != "red" || c.checkpointInterval != time.Minute {
		t.Errorf("prod: %+v", c.ctx)
	}
	// A --command-config given replaces the context's properties whole.
	props := filepath.Join(dir, "plain.properties")
	if err := os.WriteFile(props, []byte("bootstrap.servers=file:9092\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = parseIn([]string{"--context", "prod", "--command-config", props}, atDefault)
	if err != nil || c.security.SASL != nil || strings.Join(c.bootstrap, ",") != "p1:9092,p2:9092" {
		t.Errorf("--command-config over the context's properties: %+v %v %v", c.security, c.bootstrap, err)
	}
	// demo runs its own cluster: the current context is not read, even a broken one.
	if _, err := parseIn([]string{"demo"}, envOf("TXNSCOPE_CONFIG", "/nonexistent.yaml")); err != nil {
		t.Errorf("demo read the config file: %v", err)
	}
}

func TestContextErrors(t *testing.T) {
	dir := t.TempDir()
	path := contextsFile(t, dir)
	env := envOf("TXNSCOPE_CONFIG", path)
	for _, tc := range []struct {
		name string
		args []string
		env  contextEnv
		want string
	}{
		{"unknown context", []string{"--context", "stagin"}, env, `--context "stagin": no such context in ` + path + ` (it has staging, prod, audit, slow, nojm)`},
		{"unknown from the environment", nil, envOf("TXNSCOPE_CONFIG", path, "TXNSCOPE_CONTEXT", "qa"), `TXNSCOPE_CONTEXT "qa": no such context`},
		{"named file missing", []string{"--config", filepath.Join(dir, "none.yaml")}, envOf(), `config file ` + filepath.Join(dir, "none.yaml") + ` does not exist (txnscope config add NAME -b HOST:PORT creates it)`},
		{"context but no file", []string{"--context", "prod"}, envOf("XDG_CONFIG_HOME", dir+"/x"), `--context "prod": there is no config file`},
		{"a bound, at its place", []string{"--context", "slow"}, env, path + `:25:14: context "slow": refresh 100ms is shorter than the least allowed, 500ms`},
		{"a flag's rule, at its place", []string{"--context", "nojm"}, env, path + `:29:7: context "nojm": flink-prefix needs --flink`},
		{"an unset variable", []string{"--context", "prod"}, env, path + `:19:25: context "prod": properties: sasl.jaas.config: ${PROD_PW} is not set in the environment`},
		{"read-only is not undone", []string{"--context", "audit", "--read-only=false"}, env, path + `:22:16: context "audit" is read-only, and --read-only=false does not undo that`},
		{"--config empty", []string{"--config", ""}, env, `--config is empty`},
		{"demo takes no context", []string{"demo", "--context", "prod"}, env, `--context does not apply to demo: it runs its own plaintext cluster`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseIn(tc.args, tc.env)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got  %v\nwant %s…", err, tc.want)
			}
		})
	}
	// A broken file is one line at its place, and nothing runs.
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("contexts:\n  a:\n    bootstrap-server: a:1\n    refesh: 1s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := parseIn([]string{"snapshot"}, envOf("TXNSCOPE_CONFIG", bad)); err == nil ||
		err.Error() != bad+`:4:5: context "a": "refesh": unknown key (did you mean refresh?)` {
		t.Errorf("bad file: %v", err)
	}
}

// TestContextFileExposed: a config file holding a password in the open,
// readable by others, is warned about as a properties file would be.
func TestContextFileExposed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	text := "contexts:\n  p:\n    bootstrap-server: a:1\n    properties:\n      security.protocol: SASL_PLAINTEXT\n      sasl.mechanism: PLAIN\n" +
		"      sasl.jaas.config: org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"hunter2\";\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := parseIn([]string{"--context", "p"}, envOf("TXNSCOPE_CONFIG", path))
	if err != nil {
		t.Fatal(err)
	}
	want := "config file " + path + ` holds context "p" properties sasl.jaas.config (line 7) and is readable by other users (mode 0644): chmod 600 ` + path
	if !slices.Contains(c.warnings, want) {
		t.Errorf("warnings %q, want %q", c.warnings, want)
	}
	for _, w := range c.warnings {
		if strings.Contains(w, "hunter2") {
			t.Errorf("a warning shows the password: %q", w)
		}
	}
}

// TestContextProtected: on a protected context the one-shots that act want
// the context's name typed after their word, and refuse --yes.
func TestContextProtected(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TXNSCOPE_CONFIG", contextsFile(t, dir))
	t.Setenv("PROD_PW", "x")
	t.Setenv("XDG_STATE_HOME", dir)
	code, _, stderr := runArgs(t, "force-terminate", "--context", "prod", "--transactional-id", "t", "--yes")
	if code != exitUsage || !strings.Contains(stderr, `context "prod" is protected: --yes is refused; on a terminal, type abort prod to confirm`) {
		t.Errorf("exit %d: %s", code, stderr)
	}
	code, _, stderr = runArgs(t, "force-terminate", "--context", "prod", "--transactional-id", "t")
	if code != exitUsage || !strings.Contains(stderr, `context "prod" is protected: force-terminate asks you to type abort prod on a terminal, and stdin is not one`) {
		t.Errorf("exit %d: %s", code, stderr)
	}
	code, _, stderr = runArgs(t, "abort", "--context", "audit", "--topic", "t", "--partition", "0", "--start-offset", "1", "--yes")
	if code != exitUsage || !strings.Contains(stderr, `abort changes the cluster, and context "audit" is read-only (`) {
		t.Errorf("exit %d: %s", code, stderr)
	}
	if got := (config{ctx: ctxInfo{name: "prod", protected: true}}).confirmPhrase("commit"); got != "commit prod" {
		t.Errorf("phrase %q", got)
	}
}

// TestConfigCommand: from no file to two contexts with txnscope config alone.
func TestConfigCommand(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cfg", "config.yaml")
	t.Setenv("TXNSCOPE_CONFIG", path)
	props := filepath.Join(dir, "prod.properties")
	if err := os.WriteFile(props, []byte("security.protocol=PLAINTEXT\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	t.Chdir(dir)
	defer os.Chdir(wd)
	steps := []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"config", "list"}, exitUsage, "does not exist: txnscope config add NAME -b HOST:PORT creates it"},
		{[]string{"config", "add", "staging", "-b", "127.0.0.1:9092", "--read-only", "--refresh", "5s"}, exitOK, "context staging written to " + path},
		{[]string{"config", "add", "prod", "-b", "127.0.0.1:9093", "--command-config", "prod.properties", "--protected", "--label", "PROD", "--color", "red",
			"--flink-prefix", "orders-job=orders"}, exitUsage, "--flink-prefix needs --flink"},
		{[]string{"config", "add", "prod", "-b", "127.0.0.1:9093", "--command-config", "prod.properties", "--protected", "--label", "PROD", "--color", "red"}, exitOK, "context prod written"},
		{[]string{"config", "list"}, exitOK, "*\tstaging"},
		{[]string{"config", "use", "prod"}, exitOK, "current context: prod"},
		{[]string{"config", "show"}, exitOK, "command-config: " + props},
		{[]string{"config", "validate"}, exitOK, "prod: ok"},
		{[]string{"config", "use", "qa"}, exitUsage, `no context "qa" in ` + path + " (it has staging, prod)"},
		{[]string{"config", "add"}, exitUsage, "config add needs the context's NAME"},
		{[]string{"config", "list", "--label", "x"}, exitUsage, "--label does not apply to config list"},
		{[]string{"config", "frob"}, exitUsage, `unknown config subcommand "frob"`},
		{[]string{"config", "show", "a", "b"}, exitUsage, `unexpected argument "b" after config show a`},
	}
	for _, st := range steps {
		code, stdout, stderr := runArgs(t, st.args...)
		if code != st.code || !strings.Contains(stdout+stderr, st.out) {
			t.Fatalf("%v: exit %d, want %d with %q\nstdout: %s\nstderr: %s", st.args, code, st.code, st.out, stdout, stderr)
		}
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("config file mode %v", fi.Mode().Perm())
	}
	// The contexts are what the UI then runs with.
	c, err := parse(nil)
	if err != nil || c.ctx.name != "prod" || !c.ctx.protected || strings.Join(c.bootstrap, ",") != "127.0.0.1:9093" {
		t.Fatalf("after config use prod: %+v %v", c.ctx, err)
	}
	c, err = parse([]string{"--context", "staging"})
	if err != nil || !c.readOnly || c.refresh != 5*time.Second {
		t.Fatalf("staging: %+v %v", c, err)
	}
	_, stdout, _ := runArgs(t, "config", "list", "-o", "json")
	var doc struct {
		Current  string `json:"current"`
		Contexts []struct {
			Name      string `json:"name"`
			Protected bool   `json:"protected"`
		} `json:"contexts"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil || doc.Current != "prod" || len(doc.Contexts) != 2 || !doc.Contexts[1].Protected {
		t.Errorf("list -o json: %s %v", stdout, err)
	}

	// validate names a context that cannot be used, at its place.
	if err := os.Remove(props); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ := runArgs(t, "config", "validate")
	if code != exitFailure || !strings.Contains(stdout, "staging: ok") || !strings.Contains(stdout, "prod: "+path+":") || !strings.Contains(stdout, "command-config") {
		t.Errorf("validate with a missing properties file: exit %d\n%s", code, stdout)
	}
}

func TestConfigShowMasks(t *testing.T) {
	for _, tc := range []struct{ key, value, want string }{
		{"sasl.jaas.config", `x.PlainLoginModule required username="u" password="hunter2";`, `x.PlainLoginModule required username="u" password="****";`},
		{"sasl.jaas.config", `x required clientId="c" clientSecret="${SECRET}";`, `x required clientId="c" clientSecret="${SECRET}";`},
		{"ssl.key.password", "hunter2", "****"},
		{"ssl.key.password", "${KEYPW}", "${KEYPW}"},
		{"security.protocol", "SASL_SSL", "SASL_SSL"},
	} {
		if got := maskProperty(tc.key, tc.value); got != tc.want {
			t.Errorf("%s=%s: got %s", tc.key, tc.value, got)
		}
	}
	if !slices.Contains(configFlagNames(), "protected") {
		t.Error("config add takes --protected")
	}
}
