// Package conn holds how to reach a Kafka cluster (TLS, SASL, bootstrap
// servers) as plain values, with the one parser of each fact. It speaks no
// Kafka and reads no file: the command line, the properties parser and
// kafkaadmin all share it, and only kafkaadmin turns it into a client.
package conn

import "strings"

// Security says how to encrypt and authenticate; the zero value is PLAINTEXT
// without authentication.
type Security struct {
	// TLS is nil for a plaintext connection.
	TLS *TLS
	// SASL is nil when the cluster does not ask for authentication.
	SASL *SASL
}

// TLS holds PEM file paths, read when the client is created (regular files
// of at most a few MiB: see internal/inputfile).
type TLS struct {
	CAFile   string // empty: the system roots
	CertFile string // client certificate for mutual TLS (with KeyFile)
	KeyFile  string
	// ServerName overrides the name checked in the broker's certificate
	// (empty: the host of the address dialled).
	ServerName string
	// InsecureSkipVerify accepts any broker certificate; the UI warns about it.
	InsecureSkipVerify bool
	// CAPEM, CertPEM and KeyPEM are PEM text given inline (a Java client's
	// ssl.truststore.certificates, ssl.keystore.certificate.chain and
	// ssl.keystore.key) instead of a file; a file, when given, wins.
	CAPEM   []byte
	CertPEM []byte
	KeyPEM  Secret
	// SkipHostnameCheck verifies the broker's certificate chain but not the
	// name in it: a Java client's ssl.endpoint.identification.algorithm set
	// to empty.
	SkipHostnameCheck bool
}

// SASL is one mechanism with its credentials.
type SASL struct {
	Mechanism string
	Username  string
	// Password is the password, or the static token for OAUTHBEARER.
	Password Secret
	// OAuth fetches OAUTHBEARER tokens from a token endpoint instead.
	OAuth *OAuth
	// Kerberos is GSSAPI's login.
	Kerberos *Kerberos
	// AWS is Amazon MSK's IAM login (AWS_MSK_IAM, or OAUTHBEARER with
	// the MSK library's callback handler).
	AWS *AWSIAM
}

// Secret is a string that never prints itself: fmt, logs and error messages
// see "[redacted]".
type Secret string

func (Secret) String() string   { return "[redacted]" }
func (Secret) GoString() string { return "[redacted]" }

// Reveal is the only way to the value, for the SASL exchange itself.
func (s Secret) Reveal() string { return string(s) }

// String describes s without any credential, so that a Security printed by
// mistake (even with a verb like %s that fmt would otherwise print field by
// field) shows no secret.
func (s Security) String() string {
	var parts []string
	if s.TLS != nil {
		parts = append(parts, "TLS")
	}
	if s.SASL != nil {
		parts = append(parts, s.SASL.String())
	}
	if len(parts) == 0 {
		return "PLAINTEXT"
	}
	return strings.Join(parts, ", ")
}

// String names the mechanism and user, never the password.
func (s SASL) String() string {
	if s.Kerberos != nil && s.Kerberos.Principal != "" {
		return "SASL " + s.Mechanism + " as " + s.Kerberos.Principal
	}
	if s.OAuth != nil && s.OAuth.ClientID != "" {
		return "SASL " + s.Mechanism + " as client " + s.OAuth.ClientID
	}
	if s.Username == "" {
		return "SASL " + s.Mechanism
	}
	return "SASL " + s.Mechanism + " as " + s.Username
}

// Clone copies s's TLS and SASL settings, so that settings layered on top
// (flags over a properties file) do not write into the values they start from.
func (s Security) Clone() Security {
	if s.TLS != nil {
		t := *s.TLS
		s.TLS = &t
	}
	if s.SASL != nil {
		a := *s.SASL
		if a.OAuth != nil {
			o := *a.OAuth
			a.OAuth = &o
		}
		if a.Kerberos != nil {
			k := *a.Kerberos
			a.Kerberos = &k
		}
		if a.AWS != nil {
			w := *a.AWS
			a.AWS = &w
		}
		s.SASL = &a
	}
	return s
}

// Insecure reports TLS that accepts any broker certificate, which every
// screen and command warns about.
func (s Security) Insecure() bool {
	return s.TLS != nil && s.TLS.InsecureSkipVerify
}
