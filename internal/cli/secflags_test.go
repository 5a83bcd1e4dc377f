package cli

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/internal/conn"
	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
)

const testPassword = "Tr0ub4dor-and-3"

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParseSecurity(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/state")
	pwFile := writeFile(t, "pw", testPassword+"\n")
	crlfFile := writeFile(t, "pw-crlf", testPassword+"\r\n")
	spaceFile := writeFile(t, "pw-space", " "+testPassword+" \n")
	certs := kafkatest.WriteCerts(t)
	ca, cert, key, mine := certs.CAFile, certs.ClientCertFile, certs.ClientKeyFile, certs.ServerCertFile
	props := writeFile(t, "client.properties", strings.Join([]string{
		"bootstrap.servers=f1:9093,f2:9093",
		"security.protocol=SASL_SSL",
		"sasl.mechanism=SCRAM-SHA-512",
		`sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="file-user" password="` + testPassword + `";`,
		"ssl.truststore.type=PEM",
		"ssl.truststore.location=" + ca,
		"client.id=ops",
	}, "\n"))
	noCreds := writeFile(t, "nocreds.properties", "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n")
	fileSec := conn.Security{
		TLS:  &conn.TLS{CAFile: ca},
		SASL: &conn.SASL{Mechanism: "SCRAM-SHA-512", Username: "file-user", Password: testPassword},
	}

	for _, tt := range []struct {
		name string
		args []string
		env  string
		boot []string // nil: localhost:9092
		want conn.Security
	}{
		{"plaintext", nil, "", nil, conn.Security{}},
		{"env alone does nothing", nil, testPassword, nil, conn.Security{}},
		{"tls", []string{"--tls"}, "", nil, conn.Security{TLS: &conn.TLS{}}},
		{"tls-ca implies tls", []string{"--tls-ca", ca}, "", nil, conn.Security{TLS: &conn.TLS{CAFile: ca}}},
		{"every tls flag", []string{"--tls-cert", cert, "--tls-key", key, "--tls-server-name", "kafka.internal", "--tls-insecure-skip-verify"}, "", nil,
			conn.Security{TLS: &conn.TLS{CertFile: cert, KeyFile: key, ServerName: "kafka.internal", InsecureSkipVerify: true}}},
		{"sasl with a password file", []string{"--sasl-mechanism", "scram-sha-256", "--sasl-username", "u", "--sasl-password-file", pwFile}, "", nil,
			conn.Security{SASL: &conn.SASL{Mechanism: "SCRAM-SHA-256", Username: "u", Password: testPassword}}},
		{"CRLF dropped", []string{"--sasl-mechanism", "PLAIN", "--sasl-username", "u", "--sasl-password-file", crlfFile}, "", nil,
			conn.Security{SASL: &conn.SASL{Mechanism: "PLAIN", Username: "u", Password: testPassword}}},
		{"spaces kept", []string{"--sasl-mechanism", "PLAIN", "--sasl-username", "u", "--sasl-password-file", spaceFile}, "", nil,
			conn.Security{SASL: &conn.SASL{Mechanism: "PLAIN", Username: "u", Password: " " + testPassword + " "}}},
		{"sasl with the environment", []string{"--sasl-mechanism", "PLAIN", "--sasl-username", "u"}, testPassword + "\n", nil,
			conn.Security{SASL: &conn.SASL{Mechanism: "PLAIN", Username: "u", Password: testPassword}}},
		{"the file wins over the environment", []string{"--sasl-mechanism", "PLAIN", "--sasl-username", "u", "--sasl-password-file", pwFile}, "other", nil,
			conn.Security{SASL: &conn.SASL{Mechanism: "PLAIN", Username: "u", Password: testPassword}}},
		{"oauthbearer token", []string{"--sasl-mechanism", "OAUTHBEARER", "--tls"}, "eyJ.token", nil,
			conn.Security{TLS: &conn.TLS{}, SASL: &conn.SASL{Mechanism: "OAUTHBEARER", Password: "eyJ.token"}}},
		{"command config", []string{"--command-config", props}, "", []string{"f1:9093", "f2:9093"}, fileSec},
		{"-b wins over bootstrap.servers", []string{"--command-config", props, "-b", "x:1"}, "", []string{"x:1"}, fileSec},
		{"flags win over the file", []string{"--command-config", props, "--tls-ca", mine, "--sasl-username", "me", "--sasl-mechanism", "SCRAM-SHA-256", "--tls-server-name", "k"}, "", []string{"f1:9093", "f2:9093"},
			conn.Security{
				TLS:  &conn.TLS{CAFile: mine, ServerName: "k"},
				SASL: &conn.SASL{Mechanism: "SCRAM-SHA-256", Username: "me", Password: testPassword},
			}},
		{"the environment wins over the file", []string{"--command-config", props}, "from-env", []string{"f1:9093", "f2:9093"},
			conn.Security{TLS: fileSec.TLS, SASL: &conn.SASL{Mechanism: "SCRAM-SHA-512", Username: "file-user", Password: "from-env"}}},
		{"credentials the file lacks", []string{"--command-config", noCreds, "--sasl-username", "u"}, testPassword, nil,
			conn.Security{SASL: &conn.SASL{Mechanism: "PLAIN", Username: "u", Password: testPassword}}},
		{"snapshot", []string{"snapshot", "--tls"}, "", nil, conn.Security{TLS: &conn.TLS{}}},
		{"one-shot", []string{"list", "--tls-insecure-skip-verify"}, "", nil, conn.Security{TLS: &conn.TLS{InsecureSkipVerify: true}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(passwordEnv, tt.env)
			c, err := parse(tt.args)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if !reflect.DeepEqual(c.security, tt.want) {
				t.Errorf("security = %#v\n(TLS %+v, SASL %+v)\nwant %#v\n(TLS %+v, SASL %+v)", c.security, c.security.TLS, c.security.SASL,
					tt.want, tt.want.TLS, tt.want.SASL)
			}
			boot := tt.boot
			if boot == nil {
				boot = []string{"localhost:9092"}
			}
			if !reflect.DeepEqual(c.bootstrap, boot) {
				t.Errorf("bootstrap = %q, want %q", c.bootstrap, boot)
			}
		})
	}
}

func TestParseSecurityErrors(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/state")
	pwFile := writeFile(t, "pw", testPassword+"\n")
	empty := writeFile(t, "empty", "\n")
	jks := writeFile(t, "jks.properties", "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\n"+
		`sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="`+testPassword+`";`+
		"\nssl.truststore.location=/t.jks\nssl.truststore.password="+testPassword+"\n")
	kerberos := writeFile(t, "krb.properties", "security.protocol=SASL_SSL\n")
	missing := filepath.Join(t.TempDir(), "missing")
	for _, tt := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"--tls-cert", "c.pem"}, "", "--tls-cert needs --tls-key"},
		{[]string{"--tls-key", "k.pem"}, "", "--tls-key needs --tls-cert"},
		{[]string{"--tls-ca", ""}, "", "--tls-ca is empty"},
		{[]string{"--sasl-username", "u"}, testPassword, "--sasl-username needs --sasl-mechanism"},
		{[]string{"--sasl-password-file", pwFile}, "", "--sasl-password-file needs --sasl-mechanism"},
		{[]string{"--sasl-mechanism", "PLAIN", "--sasl-password-file", pwFile}, "", "SASL PLAIN needs a user name: --sasl-username"},
		{[]string{"--sasl-mechanism", "SCRAM-SHA-256", "--sasl-username", "u"}, "", "SASL SCRAM-SHA-256 needs a password: --sasl-password-file FILE or the environment variable TXNSCOPE_SASL_PASSWORD"},
		{[]string{"--sasl-mechanism", "OAUTHBEARER"}, "", "SASL OAUTHBEARER needs a token"},
		{[]string{"--sasl-mechanism", "GSSAPI"}, "", "SASL GSSAPI (Kerberos) needs --command-config with sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule"},
		{[]string{"--sasl-mechanism", "SCRAM-SHA-1"}, "", `bad --sasl-mechanism "SCRAM-SHA-1"`},
		{[]string{"--sasl-mechanism", "PLAIN", "--sasl-username", "u", "--sasl-password-file", missing}, "", "--sasl-password-file " + missing + ": no such file or directory"},
		{[]string{"--sasl-mechanism", "PLAIN", "--sasl-username", "u", "--sasl-password-file", empty}, "", "--sasl-password-file " + empty + " is empty"},
		{[]string{"demo", "--tls"}, "", "--tls does not apply to demo: it runs its own plaintext cluster"},
		{[]string{"demo", "--command-config", jks}, "", "--command-config does not apply to demo: it runs its own plaintext cluster"},
		{[]string{"demo", "--sasl-mechanism", "PLAIN"}, "", "--sasl-mechanism does not apply to demo"},
		{[]string{"--command-config", jks}, "", "--command-config " + jks + ": line 4: a truststore without ssl.truststore.type is a JKS store, which is not supported: convert it to PEM"},
		{[]string{"snapshot", "--command-config", kerberos}, "", "line 1: SASL GSSAPI (Kerberos, Java's default mechanism) needs sasl.jaas.config="},
		{[]string{"--command-config", missing}, "", "--command-config " + missing + ": no such file or directory"},
		{[]string{"--sasl-password", testPassword}, "", "unknown flag: --sasl-password"},
		{[]string{"--password=" + testPassword}, "", "unknown flag: --password"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Setenv(passwordEnv, tt.env)
			_, err := parse(tt.args)
			if err == nil {
				t.Fatalf("parse accepted it; want %q", tt.want)
			}
			if _, ok := err.(usageError); !ok {
				t.Errorf("%T is not a usage error", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.want) {
				t.Errorf("error %q\nwant %q", msg, tt.want)
			}
			if strings.Contains(msg, testPassword) && !strings.HasPrefix(msg, "unknown flag") {
				t.Errorf("error shows the password: %q", msg)
			}
		})
	}
}

// A flag given on the command line is echoed by pflag's own error; txnscope
// has no password flag, so only a mistyped one can show up there.
func TestHelpShowsNoSecret(t *testing.T) {
	t.Setenv(passwordEnv, testPassword)
	code, out, errs := runArgs(t, "--help", "--sasl-mechanism", "PLAIN", "--sasl-username", "u")
	if code != 0 || strings.Contains(out+errs, testPassword) {
		t.Errorf("--help: exit %d, shows the password: %v", code, strings.Contains(out+errs, testPassword))
	}
	for _, want := range []string{"--sasl-password-file FILE", "TXNSCOPE_SASL_PASSWORD", "--command-config FILE", "--tls-insecure-skip-verify"} {
		if !strings.Contains(out, want) {
			t.Errorf("help does not mention %s", want)
		}
	}
}

func TestRunSecurityFileErrors(t *testing.T) {
	t.Setenv(passwordEnv, "")
	missing := filepath.Join(t.TempDir(), "ca.pem")
	code, out, errs := runArgs(t, "snapshot", "-b", "127.0.0.1:1", "--tls-ca", missing)
	first, _, _ := strings.Cut(errs, "\n")
	if code != 2 || out != "" || first != "txnscope: --tls-ca "+missing+": no such file or directory" {
		t.Errorf("missing CA: exit %d, stdout %q, first line %q; want 2 and one line naming the flag and the file", code, out, first)
	}
}

func TestRunInsecureWarning(t *testing.T) {
	t.Setenv(passwordEnv, "")
	code, _, errs := runArgs(t, "snapshot", "-b", "127.0.0.1:1", "--timeout", "200ms", "--tls-insecure-skip-verify")
	lines := strings.Split(strings.TrimSpace(errs), "\n")
	if code != 1 || len(lines) != 2 || !strings.Contains(lines[0], "warning: TLS certificate NOT verified") {
		t.Errorf("exit %d, stderr %q; want 1, the warning then the error", code, errs)
	}
}
