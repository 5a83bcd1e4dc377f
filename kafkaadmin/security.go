package kafkaadmin

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/txnscope/txnscope/internal/inputfile"
)

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

// SASL mechanisms txnscope speaks, with Kafka's names.
const (
	Plain       = "PLAIN"
	ScramSHA256 = "SCRAM-SHA-256"
	ScramSHA512 = "SCRAM-SHA-512"
	OAuthBearer = "OAUTHBEARER"
)

// Mechanisms lists the SASL mechanisms txnscope speaks, for messages.
var Mechanisms = []string{Plain, ScramSHA256, ScramSHA512, OAuthBearer}

// SASL is one mechanism with its credentials.
type SASL struct {
	Mechanism string
	Username  string
	// Password is the password, or the static token for OAUTHBEARER.
	Password Secret
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
	if s.Username == "" {
		return "SASL " + s.Mechanism
	}
	return "SASL " + s.Mechanism + " as " + s.Username
}

// options turns s into the Kafka client's options. Its errors name the file
// or the mechanism at fault and never a credential.
func (s Security) options(dialTimeout time.Duration) ([]kgo.Opt, error) {
	var opts []kgo.Opt
	if s.TLS != nil {
		cfg, err := s.TLS.config()
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.Dialer(tlsDialer(cfg, dialTimeout)))
	}
	if s.SASL != nil {
		m, err := s.SASL.mechanism()
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.SASL(m))
	}
	return opts, nil
}

// Check reads and parses t's files and PEM text as creating a client will,
// so that a command line can refuse a bad one before anything connects.
func (t *TLS) Check() error {
	_, err := t.config()
	return err
}

// config builds the client side of the handshake. The broker's name is set
// per broker by the Kafka client when ServerName is empty.
func (t *TLS) config() (*tls.Config, error) {
	cfg := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		ServerName:         t.ServerName,
		InsecureSkipVerify: t.InsecureSkipVerify,
	}
	switch {
	case t.CAFile != "":
		data, err := inputfile.Read(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("TLS CA file %s: %w", t.CAFile, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(data) {
			return nil, fmt.Errorf("TLS CA file %s holds no PEM certificate", t.CAFile)
		}
		cfg.RootCAs = pool
	case len(t.CAPEM) > 0:
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(t.CAPEM) {
			return nil, errors.New("the inline TLS trusted certificates hold no PEM certificate")
		}
		cfg.RootCAs = pool
	}
	switch {
	case t.CertFile == "" && t.KeyFile == "" && (len(t.CertPEM) > 0 || t.KeyPEM != ""):
		pair, err := inlinePair(t.CertPEM, []byte(t.KeyPEM.Reveal()))
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{pair}
	case t.CertFile != "" && t.KeyFile == "":
		return nil, fmt.Errorf("TLS client certificate %s given without its key file", t.CertFile)
	case t.CertFile == "" && t.KeyFile != "":
		return nil, fmt.Errorf("TLS client key %s given without its certificate file", t.KeyFile)
	case t.CertFile != "":
		pair, err := keyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	if t.SkipHostnameCheck && !t.InsecureSkipVerify {
		// Go checks the chain and the name together; to check only the chain,
		// its own check is turned off and the chain verified here.
		roots := cfg.RootCAs
		cfg.InsecureSkipVerify = true
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			return verifyChain(cs, roots)
		}
	}
	return cfg, nil
}

// tlsDialer is the Kafka client's own TLS dialing (the server name is the
// host dialled unless set) with errors that say the TLS handshake failed: a
// plaintext listener just hangs up, and "connection reset by peer" alone
// does not tell an operator to look at TLS.
func tlsDialer(cfg *tls.Config, timeout time.Duration) func(context.Context, string, string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c := cfg.Clone()
		if c.ServerName == "" {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, fmt.Errorf("bad broker address %q: %w", addr, err)
			}
			c.ServerName = host
		}
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		raw, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		conn := tls.Client(raw, c)
		if err := conn.HandshakeContext(ctx); err != nil {
			raw.Close()
			var verr *tls.CertificateVerificationError
			if errors.As(err, &verr) || strings.Contains(err.Error(), "certificate") {
				return nil, err // the standard library's words are clear
			}
			return nil, fmt.Errorf("TLS handshake with %s failed (is this a TLS listener?): %w", addr, err)
		}
		return conn, nil
	}
}

func verifyChain(cs tls.ConnectionState, roots *x509.CertPool) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("tls: the broker sent no certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range cs.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{
		Roots:         roots,
		Intermediates: inter,
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	if err != nil {
		return fmt.Errorf("tls: failed to verify certificate: %w", err)
	}
	return nil
}

// keyPair reads a client certificate and key, which may share one file (as
// in a Java client's PEM keystore). The messages never quote the files'
// contents.
func keyPair(certFile, keyFile string) (tls.Certificate, error) {
	certPEM, err := inputfile.Read(certFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("TLS client certificate %s: %w", certFile, err)
	}
	keyPEM, err := inputfile.Read(keyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("TLS client key %s: %w", keyFile, err)
	}
	if encryptedKey(keyPEM) {
		return tls.Certificate{}, fmt.Errorf("TLS client key %s is encrypted, which txnscope does not read: "+
			"decrypt it (openssl pkcs8 -in %s -out key.pem) and keep that file private", keyFile, keyFile)
	}
	if !hasBlock(certPEM, func(t string) bool { return t == "CERTIFICATE" }) {
		return tls.Certificate{}, fmt.Errorf("TLS client certificate %s holds no PEM certificate", certFile)
	}
	if !hasBlock(keyPEM, func(t string) bool { return strings.HasSuffix(t, "PRIVATE KEY") }) {
		return tls.Certificate{}, fmt.Errorf("TLS client key %s holds no PEM private key", keyFile)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		// The standard library's messages say what is wrong (a key that does
		// not match the certificate, an unknown key type) without the key.
		return tls.Certificate{}, fmt.Errorf("TLS client certificate %s and key %s: %s", certFile, keyFile,
			strings.TrimPrefix(err.Error(), "tls: "))
	}
	return pair, nil
}

// inlinePair is keyPair for PEM text given inline.
func inlinePair(certPEM, keyPEM []byte) (tls.Certificate, error) {
	switch {
	case len(certPEM) == 0:
		return tls.Certificate{}, errors.New("an inline TLS client key is given without its certificate chain")
	case len(keyPEM) == 0:
		return tls.Certificate{}, errors.New("an inline TLS client certificate chain is given without its key")
	case encryptedKey(keyPEM):
		return tls.Certificate{}, errors.New("the inline TLS client key is encrypted, which txnscope does not read: decrypt it (openssl pkcs8)")
	case !hasBlock(certPEM, func(t string) bool { return t == "CERTIFICATE" }):
		return tls.Certificate{}, errors.New("the inline TLS client certificate chain holds no PEM certificate")
	case !hasBlock(keyPEM, func(t string) bool { return strings.HasSuffix(t, "PRIVATE KEY") }):
		return tls.Certificate{}, errors.New("the inline TLS client key holds no PEM private key")
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("the inline TLS client certificate and key: %s", strings.TrimPrefix(err.Error(), "tls: "))
	}
	return pair, nil
}

func hasBlock(data []byte, want func(string) bool) bool {
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return false
		}
		if want(b.Type) {
			return true
		}
	}
}

// encryptedKey reports a PKCS#8 encrypted key or a legacy OpenSSL one.
func encryptedKey(data []byte) bool {
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return false
		}
		if b.Type == "ENCRYPTED PRIVATE KEY" || strings.Contains(b.Headers["Proc-Type"], "ENCRYPTED") {
			return true
		}
	}
}

// mechanism builds franz-go's SASL mechanism from s.
func (s *SASL) mechanism() (sasl.Mechanism, error) {
	name := strings.ToUpper(strings.TrimSpace(s.Mechanism))
	pass := s.Password.Reveal()
	if name == OAuthBearer {
		if pass == "" {
			return nil, errors.New("SASL OAUTHBEARER needs a token")
		}
		return oauth.Auth{Token: pass}.AsMechanism(), nil
	}
	switch name {
	case Plain, ScramSHA256, ScramSHA512:
	case "GSSAPI":
		return nil, errors.New("SASL mechanism GSSAPI (Kerberos) is not supported: use PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER")
	default:
		return nil, fmt.Errorf("unknown SASL mechanism %q: want %s", s.Mechanism, strings.Join(Mechanisms, ", "))
	}
	if s.Username == "" {
		return nil, fmt.Errorf("SASL %s needs a username", name)
	}
	if pass == "" {
		return nil, fmt.Errorf("SASL %s needs a password", name)
	}
	switch name {
	case Plain:
		return plain.Auth{User: s.Username, Pass: pass}.AsMechanism(), nil
	case ScramSHA256:
		return scram.Auth{User: s.Username, Pass: pass}.AsSha256Mechanism(), nil
	default:
		return scram.Auth{User: s.Username, Pass: pass}.AsSha512Mechanism(), nil
	}
}
