package clientprops

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// FuzzParse reads arbitrary text followed by SASL and TLS settings holding
// password: nothing panics, a parsed password comes back exactly, and no
// error shows it.
func FuzzParse(f *testing.F) {
	f.Add("bootstrap.servers=b:9092\nsecurity.protocol=SASL_SSL\nsasl.mechanism=PLAIN\n", "hunter2-hunter2")
	f.Add("ssl.truststore.type=PEM\nssl.truststore.location=ca.pem\n", `pa"ss\word;=`)
	f.Add("ssl.keystore.type=PEM\nssl.keystore.location=k.pem\n", "p\\u00e9\n#not-a-comment")
	f.Add("k=\\u00zz\n", "Sup3r-S3cret")
	f.Fuzz(func(t *testing.T, prefix, password string) {
		if _, err := Parse(prefix); err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("error spans lines: %q", err)
		}
		ParseText(prefix)
		if !utf8.ValidString(password) {
			return
		}
		c, err := ParseText(withSecrets(prefix, password))
		if err != nil {
			// The same text with another password: what the message says about
			// it is the message's own words, not the password.
			_, other := ParseText(withSecrets(prefix, "zq"))
			if password != "" && strings.Contains(err.Error(), password) && (other == nil || !strings.Contains(other.Error(), password)) {
				t.Fatalf("error shows the password %q: %v", password, err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		s := c.Security.SASL
		if s == nil || s.Mechanism != "PLAIN" || s.Username != "fuzz-user" || s.Password.Reveal() != password {
			t.Fatalf("the jaas password did not come back: %+v", s)
		}
	})
}

// withSecrets appends settings holding password to text. A blank line first
// ends any continuation the text leaves open.
func withSecrets(text, password string) string {
	jaas := `org.apache.kafka.common.security.plain.PlainLoginModule required username="fuzz-user" password="` +
		strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(password) + `";`
	return text + "\n\n" +
		"security.protocol=SASL_SSL\n" +
		"sasl.mechanism=PLAIN\n" +
		"sasl.jaas.config=" + escape(jaas) + "\n" +
		"ssl.truststore.password=" + escape(password) + "\n" +
		"ssl.keystore.password=" + escape(password) + "\n"
}

// escape writes every character but letters and digits as \uXXXX.
func escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case r > 0xffff:
			hi, lo := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, hi, lo)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}
