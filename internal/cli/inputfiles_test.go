//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/keytab"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
)

// parseWithin fails the test unless parse returns promptly: a FIFO used to
// block the open forever, /dev/zero to be read until the process died.
func parseWithin(t *testing.T, args []string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { _, err := parse(args); done <- err }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		t.Fatalf("parse %q still reading after 5s", args)
		return nil
	}
}

// Every file the command line names, directly or through the properties
// file, is read only if it is a regular file of a few MiB at most; any
// other is refused at once with one line naming the flag (or the setting)
// and the file.
func TestInputFilesOnlyRegular(t *testing.T) {
	t.Setenv(passwordEnv, "")
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 1<<30); err != nil { // sparse: refused by its size, never read
		t.Fatal(err)
	}
	certs := kafkatest.WriteCerts(t)
	bad := []struct{ path, why string }{
		{fifo, "a named pipe (FIFO), not a regular file"},
		{"/dev/zero", "a character device, not a regular file"},
		{dir, "a directory, not a regular file"},
		{big, "larger than 4 MiB"},
	}
	props := func(lines ...string) string {
		return writeFile(t, "client.properties", strings.Join(lines, "\n"))
	}
	for _, b := range bad {
		trust := props("security.protocol=SSL", "ssl.truststore.type=PEM", "ssl.truststore.location="+b.path)
		keystore := props("security.protocol=SSL", "ssl.keystore.type=PEM", "ssl.keystore.location="+b.path)
		for _, tt := range []struct {
			args []string
			from string
		}{
			{[]string{"snapshot", "--command-config", b.path}, "--command-config"},
			{[]string{"list", "--sasl-mechanism", "PLAIN", "--sasl-username", "u", "--sasl-password-file", b.path}, "--sasl-password-file"},
			{[]string{"--tls-ca", b.path}, "--tls-ca"},
			{[]string{"snapshot", "--tls-cert", b.path, "--tls-key", certs.ClientKeyFile}, "--tls-cert"},
			{[]string{"describe", "--transactional-id", "x", "--tls-cert", certs.ClientCertFile, "--tls-key", b.path}, "--tls-key"},
			{[]string{"snapshot", "--command-config", trust}, "--command-config " + trust + ": line 3: ssl.truststore.location"},
			{[]string{"snapshot", "--command-config", keystore}, "--command-config " + keystore + ": line 3: ssl.keystore.location"},
		} {
			err := parseWithin(t, tt.args)
			want := tt.from + " " + b.path + ": " + b.why
			if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%q: error %v\nwant one line starting %q", tt.args, err, want)
			}
		}
	}

	// Through run: exit 2 and the one line, not a stack trace.
	start := time.Now()
	code, out, errs := runArgs(t, "snapshot", "--tls-ca", "/dev/zero")
	first, _, _ := strings.Cut(errs, "\n")
	if code != 2 || out != "" || first != "txnscope: --tls-ca /dev/zero: a character device, not a regular file" || time.Since(start) > 2*time.Second {
		t.Errorf("exit %d, stdout %q, first line %q, after %s", code, out, first, time.Since(start))
	}
}

// A TLS file that holds no usable PEM is refused while parsing, naming its flag.
func TestTLSFileContentsNameTheFlag(t *testing.T) {
	certs := kafkatest.WriteCerts(t)
	junk := writeFile(t, "junk.pem", "not a certificate\n")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--tls-ca", junk}, "--tls-ca: TLS CA file " + junk + " holds no PEM certificate"},
		{[]string{"--tls-cert", certs.ClientCertFile, "--tls-key", junk}, "--tls-cert, --tls-key: TLS client key " + junk + " holds no PEM private key"},
		{[]string{"--command-config", writeFile(t, "c.properties", "security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location="+junk)},
			": line 3: ssl.truststore.location: TLS CA file " + junk + " holds no PEM certificate"},
	} {
		_, err := parse(tt.args)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want %q", tt.args, err, tt.want)
		}
	}
}

// A file holding a secret that other users can read is warned about, on one
// line of stderr, before anything runs (as ssh does for a key); the command
// goes on.
func TestExposedSecretsWarn(t *testing.T) {
	t.Setenv(passwordEnv, "")
	certs := kafkatest.WriteCerts(t)
	withMode := func(name, text string, mode os.FileMode) string {
		p := writeFile(t, name, text)
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pw := withMode("pw", testPassword, 0o644)
	pwPrivate := withMode("pw-private", testPassword, 0o600)
	jaas := "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n" +
		`sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="` + testPassword + `";` + "\n"
	props := withMode("client.properties", jaas, 0o640)
	propsPublic := withMode("public.properties", "bootstrap.servers=127.0.0.1:1\n", 0o644)
	key := withMode("key.pem", mustRead(t, certs.ClientKeyFile), 0o644)
	chain := withMode("client-chain.pem", mustRead(t, certs.ClientChainFile), 0o644)
	keystore := withMode("keystore.properties", "security.protocol=SSL\nssl.keystore.type=PEM\nssl.keystore.location="+chain+"\n", 0o644)
	krb5 := writeFile(t, "krb5.conf", "[libdefaults]\n  default_realm = EXAMPLE.COM\n[realms]\n  EXAMPLE.COM = {\n    kdc = 127.0.0.1:1\n  }\n")
	t.Setenv("KRB5_CONFIG", krb5)
	keytab := withMode("client.keytab", string(testKeytab(t)), 0o644)
	kerberos := withMode("kerberos.properties", "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=GSSAPI\nsasl.kerberos.service.name=kafka\n"+
		`sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab="`+keytab+`" principal="txnscope@EXAMPLE.COM";`+"\n", 0o600)
	fast := []string{"-b", "127.0.0.1:1", "--timeout", "200ms"}
	for _, tt := range []struct {
		args []string
		want string // "" no warning
	}{
		{[]string{"snapshot", "--sasl-mechanism", "PLAIN", "--sasl-username", "u", "--sasl-password-file", pw},
			"txnscope: warning: --sasl-password-file " + pw + " is readable by other users (mode 0644): chmod 600 " + pw},
		{[]string{"snapshot", "--sasl-mechanism", "PLAIN", "--sasl-username", "u", "--sasl-password-file", pwPrivate}, ""},
		{[]string{"list", "--command-config", props},
			"txnscope: warning: --command-config " + props + " holds sasl.jaas.config (line 3) and is readable by other users (mode 0640): chmod 600 " + props},
		{[]string{"list", "--command-config", propsPublic}, ""},
		{[]string{"snapshot", "--tls-cert", certs.ClientCertFile, "--tls-key", key},
			"txnscope: warning: --tls-key " + key + " holds a private key and is readable by other users (mode 0644): chmod 600 " + key},
		{[]string{"snapshot", "--tls-cert", certs.ClientCertFile, "--tls-key", certs.ClientKeyFile}, ""},
		{[]string{"snapshot", "--command-config", keystore},
			"txnscope: warning: --command-config " + keystore + ": line 3: ssl.keystore.location " + chain + " holds a private key and is readable by other users (mode 0644)"},
		{[]string{"list", "--command-config", kerberos},
			"txnscope: warning: the keyTab " + keytab + " (sasl.jaas.config (line 4)) holds Kerberos keys and is readable by other users (mode 0644): chmod 600 " + keytab},
		// The UI: the warning comes first, before the UI would start (here it
		// cannot: stdout is no terminal).
		{[]string{"--read-only", "--sasl-mechanism", "PLAIN", "--sasl-username", "u", "--sasl-password-file", pw},
			"txnscope: warning: --sasl-password-file " + pw + " is readable by other users (mode 0644)"},
	} {
		code, _, errs := runArgs(t, append(tt.args, fast...)...)
		lines := strings.Split(strings.TrimSuffix(errs, "\n"), "\n")
		if code == 2 && strings.HasPrefix(lines[len(lines)-1], "see txnscope") {
			lines = lines[:len(lines)-1] // where the help is, after the error
		}
		warned := strings.Contains(errs, "warning: ")
		switch {
		case code == 2 && !strings.Contains(errs, "not a terminal"):
			t.Errorf("%q: exit 2: %s", tt.args, lines[0])
		case tt.want == "" && warned:
			t.Errorf("%q: warned: %q", tt.args, errs)
		case tt.want != "" && (len(lines) != 2 || !strings.HasPrefix(lines[0], tt.want)):
			t.Errorf("%q: stderr %q\nwant the warning %q, then the error", tt.args, errs, tt.want)
		}
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// testKeytab is a keytab holding one key of txnscope@EXAMPLE.COM.
func testKeytab(t *testing.T) []byte {
	t.Helper()
	kt := keytab.New()
	if err := kt.AddEntry("txnscope", "EXAMPLE.COM", testPassword, time.Now(), 1, etypeID.AES256_CTS_HMAC_SHA1_96); err != nil {
		t.Fatal(err)
	}
	b, err := kt.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
