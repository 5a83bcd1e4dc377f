package conn

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

const password = "Pa55-w0rd-never-shown"

func TestSecretNeverPrints(t *testing.T) {
	s := SASL{Mechanism: Plain, Username: "alice", Password: password}
	tls := TLS{KeyPEM: password}
	var b strings.Builder
	for _, f := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
		io.WriteString(&b, strings.ReplaceAll(fmt.Sprintf(f, s), "\n", " "))
		io.WriteString(&b, fmt.Sprintf(f, &Security{SASL: &s}))
		io.WriteString(&b, fmt.Sprintf(f, tls))
		io.WriteString(&b, fmt.Sprintf(f, Secret(password)))
	}
	if strings.Contains(b.String(), password) {
		t.Errorf("formatting shows the password: %s", b.String())
	}
	if got := Secret(password).Reveal(); got != password {
		t.Errorf("Reveal = %q", got)
	}
}

func TestSecurityString(t *testing.T) {
	for _, c := range []struct {
		sec  Security
		want string
	}{
		{Security{}, "PLAINTEXT"},
		{Security{TLS: &TLS{}}, "TLS"},
		{Security{SASL: &SASL{Mechanism: OAuthBearer, Password: password}}, "SASL OAUTHBEARER"},
		{Security{TLS: &TLS{}, SASL: &SASL{Mechanism: ScramSHA512, Username: "bob", Password: password}}, "TLS, SASL SCRAM-SHA-512 as bob"},
	} {
		if got := c.sec.String(); got != c.want {
			t.Errorf("%#v: String = %q, want %q", c.sec, got, c.want)
		}
	}
}

func TestClone(t *testing.T) {
	orig := Security{TLS: &TLS{CAFile: "ca.pem"}, SASL: &SASL{Mechanism: Plain, Username: "u"}}
	c := orig.Clone()
	c.TLS.CAFile, c.SASL.Username = "other.pem", "v"
	if orig.TLS.CAFile != "ca.pem" || orig.SASL.Username != "u" {
		t.Errorf("changing the clone changed the original: %+v %+v", *orig.TLS, *orig.SASL)
	}
	if z := (Security{}).Clone(); z.TLS != nil || z.SASL != nil {
		t.Errorf("clone of PLAINTEXT = %v", z)
	}
}

func TestInsecure(t *testing.T) {
	for _, c := range []struct {
		sec  Security
		want bool
	}{
		{Security{}, false},
		{Security{TLS: &TLS{}}, false},
		{Security{TLS: &TLS{SkipHostnameCheck: true}}, false},
		{Security{TLS: &TLS{InsecureSkipVerify: true}}, true},
	} {
		if got := c.sec.Insecure(); got != c.want {
			t.Errorf("%v Insecure = %v, want %v", c.sec, got, c.want)
		}
	}
}
