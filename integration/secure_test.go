package integration

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/jsonout"
	"github.com/txnscope/txnscope/model"
)

// Test credentials. Each is distinctive so that a leak into any output is found by a substring
// search.
const (
	plainUser, plainPass   = "carol", "carol-Pl41n-s3cret-91d"
	scram256User, scram256 = "alice", "alice-Scr4m256-s3cret-4e7"
	scram512User, scram512 = "bob", "bob-Scr4m512-s3cret-a02"
	wrongPass              = "not-bobs-Passw0rd-77f"
	oauthSubject           = "dave"
)

// secureBroker is the broker of TestSecureConnections: every kind of listener, the three
// password mechanisms and OAUTHBEARER, no authorizer (acl_test.go has one).
func secureBroker(t *testing.T) *Broker {
	t.Helper()
	return StartBroker(t, BrokerOptions{
		Secure:      true,
		OAuthBearer: true,
		PlainUsers:  map[string]string{plainUser: plainPass},
		ScramUsers: []ScramUser{
			{Mechanism: "SCRAM-SHA-256", Name: scram256User, Password: scram256},
			{Mechanism: "SCRAM-SHA-512", Name: scram512User, Password: scram512},
		},
	})
}

// unsecuredJWT is a token Kafka's default OAUTHBEARER validator
// (OAuthBearerUnsecuredValidatorCallbackHandler) accepts: an unsigned JWT whose "sub" is the
// principal. A static token is what --sasl-mechanism OAUTHBEARER takes as its password.
func unsecuredJWT(sub string, now time.Time) string {
	enc := base64.RawURLEncoding.EncodeToString
	claims := fmt.Sprintf(`{"sub":%q,"iat":%d,"exp":%d}`, sub, now.Unix(), now.Add(time.Hour).Unix())
	return enc([]byte(`{"alg":"none"}`)) + "." + enc([]byte(claims)) + "."
}

// TestSecureConnections runs the real txnscope binary against a private broker with SASL_SSL,
// mutual-TLS, TLS and wrong-name TLS listeners, once per connection option: `snapshot -o json`
// must show the open transaction, `list` must list it, failures exit 1 with one line naming the
// broker's or the TLS layer's reason, a bad --command-config exits 2, and no secret ever appears
// in any output. Kafka's own kafka-transactions.sh accepts the same client.properties.
func TestSecureConnections(t *testing.T) {
	t.Parallel()
	// Its parallel subtests queue behind the package's other parallel tests
	// (go test runs GOMAXPROCS of them at once: two on CI) while this clock
	// runs: 4 minutes ran out on CI with 18s of work. go test's own -timeout
	// bounds the run.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	b := secureBroker(t)
	bin := buildTxnscope(ctx, t)

	// An open transaction every successful connection must show.
	adm := newAdmin(t, b.Bootstrap)
	tp := topicOn(ctx, t, adm)
	id := name(t, "txn")
	p := producer(t, b.Bootstrap, id, 10*time.Minute)
	openTxn(ctx, t, p, tp, 2, "secure")

	token := unsecuredJWT(oauthSubject, time.Now())
	secrets := []string{plainPass, scram256, scram512, wrongPass, token}
	dir := t.TempDir()
	file := func(name, content string) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	// A password file as `echo pw > file` writes it: with a newline, which is not part of it.
	pw256 := file("alice.pw", scram256+"\n")
	pw512 := file("bob.pw", scram512)
	pwPlain := file("carol.pw", plainPass)
	pwWrong := file("wrong.pw", wrongPass)
	tokenFile := file("token", token)
	ca, namedCA := b.Certs.CAFile, b.Named.CAFile
	cert, key := b.Certs.ClientCertFile, b.Certs.ClientKeyFile
	// The client's private key is a secret too: its first line of base64 must never be printed.
	if data, err := os.ReadFile(key); err != nil {
		t.Fatal(err)
	} else if lines := strings.Split(string(data), "\n"); len(lines) > 2 {
		secrets = append(secrets, lines[1])
	}
	tlsCA := []string{"--tls", "--tls-ca", ca}
	jaas := func(module, user, pass string) string {
		return fmt.Sprintf("sasl.jaas.config=org.apache.kafka.common.security.%s required username=%q password=%q;", module, user, pass)
	}
	props := func(name string, lines ...string) string { return file(name, strings.Join(lines, "\n")+"\n") }
	scramProps := props("scram.properties",
		"# kafka-transactions.sh --command-config: SASL_SSL, SCRAM, PEM truststore",
		"bootstrap.servers="+b.SecureBootstrap,
		"security.protocol=SASL_SSL",
		"sasl.mechanism=SCRAM-SHA-512",
		jaas("scram.ScramLoginModule", scram512User, scram512),
		"ssl.truststore.type=PEM",
		"ssl.truststore.location="+ca)
	plainProps := props("plain.properties",
		"bootstrap.servers="+b.SecureBootstrap,
		"security.protocol=SASL_SSL",
		"sasl.mechanism=PLAIN",
		jaas("plain.PlainLoginModule", plainUser, plainPass),
		"ssl.truststore.type=PEM",
		"ssl.truststore.location="+ca)
	mtlsProps := props("mtls.properties",
		"bootstrap.servers="+b.MutualTLSBootstrap,
		"security.protocol=SSL",
		"ssl.truststore.type=PEM",
		"ssl.truststore.location="+ca,
		"ssl.keystore.type=PEM",
		"ssl.keystore.location="+b.Certs.ClientChainFile)
	// The same with the PEM inline, as Java properties spell multi-line values: "\n" escapes
	// ending in a line continuation.
	inline := func(key, path string) string {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return key + "=" + strings.ReplaceAll(strings.TrimSpace(string(data)), "\n", "\\n\\\n")
	}
	inlineProps := props("inline.properties",
		"bootstrap.servers="+b.MutualTLSBootstrap,
		"security.protocol=SSL",
		"ssl.truststore.type=PEM",
		inline("ssl.truststore.certificates", ca),
		"ssl.keystore.type=PEM",
		inline("ssl.keystore.key", key),
		inline("ssl.keystore.certificate.chain", cert))
	// An empty algorithm turns the Java client's host name check off; the chain is still verified.
	noHostnameProps := props("nohostname.properties",
		"bootstrap.servers="+b.NamedBootstrap,
		"security.protocol=SSL",
		"ssl.truststore.type=PEM",
		"ssl.truststore.location="+namedCA,
		"ssl.endpoint.identification.algorithm=")
	jksProps := props("jks.properties",
		"bootstrap.servers="+b.SecureBootstrap,
		"security.protocol=SASL_SSL",
		"sasl.mechanism=SCRAM-SHA-512",
		jaas("scram.ScramLoginModule", scram512User, scram512),
		"ssl.truststore.type=JKS",
		"ssl.truststore.location="+filepath.Join(dir, "truststore.jks"),
		"ssl.truststore.password=changeit")
	// Everything in it is wrong for this broker; the flags given with it must win.
	overriddenProps := props("overridden.properties",
		"bootstrap.servers=127.0.0.1:1",
		"security.protocol=SASL_SSL",
		"sasl.mechanism=PLAIN",
		jaas("plain.PlainLoginModule", scram512User, wrongPass),
		"ssl.truststore.type=PEM",
		"ssl.truststore.location="+namedCA)

	type run struct {
		name string
		args []string // without the command and -o
		env  []string
		// code is the exit status; for 1 and 2, stderr is one line holding every wantErr.
		code    int
		wantErr []string
		// warn must be on stderr of a successful run.
		warn string
		// list also runs the one-shot `list` with the same connection flags.
		list bool
	}
	sasl := func(mech, user, pwFile string) []string {
		out := append([]string{"-b", b.SecureBootstrap}, tlsCA...)
		out = append(out, "--sasl-mechanism", mech)
		if user != "" {
			out = append(out, "--sasl-username", user)
		}
		if pwFile != "" {
			out = append(out, "--sasl-password-file", pwFile)
		}
		return out
	}
	runs := []run{
		{name: "tls-ca", args: append([]string{"-b", b.TLSBootstrap}, tlsCA...), list: true},
		{name: "tls-server-name", args: []string{"-b", b.NamedBootstrap, "--tls", "--tls-ca", namedCA, "--tls-server-name", NamedHost}, list: true},
		{name: "tls-name-not-in-certificate", args: []string{"-b", b.NamedBootstrap, "--tls", "--tls-ca", namedCA},
			code: 1, wantErr: []string{"certificate"}},
		{name: "tls-insecure-skip-verify", args: []string{"-b", b.NamedBootstrap, "--tls", "--tls-insecure-skip-verify"},
			warn: "insecure-skip-verify"},
		{name: "tls-wrong-ca", args: []string{"-b", b.TLSBootstrap, "--tls", "--tls-ca", namedCA},
			code: 1, wantErr: []string{"certificate signed by unknown authority"}, list: true},
		{name: "mutual-tls", args: append(append([]string{"-b", b.MutualTLSBootstrap}, tlsCA...), "--tls-cert", cert, "--tls-key", key), list: true},
		{name: "mutual-tls-without-client-certificate", args: append([]string{"-b", b.MutualTLSBootstrap}, tlsCA...),
			code: 1, wantErr: []string{"certificate"}},

		{name: "plain-password-file", args: sasl("PLAIN", plainUser, pwPlain), list: true},
		{name: "plain-env", args: sasl("PLAIN", plainUser, ""), env: []string{"TXNSCOPE_SASL_PASSWORD=" + plainPass}},
		{name: "scram-sha-256-password-file", args: sasl("SCRAM-SHA-256", scram256User, pw256)},
		{name: "scram-sha-256-env", args: sasl("SCRAM-SHA-256", scram256User, ""), env: []string{"TXNSCOPE_SASL_PASSWORD=" + scram256}},
		{name: "scram-sha-512-password-file", args: sasl("SCRAM-SHA-512", scram512User, pw512), list: true},
		{name: "scram-sha-512-env", args: sasl("SCRAM-SHA-512", scram512User, ""), env: []string{"TXNSCOPE_SASL_PASSWORD=" + scram512}},
		{name: "oauthbearer-token-file", args: sasl("OAUTHBEARER", "", tokenFile), list: true},
		{name: "oauthbearer-env", args: sasl("OAUTHBEARER", "", ""), env: []string{"TXNSCOPE_SASL_PASSWORD=" + token}},
		{name: "scram-wrong-password", args: sasl("SCRAM-SHA-512", scram512User, pwWrong),
			code: 1, wantErr: []string{"invalid credentials"}, list: true},
		{name: "plain-wrong-password-env", args: sasl("PLAIN", plainUser, ""), env: []string{"TXNSCOPE_SASL_PASSWORD=" + wrongPass},
			code: 1, wantErr: []string{"Invalid username or password"}},

		{name: "command-config-scram", args: []string{"--command-config", scramProps}, list: true},
		{name: "command-config-plain", args: []string{"--command-config", plainProps}},
		{name: "command-config-mutual-tls-pem-keystore", args: []string{"--command-config", mtlsProps}, list: true},
		{name: "command-config-mutual-tls-inline-pem", args: []string{"--command-config", inlineProps}},
		{name: "command-config-no-hostname-check", args: []string{"--command-config", noHostnameProps}},
		{name: "command-config-jks", args: []string{"--command-config", jksProps},
			code: 2, wantErr: []string{"ssl.truststore.type", "PEM"}, list: true},
		{name: "flags-override-command-config",
			args: append(sasl("SCRAM-SHA-256", scram256User, pw256), "--command-config", overriddenProps), list: true},
	}

	t.Run("connect", func(t *testing.T) {
		for _, r := range runs {
			t.Run(r.name, func(t *testing.T) {
				t.Parallel()
				snap := runTxnscope(ctx, t, bin, r.env, append([]string{"snapshot", "-o", "json"}, r.args...)...)
				noSecrets(t, snap, secrets)
				var one *txnscopeRun
				if r.list {
					l := runTxnscope(ctx, t, bin, r.env, append([]string{"list"}, r.args...)...)
					noSecrets(t, l, secrets)
					one = &l
				}
				if r.code != 0 {
					wantFailure(t, snap, r.code, r.wantErr)
					if one != nil {
						wantFailure(t, *one, r.code, r.wantErr)
					}
					return
				}
				if snap.code != 0 {
					t.Fatalf("exit %d, want 0\n%s", snap.code, snap)
				}
				var s jsonout.SnapshotJSON
				if err := json.Unmarshal([]byte(snap.stdout), &s); err != nil {
					t.Fatalf("snapshot -o json is not JSON: %v\n%s", err, snap)
				}
				if tx := findTxnJSON(s, id); tx == nil || tx.State != model.Ongoing {
					t.Errorf("snapshot: %s is %v, want Ongoing (%d transactions)\n%s", id, tx, len(s.Transactions), snap)
				}
				if r.warn != "" && !strings.Contains(snap.stderr, r.warn) {
					t.Errorf("stderr %q does not warn about %s", snap.stderr, r.warn)
				}
				if one != nil {
					if one.code != 0 || !strings.Contains(one.stdout, id) {
						t.Errorf("list: exit %d, want 0 and a row for %s\n%s", one.code, id, one)
					}
				}
			})
		}
	})

	t.Run("help-shows-no-secret", func(t *testing.T) {
		h := runTxnscope(ctx, t, bin, []string{"TXNSCOPE_SASL_PASSWORD=" + scram512}, "--help")
		if h.code != 0 {
			t.Errorf("--help: exit %d\n%s", h.code, h)
		}
		noSecrets(t, h, secrets)
		for _, f := range []string{"--tls-ca", "--sasl-mechanism", "--sasl-password-file", "--command-config"} {
			if !strings.Contains(h.stdout+h.stderr, f) {
				t.Errorf("--help does not mention %s", f)
			}
		}
	})

	// A failed login ends every one-shot command the same way: exit 1, the broker's reason, no secret
	// (in the output, nor in the audit log of the two that act).
	t.Run("wrong-password-every-command", func(t *testing.T) {
		auditLog := filepath.Join(t.TempDir(), "audit.log")
		part := []string{"--topic", tp.Topic, "--partition", "0"}
		for _, cmd := range [][]string{
			{"list"},
			{"describe", "--transactional-id", id},
			append([]string{"describe-producers"}, part...),
			{"find-hanging", "--topic", tp.Topic},
			append(append([]string{"abort"}, part...), "--start-offset", "0", "--yes", "--audit-log", auditLog),
			{"force-terminate", "--transactional-id", id, "--yes", "--audit-log", auditLog},
		} {
			r := runTxnscope(ctx, t, bin, []string{"TXNSCOPE_SASL_PASSWORD=" + wrongPass},
				append(cmd, sasl("SCRAM-SHA-512", scram512User, "")...)...)
			noSecrets(t, r, secrets)
			wantFailure(t, r, 1, []string{"invalid credentials"})
		}
		if data, err := os.ReadFile(auditLog); err == nil {
			for _, s := range secrets {
				if strings.Contains(string(data), s) {
					t.Errorf("a secret is in the audit log:\n%s", data)
				}
			}
		}
	})

	// The TUI keeps the warning in its header for as long as it runs.
	t.Run("tui-insecure-skip-verify", func(t *testing.T) {
		term := startTUI(ctx, t, b.NamedBootstrap, "--tls-insecure-skip-verify")
		term.WaitText([]string{"TLS cert NOT verified", id[len(id)-10:]})
		term.quit()
	})

	// Kafka's own tool with the very file txnscope read: the file is a real client.properties.
	t.Run("kafka-transactions.sh-accepts-the-file", func(t *testing.T) {
		tools := filepath.Join(repoRoot(t), "scripts", "kafka-tools")
		r := runTool(ctx, tools, "transactions", "--bootstrap-server", b.SecureBootstrap, "--command-config", scramProps, "list")
		if r.code != 0 || !strings.Contains(r.stdout, id) {
			t.Fatalf("kafka-transactions.sh --command-config %s list: exit %d, want 0 and a row for %s\nstdout: %s\nstderr: %s",
				scramProps, r.code, id, r.stdout, r.stderr)
		}
		if ours := runTxnscope(ctx, t, bin, nil, "list", "-b", b.SecureBootstrap, "--command-config", scramProps); ours.code != 0 ||
			listRow(ours.stdout, id) != listRow(r.stdout, id) {
			t.Errorf("the same list differs:\nofficial: %q\ntxnscope: %q\n%s", listRow(r.stdout, id), listRow(ours.stdout, id), ours)
		}
	})

	endTxn(ctx, t, p, true)
}

// txnscopeRun is one run of the binary.
type txnscopeRun struct {
	args           []string
	code           int
	stdout, stderr string
}

func (r txnscopeRun) String() string {
	return fmt.Sprintf("txnscope %s\nexit %d\nstdout: %s\nstderr: %s", strings.Join(r.args, " "), r.code, r.stdout, r.stderr)
}

// runTxnscope runs the binary with env added to this process's environment, from which any
// TXNSCOPE_SASL_PASSWORD is removed first so that only the test decides it.
func runTxnscope(ctx context.Context, t *testing.T, bin string, env []string, args ...string) txnscopeRun {
	t.Helper()
	rctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(rctx, bin, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TXNSCOPE_SASL_PASSWORD=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := txnscopeRun{args: args, stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	default:
		t.Fatalf("txnscope %s: %v", strings.Join(args, " "), err)
	}
	if rctx.Err() != nil {
		t.Fatalf("txnscope %s did not finish within 60 s\n%s", strings.Join(args, " "), r)
	}
	return r
}

// wantFailure checks the exit status and that the reason is one line holding every want. A usage
// error (exit 2) follows its line with where the help is, so only its first line is judged.
func wantFailure(t *testing.T, r txnscopeRun, code int, want []string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit %d, want %d\n%s", r.code, code, r)
		return
	}
	msg := strings.TrimRight(r.stderr, "\n")
	if code == 2 {
		msg, _, _ = strings.Cut(msg, "\n")
	}
	t.Logf("txnscope %s: exit %d: %s", r.args[0], r.code, msg)
	switch {
	case msg == "":
		t.Errorf("no reason on stderr\n%s", r)
	case strings.Contains(msg, "\n"):
		t.Errorf("the reason is not one line\n%s", r)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("the reason %q does not say %q", msg, w)
		}
	}
	if code == 1 && strings.TrimSpace(r.stdout) != "" {
		t.Errorf("a failed run printed on stdout\n%s", r)
	}
}

// noSecrets fails when any secret appears in the run's output.
func noSecrets(t *testing.T, r txnscopeRun, secrets []string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(r.stdout, s) || strings.Contains(r.stderr, s) {
			t.Errorf("a secret (%d characters, starting %.4s) appears in the output\n%s", len(s), s, r)
		}
	}
}

func findTxnJSON(s jsonout.SnapshotJSON, id string) *jsonout.TxnJSON {
	for i := range s.Transactions {
		if s.Transactions[i].TransactionalID == id {
			return &s.Transactions[i]
		}
	}
	return nil
}

// listRow is the line of a `list` table for id, with its padding collapsed.
func listRow(table, id string) string {
	for _, l := range strings.Split(table, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == id {
			return strings.Join(f, " ")
		}
	}
	return ""
}
